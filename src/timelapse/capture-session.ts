// One print's timelapse capture: numbered frames from the camera, taken strictly in order off the streaming path,
// the z-change and timed triggers, and the end of the job (post roll, then the render request) — docs/reference/timelapse.md §5.
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import { fetchSnapshot, type SnapshotOptions } from './snapshot.ts';
import type { TimelapseConfig } from './timelapse-config.ts';

export interface SessionDeps {
  events: EventBus;
  logger: Logger;
  framesDir: string;
  camera: () => SnapshotOptions;
  monotonic: () => number;
}

type Active = Exclude<TimelapseConfig, { type: 'off' }>;

export class CaptureSession {
  /** Frames written so far; the next frame's number (failed captures leave no gap). */
  private frames = 0;
  private failures = 0;
  private attempts = 0;
  private lastCapture = -Infinity;
  private queue: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** Frames queued and not yet taken: a camera slower than the triggers drops frames instead of piling them up. */
  private pending = 0;
  private lastFailed = false;
  private folderReady = false;
  /** Aborted by close(): frames under way or queued are given up. */
  private readonly closing = new AbortController();

  constructor(
    readonly prefix: string,
    readonly gcode: string,
    readonly config: Active,
    /** Layer frames come from the stabiliser's parking, not from ZChange. */
    readonly stabilized: boolean,
    private readonly deps: SessionDeps,
  ) {}

  get active(): boolean { return !this.stopped; }
  /** The last frame failed (the camera is down or slow). */
  get failing(): boolean { return this.lastFailed; }
  /** Frames queued and not taken yet. */
  get queued(): number { return this.pending; }

  start(): void {
    if (this.config.type === 'timed') {
      void this.capture();
      this.timer = setInterval(() => { if (this.pending === 0) void this.capture(); }, this.config.interval * 1000);
      this.timer.unref();
    }
  }

  /** ZChange of a sent G0/G1: the retraction hop and anything within minDelay of the last frame are skipped. */
  onZChange(z: number, old: number | null): void {
    if (this.stopped || this.config.type !== 'zchange' || this.stabilized) return;
    const hop = this.config.retractionZHop;
    if (hop !== 0 && old !== null && Math.round(Math.abs(z - old) * 1000) === Math.round(hop * 1000)) return;
    // Layers queue their frames (as 1.9.3), except while the camera is failing: a dead camera would otherwise leave
    // a backlog of timeouts that delays the end of the job by minutes.
    if ((this.pending > 0 && this.lastFailed) || !this.takeLayerSlot()) return;
    void this.capture();
  }

  /** minDelay ("anti vase mode"): true when a layer frame may be taken now (and counts it as taken). */
  takeLayerSlot(): boolean {
    if (this.config.type !== 'zchange' || this.stopped) return false;
    const now = this.deps.monotonic();
    if (now - this.lastCapture < this.config.minDelay * 1000) return false;
    this.lastCapture = now;
    return true;
  }

  /** Queues one frame; resolves true when it was written. */
  capture(): Promise<boolean> {
    this.attempts++;
    this.pending++;
    const run = this.queue.then(() => this.takeFrame()).finally(() => { this.pending--; });
    this.queue = run;
    return run;
  }

  private async takeFrame(): Promise<boolean> {
    const { events, logger } = this.deps;
    const file = join(this.deps.framesDir, `${this.prefix}-${this.frames}.jpg`);
    const camera = this.deps.camera();
    if (this.closing.signal.aborted) return false;
    events.emit('CaptureStart', { file });
    try {
      // The folder setting may have changed since the server started.
      if (!this.folderReady) this.folderReady = await mkdir(this.deps.framesDir, { recursive: true }).then(() => true);
      await fetchSnapshot(camera, file, this.closing.signal);
    } catch (err) {
      if (this.closing.signal.aborted) return false;
      this.failures++;
      this.lastFailed = true;
      const error = (err as Error).message;
      logger.warn({ file, error }, 'timelapse: snapshot failed');
      events.emit('CaptureFailed', { file, error, webcamDisplay: 'Classic Webcam', snapshotDisplay: camera.url, webcamProvider: 'classicwebcam' });
      return false;
    }
    this.frames++;
    this.lastFailed = false;
    events.emit('CaptureDone', { file });
    return true;
  }

  /** Stops capturing without rendering (config changed mid-job): the frames stay as an unrendered job. */
  abandon(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** The server is stopping: no more frames, and the one being fetched is given up. */
  close(): void {
    this.abandon();
    this.closing.abort(new Error('Gantry is stopping'));
  }

  /**
   * The job ended: behind every pending frame, the post roll (one more frame repeated postRoll × fps times). Resolves
   * with whether there is anything to render; a job whose every capture failed reports MovieFailed `no_frames`.
   */
  finish(): Promise<boolean> {
    this.abandon();
    const run = this.queue.then(async () => {
      if (this.frames === 0) {
        if (this.failures > 0) {
          this.deps.events.emit('MovieFailed', { gcode: this.gcode, movie: 'n/a', movie_basename: 'a', movie_prefix: this.prefix,
            returncode: 0, out: '', error: '', reason: 'no_frames' });
        }
        return false;
      }
      const { postRoll, fps } = this.config;
      if (postRoll > 0) {
        this.deps.events.emit('PostRollStart', { postroll_duration: null, postroll_length: postRoll, postroll_fps: fps });
        const last = this.frames;
        if (await this.takeFrame()) {
          const source = join(this.deps.framesDir, `${this.prefix}-${last}.jpg`);
          for (let i = 0; i < postRoll * fps; i++) {
            await copyFile(source, join(this.deps.framesDir, `${this.prefix}-${this.frames}.jpg`));
            this.frames++;
          }
        }
        this.deps.events.emit('PostRollEnd', {});
      }
      return true;
    });
    this.queue = run;
    return run;
  }

  /** Frames written (post roll copies included). */
  get frameCount(): number { return this.frames; }
  get captureAttempts(): number { return this.attempts; }
}
