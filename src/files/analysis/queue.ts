// Analysis queue: runs the G-code analyser in worker threads (one or N), FIFO, cancellable, so the event loop never parses files.
import type { ResourceLimits, Worker } from 'node:worker_threads';
import { DomainError, ErrorCodes, notFound } from '../../core/errors.ts';
import type { Logger } from '../../core/logger.ts';
import type { AnalysisOptions, AnalysisProgress, GcodeAnalysis } from './types.ts';
import type { WorkerReply, WorkerRequest } from './worker.ts';
import { prepareThread, spawnThread, type ThreadCode } from '../../core/thread-code.ts';

/** The analyser's thread entry, run from the sources; `dist/analysis-worker.js` in the built server. */
const ENTRY = new URL('./worker.ts', import.meta.url);

/** Rejection reason of a job that cancel() or stop() ended. */
export class AnalysisCancelledError extends Error {
  constructor(path: string) {
    super(`Analysis of ${path} was cancelled`);
    this.name = 'AnalysisCancelledError';
  }
}

export interface AnalysisQueueOptions {
  logger: Logger;
  /** Parallel worker threads (default 1: analysis competes with serial streaming for 2 cores). */
  workers?: number;
  /** Idle workers exit after this many ms and are re-spawned on demand (default 30 s); the warm ones stay. */
  idleTimeoutMs?: number;
  /**
   * Workers started with the queue and kept while idle (default 1), so an upload does not wait for a thread to boot
   * (tens of ms with the bundled analyser, half a second through tsx). An idle worker costs a few MB and no CPU.
   */
  warmWorkers?: number;
  /** Heap caps per worker; a worker that exceeds them dies and only its job fails. */
  resourceLimits?: ResourceLimits;
}

interface Job {
  id: number;
  path: string;
  options: AnalysisOptions;
  onProgress?: AnalysisProgress;
  resolve: (a: GcodeAnalysis) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  job: Job | null;
  idleTimer: NodeJS.Timeout | null;
}

export class AnalysisQueue {
  private readonly logger: Logger;
  private readonly size: number;
  private readonly idleTimeoutMs: number;
  private readonly resourceLimits: ResourceLimits | undefined;
  private readonly warm: number;
  /** Set once the worker code is ready; jobs wait in `pending` until then. */
  private source: ThreadCode | null = null;
  /** A worker died without a job (it could not even start): stop keeping warm ones, or it would respawn forever. */
  private warmBroken = false;
  private readonly pending: Job[] = [];
  private readonly slots = new Set<Slot>();
  private nextId = 1;
  private running = false;

  constructor(opts: AnalysisQueueOptions) {
    this.logger = opts.logger.child({ component: 'analysis' });
    this.size = Math.max(1, Math.floor(opts.workers ?? 1));
    this.idleTimeoutMs = opts.idleTimeoutMs ?? 30_000;
    this.resourceLimits = opts.resourceLimits;
    this.warm = Math.min(this.size, Math.max(0, Math.floor(opts.warmWorkers ?? 1)));
  }

  start(): void {
    this.running = true;
    void prepareThread(ENTRY, 'analysis-worker.js').then((source) => {
      this.source = source;
      this.pump();
    }, (err: unknown) => this.logger.error({ err }, 'analysis worker code could not be prepared'));
  }

  /** Ends every job (rejecting with AnalysisCancelledError) and terminates the workers. */
  async stop(): Promise<void> {
    this.running = false;
    for (const job of this.pending.splice(0)) job.reject(new AnalysisCancelledError(job.path));
    const ends: Promise<unknown>[] = [];
    for (const slot of [...this.slots]) {
      if (slot.job) slot.job.reject(new AnalysisCancelledError(slot.job.path));
      slot.job = null;
      ends.push(this.retire(slot));
    }
    await Promise.all(ends);
  }

  /** Queues `path` for analysis; resolves with the result, rejects on a missing/unreadable file, a worker crash or cancel. */
  analyse(path: string, options: AnalysisOptions = {}, onProgress?: AnalysisProgress): Promise<GcodeAnalysis> {
    return new Promise<GcodeAnalysis>((resolve, reject) => {
      if (!this.running) {
        reject(new DomainError(ErrorCodes.CONFLICT, 'Analysis queue is not running'));
        return;
      }
      this.pending.push({ id: this.nextId++, path, options, onProgress, resolve, reject });
      this.pump();
    });
  }

  /** Cancels every queued or running analysis of `path`; returns how many jobs were cancelled. */
  cancel(path: string): number {
    let count = 0;
    for (let i = this.pending.length - 1; i >= 0; i--) {
      const job = this.pending[i];
      if (job.path !== path) continue;
      this.pending.splice(i, 1);
      job.reject(new AnalysisCancelledError(path));
      count++;
    }
    for (const slot of [...this.slots]) {
      if (slot.job?.path !== path) continue;
      slot.job.reject(new AnalysisCancelledError(path));
      slot.job = null;
      count++;
      // A worker cannot be interrupted mid-file, so it is replaced; the next job gets a fresh one.
      void this.retire(slot).then(() => this.pump());
    }
    return count;
  }

  /** How many analyses run at once (one per worker thread); more wait here. */
  get capacity(): number {
    return this.size;
  }

  /** Worker threads alive, busy or idle (the warm ones included). */
  get workers(): number {
    return this.slots.size;
  }

  /** Jobs waiting plus jobs running. */
  get queued(): number {
    let busy = 0;
    for (const s of this.slots) if (s.job) busy++;
    return this.pending.length + busy;
  }

  private pump(): void {
    if (!this.running || !this.source) return;
    while (this.pending.length > 0) {
      let slot = [...this.slots].find((s) => s.job === null);
      if (!slot) {
        if (this.slots.size >= this.size) return;
        slot = this.createSlot();
      }
      const job = this.pending.shift()!;
      this.assign(slot, job);
    }
    while (!this.warmBroken && this.slots.size < this.warm) this.createSlot();
  }

  private createSlot(): Slot {
    const slot: Slot = { worker: spawnThread(this.source!, { name: 'gcode-analysis', resourceLimits: this.resourceLimits }), job: null, idleTimer: null };
    this.slots.add(slot);
    slot.worker.on('message', (msg: WorkerReply) => this.onMessage(slot, msg));
    slot.worker.on('error', (err) => this.onCrash(slot, err));
    slot.worker.on('exit', (code) => {
      if (this.slots.has(slot)) this.onCrash(slot, new Error(`analysis worker exited with code ${code}`));
    });
    // An idle worker must not keep the process alive; a busy one does (see assign/idle).
    slot.worker.unref();
    return slot;
  }

  private assign(slot: Slot, job: Job): void {
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = null;
    slot.job = job;
    slot.worker.ref();
    const req: WorkerRequest = { id: job.id, path: job.path, options: job.options };
    slot.worker.postMessage(req);
  }

  private onMessage(slot: Slot, msg: WorkerReply): void {
    const job = slot.job;
    if (!job || job.id !== msg.id) return;
    if (msg.type === 'progress') {
      try { job.onProgress?.(msg.fraction); } catch (err) { this.logger.warn({ err }, 'analysis progress callback failed'); }
      return;
    }
    slot.job = null;
    if (msg.type === 'done') job.resolve(msg.result);
    else if (msg.code === 'ENOENT' || msg.code === 'EISDIR') job.reject(notFound(`G-code file not found: ${job.path}`));
    else job.reject(new DomainError(ErrorCodes.INTERNAL, `Analysis of ${job.path} failed: ${msg.message}`));
    this.idle(slot);
    this.pump();
  }

  private onCrash(slot: Slot, err: Error): void {
    if (!this.slots.has(slot)) return;
    this.slots.delete(slot);
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    const job = slot.job;
    slot.job = null;
    if (!job) {
      this.warmBroken = true;
      this.logger.error({ err }, 'idle analysis worker died; workers are now started on demand only');
    } else {
      this.logger.error({ err, path: job.path }, 'analysis worker crashed');
      job.reject(new DomainError(ErrorCodes.INTERNAL, `Analysis of ${job.path} crashed: ${err.message}`, { cause: err }));
    }
    void slot.worker.terminate().catch(() => undefined);
    if (this.running) this.pump();
  }

  private idle(slot: Slot): void {
    if (this.pending.length > 0) return;
    slot.worker.unref();
    if (this.slots.size <= this.warm) return;
    // Re-checked when it fires: another idle worker may have retired meanwhile, leaving this one the warm one.
    slot.idleTimer = setTimeout(() => { if (!slot.job && this.slots.size > this.warm) void this.retire(slot); }, this.idleTimeoutMs);
    slot.idleTimer.unref();
  }

  private async retire(slot: Slot): Promise<void> {
    this.slots.delete(slot);
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    await slot.worker.terminate().catch(() => undefined);
  }
}
