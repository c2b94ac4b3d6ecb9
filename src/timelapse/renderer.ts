// Rendering queue: one ffmpeg at a time, jobs in order; each writes a hidden file renamed when done, makes the
// thumbnail, removes the frames and reports MovieRendering / renderProgress / MovieDone or MovieFailed (docs/reference/timelapse.md §6).
import { access, rename, unlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Config } from '../config/schema.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import { WATERMARK, containerFor, filterString, runFfmpeg } from './ffmpeg.ts';
import { THUMBNAIL_PLACEHOLDERS, expandCommandline } from './ffmpeg-template.ts';
import { deleteFrames, thumbnailOf } from './timelapse-folders.ts';
import { syncFile, syncFolder } from '../core/atomic-file.ts';

export interface RenderRequest {
  prefix: string;
  /** The printed file's name, or `unknown` for renders started by hand. */
  gcode: string;
  /** `-fail` for failed prints. */
  postfix: string;
  fps: number;
}

export interface MoviePayload {
  gcode: string;
  movie: string;
  movie_basename: string;
  movie_prefix: string;
}

export interface RendererDeps {
  events: EventBus;
  logger: Logger;
  webcam: () => Config['webcam'];
  moviesDir: () => string;
  framesDir: () => string;
  progress: (percent: number) => void;
}

export class Renderer {
  private chain: Promise<void> = Promise.resolve();
  /** Prefixes queued or rendering. */
  private readonly pending = new Set<string>();
  private running: (MoviePayload & { prefix: string }) | null = null;
  /** Aborted on shutdown: a running ffmpeg is killed (its frames stay unrendered) and queued renders are dropped. */
  private readonly shutdown = new AbortController();

  constructor(private readonly deps: RendererDeps) {}

  /** Queues a render; resolves when it has finished (either way). */
  render(job: RenderRequest): Promise<void> {
    this.pending.add(job.prefix);
    const run = this.chain.then(() => this.run(job)).catch((err: unknown) => {
      this.deps.logger.error({ err, prefix: job.prefix }, 'timelapse render failed unexpectedly');
    }).finally(() => this.pending.delete(job.prefix));
    this.chain = run;
    return run;
  }

  isRendering(prefix: string): boolean {
    return this.pending.has(prefix);
  }

  /** The render under way, for a push client registering meanwhile. */
  current(): (MoviePayload & { prefix: string }) | null {
    return this.running;
  }

  /** Kills a running render and drops the queued ones; their frames stay as unrendered jobs. */
  async stop(): Promise<void> {
    this.shutdown.abort();
    await this.chain;
  }

  /** Resolves once every queued render has finished. */
  idle(): Promise<void> {
    return this.chain;
  }

  private async run(job: RenderRequest): Promise<void> {
    if (this.shutdown.signal.aborted) return;
    const { events, logger } = this.deps;
    const w = this.deps.webcam();
    const codec = w.ffmpegVideoCodec || 'libx264';
    const name = `${job.prefix}${job.postfix}.${containerFor(codec).ext}`;
    const dir = this.deps.moviesDir();
    const frames = this.deps.framesDir();
    const movie = join(dir, name);
    const temp = join(dir, `.${name}`);
    const payload: MoviePayload = { gcode: job.gcode, movie, movie_basename: name, movie_prefix: job.prefix };
    const failed = (extra: Record<string, unknown>) => events.emit('MovieFailed', { ...payload, ...extra });

    let hasFrames = false;
    for (let i = 0; i < 4 && !hasFrames; i++) hasFrames = await access(join(frames, `${job.prefix}-${i}.jpg`)).then(() => true, () => false);
    if (!hasFrames) {
      logger.warn({ prefix: job.prefix }, 'timelapse: no frames to render');
      failed({ returncode: 0, out: '', error: '', reason: 'no_frames' });
      return;
    }
    const ffmpeg = w.ffmpeg;
    this.running = { ...payload, prefix: job.prefix };
    events.emit('MovieRendering', payload);
    try {
      if (!ffmpeg) {
        failed({ returncode: 255, out: [], error: ['webcam.ffmpegPath is not set\n'], reason: 'returncode' });
        return;
      }
      let argv: string[];
      try {
        // webcam.ffmpegCommandline (OctoPrint's default unless changed), each value one argument.
        argv = expandCommandline(w.ffmpegCommandline, {
          ffmpeg, fps: String(job.fps > 0 ? job.fps : 25), input: join(frames, `${job.prefix.replace(/%/g, '%%')}-%d.jpg`), output: temp,
          videocodec: codec, threads: String(w.ffmpegThreads > 0 ? w.ffmpegThreads : 1), bitrate: w.bitrate || '10000k',
          containerformat: containerFor(codec).format,
          filters: filterString({ watermark: w.watermark ? WATERMARK : null, flipH: w.flipH, flipV: w.flipV, rotate90: w.rotate90 }),
        });
      } catch (err) {
        // Checked when set through the API; a hand-edited config.yaml can still hold a broken one.
        const message = `webcam.ffmpegCommandline: ${(err as Error).message}\n`;
        logger.error({ prefix: job.prefix, template: w.ffmpegCommandline }, `timelapse: ${message.trim()}`);
        failed({ returncode: 255, out: [], error: [message], reason: 'returncode' });
        return;
      }
      const [binary, ...args] = argv;
      logger.info({ binary, args }, 'timelapse: rendering');
      let result;
      try {
        result = await runFfmpeg(binary, args, (p) => this.deps.progress(p), this.shutdown.signal);
      } catch (err) {
        const message = `${(err as Error).message}\n`;
        logger.error({ err, prefix: job.prefix }, 'timelapse: ffmpeg could not be started');
        failed({ returncode: 255, out: [], error: [message], reason: 'returncode' });
        return;
      }
      if (result.code !== 0) {
        logger.error({ prefix: job.prefix, returncode: result.code, stderr: result.stderr.join('') }, 'timelapse: ffmpeg failed, frames kept');
        failed({ returncode: result.code, out: result.stdout, error: result.stderr, reason: 'returncode' });
        return;
      }
      // The frames go next: the movie must be on disk first, or a power cut could leave neither.
      await syncFile(temp);
      await rename(temp, movie);
      await syncFolder(dir);
      const thumb = await Promise.resolve()
        .then(() => expandCommandline(w.ffmpegThumbnailCommandline, { ffmpeg, input: movie, output: thumbnailOf(movie) }, THUMBNAIL_PLACEHOLDERS))
        .then(([bin, ...rest]) => runFfmpeg(bin, rest))
        .catch((err: unknown) => ({ code: -1, stderr: [String(err)] }));
      if (thumb.code !== 0) logger.warn({ movie, stderr: thumb.stderr.join('') }, 'timelapse: thumbnail failed');
      await deleteFrames(frames, job.prefix);
      logger.info({ movie: basename(movie) }, 'timelapse: rendered');
      events.emit('MovieDone', payload);
    } catch (err) {
      logger.error({ err, prefix: job.prefix }, 'timelapse: render failed');
      failed({ returncode: 255, out: 'Unknown error', error: 'Unknown error', reason: 'unknown' });
    } finally {
      await unlink(temp).catch(() => {});
      this.running = null;
    }
  }
}
