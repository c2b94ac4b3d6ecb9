// The timelapse service: the current config (configure step, save), one capture session per print driven by the
// event bus, stabilised snapshots through the printer's line injector, the render queue, and the folder operations
// behind /api/timelapse.
import { mkdir } from 'node:fs/promises';
import { removeFile } from '../core/atomic-file.ts';
import { join, resolve } from 'node:path';
import type { ConfigSlice } from '../config/config-slice.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import type { Clock } from '../core/clock.ts';
import { conflict, invalid } from '../core/errors.ts';
import type { LineInjector } from '../printer/job/job-stream.ts';
import { CaptureSession } from './capture-session.ts';
import { checkFfmpegPath } from './ffmpeg.ts';
import { Renderer, type MoviePayload } from './renderer.ts';
import { Stabilizer } from './stabilizer.ts';
import { OFF, configFromRequest, configFromSettings, pushPayload, settingsFromConfig, type TimelapseConfig } from './timelapse-config.ts';
import { Listeners } from '../core/listeners.ts';
import {
  cleanOldFrames, deleteFrames, folderMtime, isMovieName, isPlainName, isThumbnailName, listFrameGroups, listMovies,
  thumbnailOf, type MovieEntry,
} from './timelapse-folders.ts';

/** What the service needs of the printer: the hook into streamed jobs. */
export interface InjectorHost {
  setLineInjector(injector: LineInjector | null): void;
}

export interface TimelapseDeps {
  config: ConfigSlice<'webcam' | 'folder' | 'feature'>;
  events: EventBus;
  logger: Logger;
  clock: Clock;
  /** The movies folder (folder.timelapse resolved). */
  moviesDir: string;
  baseDir: string;
  printer: InjectorHost;
  /** A job is printing or paused (manual renders wait for the printer). */
  printing: () => boolean;
}

export interface UnrenderedEntry {
  name: string; count: number; bytes: number; size: string; date: string;
  recording: boolean; rendering: boolean; processing: boolean;
}

type Listener<T> = (v: T) => void;

export class TimelapseService {
  private config: TimelapseConfig = OFF;
  private session: CaptureSession | null = null;
  /** Prefixes whose capture (post roll included) is still running. */
  private readonly recording = new Set<string>();
  /** Unrendered jobs whose frames are being deleted: rendering one now would make a movie of what is left. */
  private readonly deleting = new Set<string>();
  private stabilizer: Stabilizer | null = null;
  private readonly renderer: Renderer;
  private readonly configListeners = new Listeners<[TimelapseConfig]>();
  private readonly progressListeners = new Listeners<[number]>();
  private configuring: Promise<unknown> = Promise.resolve();
  /** Sessions of ended jobs still taking their last frames, and when they are through. */
  private readonly finishing = new Map<CaptureSession, Promise<unknown>>();
  private readonly owner = 'timelapse';
  private unwatch: (() => void) | null = null;

  constructor(private readonly deps: TimelapseDeps) {
    this.renderer = new Renderer({
      events: deps.events, logger: deps.logger, webcam: () => deps.config.get().webcam,
      moviesDir: () => deps.moviesDir, framesDir: () => this.framesDir(),
      progress: (p) => this.progressListeners.emit(p),
    });
  }

  /** folder.timelapse_tmp, else `<timelapse>/tmp`. */
  framesDir(): string {
    const configured = this.deps.config.get().folder.timelapse_tmp;
    return configured ? resolve(this.deps.baseDir, configured) : join(this.deps.moviesDir, 'tmp');
  }

  get moviesDir(): string { return this.deps.moviesDir; }

  async start(): Promise<void> {
    await mkdir(this.framesDir(), { recursive: true });
    const { events } = this.deps;
    events.on(this.owner, 'PrintStarted', (p) => this.onStarted(p.name, p.origin));
    events.on(this.owner, 'PrintResumed', (p) => { if (this.session === null) this.onStarted(p.name, p.origin); });
    events.on(this.owner, 'PrintDone', () => this.onEnded(''));
    events.on(this.owner, 'PrintFailed', () => this.onEnded('-fail'));
    events.on(this.owner, 'ZChange', (p) => this.session?.onZChange(p.new, p.old));
    // The stabiliser follows its settings at once; the timelapse type only through the configure step (as 1.9.3).
    this.unwatch = this.deps.config.onChange((now, before) => {
      if (JSON.stringify(now.webcam.stabilize) !== JSON.stringify(before.webcam.stabilize)) this.updateInjector();
    });
    const saved = configFromSettings(this.deps.config.get().webcam.timelapse);
    const problem = saved.type === 'off' ? null : await this.precondition();
    if (problem !== null) this.deps.logger.warn({ problem }, 'timelapse: saved config not applied, capture is off');
    this.apply(problem === null ? saved : OFF);
  }

  async stop(): Promise<void> {
    this.deps.events.removeOwner(this.owner);
    this.unwatch?.();
    for (const session of [this.session, ...this.finishing.keys()]) session?.close();
    this.session = null;
    this.deps.printer.setLineInjector(null);
    await Promise.allSettled([...this.finishing.values()]);
    await this.renderer.stop();
  }

  current(): TimelapseConfig { return this.config; }
  enabled(): boolean { return this.deps.config.get().webcam.timelapseEnabled; }
  pushPayload(): Record<string, unknown> | null { return pushPayload(this.config); }
  /** The render under way (for a push client registering meanwhile). */
  rendering(): (MoviePayload & { prefix: string }) | null { return this.renderer.current(); }

  onConfig(fn: Listener<TimelapseConfig>): () => void {
    return this.configListeners.add(fn);
  }

  onRenderProgress(fn: Listener<number>): () => void {
    return this.progressListeners.add(fn);
  }

  /** Why a capturing config cannot work, or null. */
  private async precondition(): Promise<string | null> {
    const w = this.deps.config.get().webcam;
    if (!w.snapshot) return 'Timelapse needs a camera: set webcam.snapshotUrl to the snapshot URL of the webcam';
    try {
      await checkFfmpegPath(w.ffmpeg);
    } catch (err) {
      return (err as Error).message;
    }
    return null;
  }

  /**
   * POST /api/timelapse: builds the new config from the body (undefined `type`: nothing changes), checks that it can
   * work (a clear 400 when ffmpeg or the snapshot URL are missing), applies it and, with `save`, writes it.
   */
  configure(body: Record<string, unknown>, save: boolean): Promise<TimelapseConfig> {
    const run = this.configuring.then(async () => {
      const next = configFromRequest(body);
      if (next === undefined) return this.config;
      let effective = next;
      if (next.type !== 'off') {
        if (!this.enabled()) effective = OFF;
        else {
          const problem = await this.precondition();
          if (problem !== null) throw invalid(problem);
        }
      }
      if (save) await this.deps.config.patch({ webcam: { timelapse: settingsFromConfig(effective) } });
      this.apply(effective);
      return this.config;
    });
    this.configuring = run.catch(() => {});
    return run;
  }

  private apply(next: TimelapseConfig): void {
    if (this.session !== null) {
      // 1.9.3 unloads a running timelapse without rendering; its frames stay as an unrendered job.
      this.session.abandon();
      this.recording.delete(this.session.prefix);
      this.session = null;
      this.stabilizer = null;
    }
    this.config = next;
    this.updateInjector();
    this.configListeners.emit(next);
  }

  private stabilizing(): boolean {
    return this.config.type === 'zchange' && this.deps.config.get().webcam.stabilize.enabled;
  }

  /** The injector stays off the job path unless stabilised snapshots can happen. */
  private updateInjector(): void {
    this.deps.printer.setLineInjector(this.stabilizing() ? (line) => this.stabilizer?.inject(line) ?? null : null);
  }

  private onStarted(gcode: string, origin: string): void {
    const config = this.config;
    if (config.type === 'off') return;
    const stamp = localStamp(new Date(this.deps.clock.now()));
    const prefix = `${gcode.replace(/\.[^.]*$/, '')}_${stamp}`;
    const stabilized = this.stabilizing() && origin === 'local';
    const session = new CaptureSession(prefix, gcode, config, stabilized, {
      events: this.deps.events, logger: this.deps.logger, framesDir: this.framesDir(), monotonic: () => this.deps.clock.monotonic(),
      camera: () => {
        const w = this.deps.config.get().webcam;
        return { url: w.snapshot, timeout: w.snapshotTimeout, validateSsl: w.snapshotSslValidation };
      },
    });
    this.session = session;
    this.recording.add(prefix);
    this.stabilizer = stabilized ? this.newStabilizer(session) : null;
    session.start();
  }

  private newStabilizer(session: CaptureSession): Stabilizer {
    const c = this.deps.config.get();
    const s = c.webcam.stabilize;
    return new Stabilizer({
      park: { x: s.x, y: s.y, retract: s.retract, retractSpeed: s.retractSpeed, lift: s.lift, zSpeed: s.zSpeed, travelSpeed: s.travelSpeed },
      g90InfluencesExtruder: c.feature.g90InfluencesExtruder,
      onLayer: () => {
        if (this.session !== session || !session.takeLayerSlot()) return null;
        // A failing camera does not get to hold the print at every layer: the frame is tried where the head is, and
        // parking resumes once a frame succeeds again.
        if (session.failing) {
          if (session.queued === 0) void session.capture();
          return null;
        }
        return () => this.parkedFrame(session);
      },
    });
  }

  /** While the head is parked: settle, take the frame; bounded so a dead camera holds the print for the timeout only. */
  private async parkedFrame(session: CaptureSession): Promise<void> {
    const w = this.deps.config.get().webcam;
    await sleep(w.stabilize.delay);
    const limit = (Math.max(1, w.snapshotTimeout) + 2) * 1000;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([session.capture(), new Promise((r) => { timer = setTimeout(r, limit); })]);
    clearTimeout(timer);
  }

  private onEnded(postfix: '' | '-fail'): void {
    const session = this.session;
    if (session === null) return;
    this.session = null;
    this.stabilizer = null;
    const p = session.finish().then((render) => {
      this.recording.delete(session.prefix);
      if (!render || !this.rendersAfter(postfix)) return;
      void this.renderer.render({ prefix: session.prefix, gcode: session.gcode, postfix, fps: session.config.fps });
    }).catch((err: unknown) => this.deps.logger.error({ err }, 'timelapse: finishing the capture failed'))
      .finally(() => this.finishing.delete(session));
    this.finishing.set(session, p);
  }

  private rendersAfter(postfix: string): boolean {
    const when = this.deps.config.get().webcam.renderAfterPrint;
    return when === 'always' || (when === 'success' && postfix === '') || (when === 'failure' && postfix !== '');
  }

  /** Resolves once captures of ended jobs and the queued renders are through (tests, shutdown). */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.finishing.values()]);
    await this.renderer.idle();
  }

  // ------------------------------------------------------------------------------------------------ folders / API

  listMovies(urlPrefix: string): Promise<MovieEntry[]> {
    return listMovies(this.deps.moviesDir, urlPrefix);
  }

  /** Unrendered jobs, after the age cleanup (which runs only here, as in 1.9.3). */
  async listUnrendered(): Promise<UnrenderedEntry[]> {
    const days = this.deps.config.get().webcam.cleanTmpAfterDays;
    await cleanOldFrames(this.framesDir(), days, this.deps.clock.now(),
      (prefix) => this.deps.logger.info({ prefix }, `Deleted old unrendered timelapse ${prefix}`));
    return (await listFrameGroups(this.framesDir())).map((g) => {
      const recording = this.recording.has(g.name);
      const rendering = this.renderer.isRendering(g.name);
      return { name: g.name, count: g.count, bytes: g.bytes, size: g.size, date: g.date, recording, rendering, processing: recording || rendering };
    });
  }

  /** Latest change of the folders a listing reads (ETag / Last-Modified). */
  async mtime(withFrames: boolean): Promise<number> {
    const m = await folderMtime(this.deps.moviesDir);
    return withFrames ? Math.max(m, await folderMtime(this.framesDir())) : m;
  }

  /** Deletes a movie and its thumbnail; names that are not movies, or missing files, are quietly left alone. */
  async deleteMovie(name: string): Promise<void> {
    if (!isMovieName(name)) return;
    await removeFile(join(this.deps.moviesDir, name));
    await removeFile(join(this.deps.moviesDir, thumbnailOf(name))).catch((err: unknown) => {
      this.deps.logger.warn({ err, name }, 'timelapse: deleting the thumbnail failed');
    });
  }

  /** Path of a movie or thumbnail that may be downloaded, or null. */
  downloadPath(name: string): string | null {
    return isMovieName(name) || isThumbnailName(name) ? join(this.deps.moviesDir, name) : null;
  }

  async deleteUnrendered(name: string): Promise<void> {
    if (!isPlainName(name)) return;
    if (this.recording.has(name) || this.renderer.isRendering(name)) throw conflict('Timelapse is being recorded or rendered, cannot delete it');
    this.deleting.add(name);
    try {
      await deleteFrames(this.framesDir(), name);
    } finally {
      this.deleting.delete(name);
    }
  }

  /** Renders an unrendered job in the background (saved fps, gcode `unknown`, no postfix — as 1.9.3). */
  renderUnrendered(name: string): void {
    if (this.deps.printing()) throw conflict('Printer is currently printing, cannot render timelapse');
    if (!isPlainName(name)) throw invalid('name is invalid');
    if (this.recording.has(name) || this.renderer.isRendering(name)) throw conflict('Timelapse is being recorded or rendered already');
    if (this.deleting.has(name)) throw conflict('Timelapse is being deleted, cannot render it');
    const fps = configFromSettings(this.deps.config.get().webcam.timelapse);
    void this.renderer.render({ prefix: name, gcode: 'unknown', postfix: '', fps: fps.type === 'off' ? this.deps.config.get().webcam.timelapse.fps : fps.fps });
  }
}

function localStamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

