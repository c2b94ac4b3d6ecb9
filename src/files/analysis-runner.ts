// Runs analyses of stored files through the analysis queue and keeps the results in metadata: honours
// `gcodeAnalysis.runAt` (never / idle / always), interrupts and re-queues work when a print starts, emits
// MetadataAnalysisStarted/Finished and reports the progress of long analyses.
import type { EventBus } from '../core/event-bus.ts';
import { readThumbnail, thumbnailRef, THUMBNAIL_SRC } from './analysis/thumbnails.ts';
import type { Logger } from '../core/logger.ts';
import type { LocalStorage } from './local-storage.ts';
import { ANALYSER_VERSION, type AnalysisOptions, type AnalysisProgress, type GcodeAnalysis } from './analysis/types.ts';
import { isGcode } from './file-types.ts';
import { joinPath } from './safe-path.ts';
import { contentKey } from './metadata-store.ts';
import type { StoredEntry } from './types.ts';

/** The part of the analysis queue this runner uses (AnalysisQueue satisfies it). */
export interface Analyser {
  analyse(path: string, options?: AnalysisOptions, onProgress?: AnalysisProgress): Promise<GcodeAnalysis>;
  cancel(path: string): number;
  /** How many analyses it runs at once: the runner starts no more than that (see pump). */
  readonly capacity: number;
}

interface Deps {
  storage: LocalStorage;
  events: EventBus;
  logger: Logger;
  analyser?: Analyser;
  options?: () => AnalysisOptions;
  runAt: () => 'never' | 'idle' | 'always';
  isPrinting: () => boolean;
  /** Progress of a running analysis, at most every PROGRESS_EVERY_MS per file. */
  progress?: (p: AnalysisProgressReport) => void;
}

export interface AnalysisProgressReport { origin: 'local'; path: string; name: string; progress: number }

/** A long analysis reports its progress this often at most (the worker reports every chunk it reads). */
const PROGRESS_EVERY_MS = 250;

function analyserVersion(analysis: Record<string, unknown>): unknown {
  const extras = analysis.gantry;
  return typeof extras === 'object' && extras !== null ? (extras as { analyserVersion?: unknown }).analyserVersion : undefined;
}

/** Cancelled (print started, file deleted, shutdown) rather than failed: worth running again. */
const isCancelled = (err: unknown): boolean => err instanceof Error && err.name === 'AnalysisCancelledError';

export class AnalysisRunner {
  /** Paths waiting to be analysed, with whether the user forced it. */
  private readonly waiting = new Map<string, boolean>();
  /** The forced ones among them, looked at first (a backlog of thousands is not walked for them). */
  private readonly waitingForced = new Set<string>();
  private readonly running = new Set<string>();
  /** Fraction done of each running analysis. */
  private readonly progressOf = new Map<string, number>();
  /** `path@size:mtime` of content whose analysis failed: not retried on its own (a forced analysis still runs). */
  private readonly failed = new Set<string>();
  private stopped = false;

  constructor(private readonly deps: Deps) {}

  get available(): boolean {
    return this.deps.analyser !== undefined;
  }

  stop(): void {
    this.stopped = true;
    this.waiting.clear();
    this.waitingForced.clear();
    for (const p of this.running) this.deps.analyser?.cancel(this.deps.storage.abs(p.split('/')));
  }

  queue(parts: string[], force = false): void {
    if (!this.deps.analyser || !isGcode(parts[parts.length - 1] ?? '')) return;
    if (!force && this.deps.runAt() === 'never') return;
    const path = joinPath(parts);
    this.waiting.set(path, force || (this.waiting.get(path) ?? false));
    if (force) this.waitingForced.add(path);
    this.pump();
  }

  /**
   * Walks the whole tree and queues what queueMissing finds: files that arrived behind our back, or whose metadata was
   * lost. The walk hashes every file it has no hash for, so it runs once the server answers: during start-up it held
   * a library of 10,000 such files to 2.1 s before its first answer instead of 0.8 s.
   */
  queueBacklog(): void {
    void this.deps.storage.list(Infinity).then((entries) => this.queueMissing(entries)).catch(() => {});
  }

  /**
   * Queues every gcode file that has no analysis yet (start-up, lost metadata), or one made by an older analyser
   * (ANALYSER_VERSION is bumped when its figures change) or by another program.
   */
  queueMissing(entries: StoredEntry[]): void {
    for (const e of entries) {
      if (e.kind === 'folder') this.queueMissing(e.children);
      else if (!e.meta.analysis || analyserVersion(e.meta.analysis) !== ANALYSER_VERSION) this.queue(e.path.split('/'));
    }
  }

  /**
   * Queues the files of a listing that have no analysis of their current content (copied in or replaced by hand while
   * running) and are not being analysed already; content whose analysis failed is not tried again (see run).
   */
  queueUnanalysed(entries: StoredEntry[]): void {
    for (const e of entries) {
      if (e.kind === 'folder') this.queueUnanalysed(e.children);
      else if (e.analysisMissing && !this.running.has(e.path) && !this.waiting.has(e.path)) this.queue(e.path.split('/'));
    }
  }

  /** Files being analysed right now, with the fraction done (push `busyFiles`, progress in the UI). */
  analysing(): Array<{ path: string; progress: number }> {
    return [...this.running].map((path) => ({ path, progress: this.progressOf.get(path) ?? 0 }));
  }

  cancel(path: string): void {
    this.waiting.delete(path);
    this.waitingForced.delete(path);
    if (this.running.has(path)) this.deps.analyser?.cancel(this.deps.storage.abs(path.split('/')));
  }

  printingChanged(printing: boolean): void {
    if (printing && this.deps.runAt() === 'idle') {
      // Analysis competes with streaming for CPU and disk: interrupt it and pick it up again afterwards.
      for (const p of [...this.running]) {
        this.waiting.set(p, false);
        this.deps.analyser?.cancel(this.deps.storage.abs(p.split('/')));
      }
    } else if (!printing) {
      this.pump();
    }
  }

  /**
   * Starts waiting analyses, those a user asked for first, while fewer run than the analyser runs at once. Files wait
   * here, not in the analyser: a started one is announced (MetadataAnalysisStarted, push busyFiles), so 10,000 files
   * copied in by hand were 10,000 "started" events at once and a busyFiles list of 10,000 in every push message.
   */
  private pump(): void {
    if (this.stopped || !this.deps.analyser) return;
    const capacity = this.deps.analyser.capacity;
    const mayRunUnforced = !(this.deps.runAt() === 'idle' && this.deps.isPrinting());
    for (const path of this.waitingForced) {
      if (this.running.size >= capacity) return;
      if (this.running.has(path)) continue;
      this.waitingForced.delete(path);
      this.waiting.delete(path);
      void this.run(path, true);
    }
    if (!mayRunUnforced) return;
    for (const [path, forced] of this.waiting) {
      if (this.running.size >= capacity) return;
      if (forced || this.running.has(path)) continue;
      this.waiting.delete(path);
      void this.run(path, false);
    }
  }

  private async run(path: string, forced: boolean): Promise<void> {
    const { storage, events, analyser } = this.deps;
    if (!analyser) return;
    const parts = path.split('/');
    const name = parts[parts.length - 1];
    this.running.add(path);
    let attempt = '';
    try {
      const abs = storage.abs(parts);
      const before = await storage.statOf(parts);
      const key = before ? contentKey(before) : 'gone';
      attempt = `${path}@${key}`;
      if (!forced && this.failed.has(attempt)) return;
      // Queued twice for the same content: a listing saw the upload on disk before the upload queued it itself (or
      // the backlog and a listing met), and the second waited for the first to end. What it would make is stored.
      const stored = await storage.metadata.get(storage.abs(parts.slice(0, -1)), name);
      if (!forced && stored?.analysis && stored.analysisKey === key && analyserVersion(stored.analysis) === ANALYSER_VERSION) return;
      events.emit('MetadataAnalysisStarted', { name, path, origin: 'local', type: 'gcode' });
      let reportedAt = performance.now();
      const result = await analyser.analyse(abs, this.deps.options?.() ?? {}, (fraction) => {
        this.progressOf.set(path, fraction);
        const now = performance.now();
        if (!this.deps.progress || fraction >= 1 || now - reportedAt < PROGRESS_EVERY_MS) return;
        reportedAt = now;
        this.deps.progress({ origin: 'local', path, name, progress: fraction });
      });
      const after = await storage.statOf(parts);
      // The file changed (re-upload) or vanished while analysing: the result is stale.
      if (!after || !before || after.mtimeMs !== before.mtimeMs || after.size !== before.size) return;
      // The slicer's preview is looked for while the file is at hand; it is served from the file itself when asked for.
      const thumb = await readThumbnail(abs).catch(() => null);
      await storage.metadata.update(storage.abs(parts.slice(0, -1)), name, {
        analysis: result as unknown as Record<string, unknown>,
        analysisKey: contentKey(after),
        thumbnail: thumb ? thumbnailRef(path, Math.floor(after.mtimeMs / 1000)) : undefined,
        thumbnail_src: thumb ? THUMBNAIL_SRC : undefined,
      }, { background: true });
      events.emit('MetadataAnalysisFinished', { name, path, origin: 'local', result });
      events.emit('UpdatedFiles', { type: 'printables' });
    } catch (err) {
      this.deps.logger.debug({ err, path }, 'analysis did not complete');
      if (!this.stopped && !isCancelled(err)) this.failed.add(attempt);
    } finally {
      this.running.delete(path);
      this.progressOf.delete(path);
      this.pump();
    }
  }
}
