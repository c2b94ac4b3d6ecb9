// Moonraker's job_queue component (`server.job_queue.*`, `notify_job_queue_changed`) over Gantry's print queue
// (src/queue/), seen from one printer: the jobs this printer may print, one entry per copy still to start, and the
// queue's state as Moonraker names it. Moonraker's "paused after a job" is Gantry's "waits for bed clear": `start`
// confirms the bed is clear, releases this printer's held jobs and resumes the queue.
import type { EventBus } from '../core/event-bus.ts';
import type { Plain } from '../core/plain.ts';
import type { PrintQueue, QueueJob, QueueSnapshot } from '../queue/print-queue.ts';
import { badParam } from './rpc-errors.ts';

/** What the component uses of the print queue (PrintQueue satisfies it). */
export type MoonrakerQueue = Pick<PrintQueue, 'snapshot' | 'add' | 'remove' | 'move' | 'release' | 'setPaused' | 'bedClear'>;

export interface QueuedJob { filename: string; job_id: string; time_added: number; time_in_queue: number }
export interface JobQueueStatus { queued_jobs: QueuedJob[]; queue_state: 'ready' | 'loading' | 'starting' | 'paused' }

/** Reading needs STATUS; changing the queue PRINT (as starting a print does). */
export const QUEUE_READ = 'STATUS';
export const QUEUE_WRITE = 'PRINT';
/** Files one post_job may add (Mainsail's "reset" sends the whole list again). */
const MAX_POST = 500;
/** The queue's events that change what this component shows (src/core/events.ts). */
const QUEUE_EVENTS = ['QueueJobAdded', 'QueueJobStarted', 'QueueJobPrinted', 'QueueJobHeld', 'QueueJobReleased', 'QueueJobDone',
  'QueueJobRemoved', 'QueueJobMoved', 'QueueWaitingForBedClear', 'QueueBedCleared', 'QueuePaused', 'QueueResumed'] as const;

type Add = (name: string, need: string | null, run: (params: Plain, user: string | null) => unknown) => void;

/** The job id of the k-th copy still to start of a Gantry job (the first one is the job's own id). */
const entryId = (id: string, k: number): string => (k === 0 ? id : `${id}.${k}`);
const jobIdOf = (entry: string): string => entry.replace(/\.\d+$/, '');

export class JobQueueComponent {
  constructor(private readonly queue: MoonrakerQueue, private readonly printer: string, private readonly now: () => number) {}

  /** The jobs this printer may take: any-printer and profile jobs, and those named for it. */
  private mine(job: QueueJob): boolean {
    return job.constraint.kind !== 'printer' || job.constraint.printer === this.printer;
  }

  status(snap: QueueSnapshot = this.queue.snapshot()): JobQueueStatus {
    const now = this.now();
    const queued: QueuedJob[] = [];
    for (const job of snap.jobs) {
      if (!this.mine(job)) continue;
      const left = job.copies - job.done - job.printing.length;
      for (let k = 0; k < left; k++) queued.push({ filename: job.path, job_id: entryId(job.id, k), time_added: job.added, time_in_queue: Math.max(0, now - job.added) });
    }
    const me = snap.printers.find((p) => p.name === this.printer);
    const held = snap.jobs.some((j) => this.mine(j) && j.held !== null && (j.constraint.kind === 'printer' || j.held.printer === this.printer));
    return { queued_jobs: queued, queue_state: snap.paused || held || me?.waitingForBedClear ? 'paused' : 'ready' };
  }

  /** When the queue changed: what to tell (Moonraker's `notify_job_queue_changed` payload). */
  watch(events: EventBus, owner: string, tell: (payload: Plain) => void): void {
    for (const name of QUEUE_EVENTS) {
      events.on(owner, name, () => {
        const s = this.status();
        const action = name === 'QueueJobAdded' ? 'jobs_added' : name === 'QueueJobRemoved' || name === 'QueueJobDone' ? 'jobs_removed'
          : name === 'QueueJobStarted' ? 'job_loaded' : 'state_changed';
        tell({ action, updated_queue: action === 'state_changed' ? null : s.queued_jobs, queue_state: s.queue_state });
      });
    }
  }

  register(add: Add): void {
    add('server.job_queue.status', QUEUE_READ, () => this.status());
    add('server.job_queue.post_job', QUEUE_WRITE, async (p, user) => {
      const names = typeof p.filenames === 'string' ? p.filenames.split(',') : p.filenames;
      if (!Array.isArray(names) || names.length === 0 || names.length > MAX_POST || !names.every((n) => typeof n === 'string' && n.trim() !== '')) {
        throw badParam(`filenames must be a list of 1 to ${MAX_POST} file names`);
      }
      const reset = p.reset === true || p.reset === 'true';
      if (reset) await this.removeAll(user);
      for (const name of names as string[]) {
        await this.queue.add({ path: name.trim().replace(/^\/+/, '').replace(/^gcodes\//, ''), copies: 1, constraint: this.constraint() }, user);
      }
      return this.status();
    });
    add('server.job_queue.delete_job', QUEUE_WRITE, async (p, user) => {
      if (p.all === true || p.all === 'true') {
        await this.removeAll(user);
        return this.status();
      }
      const ids = typeof p.job_ids === 'string' ? p.job_ids.split(',') : p.job_ids;
      if (!Array.isArray(ids) || ids.length === 0 || !ids.every((i) => typeof i === 'string')) throw badParam('job_ids must be a list of job ids (or all=true)');
      // An entry of a job of several copies stands for the whole job: Gantry's queue removes jobs, not single copies.
      for (const id of new Set((ids as string[]).map(jobIdOf))) {
        if (!this.queue.snapshot().jobs.some((j) => j.id === id && this.mine(j))) throw badParam(`Invalid job id: ${id}`);
        await this.queue.remove(id, user);
      }
      return this.status();
    });
    add('server.job_queue.pause', QUEUE_WRITE, async (_p, user) => {
      await this.queue.setPaused(true, user);
      return this.status();
    });
    add('server.job_queue.start', QUEUE_WRITE, async (_p, user) => {
      const snap = this.queue.snapshot();
      for (const j of snap.jobs) if (this.mine(j) && j.held && (j.constraint.kind === 'printer' || j.held.printer === this.printer)) await this.queue.release(j.id, user);
      if (snap.printers.find((x) => x.name === this.printer)?.waitingForBedClear) await this.queue.bedClear(this.printer, user);
      await this.queue.setPaused(false, user);
      return this.status();
    });
    add('server.job_queue.jump', QUEUE_WRITE, async (p) => {
      if (typeof p.job_id !== 'string' || !p.job_id) throw badParam('job_id is needed');
      const id = jobIdOf(p.job_id);
      if (!this.queue.snapshot().jobs.some((j) => j.id === id && this.mine(j))) throw badParam(`Invalid job id: ${p.job_id}`);
      await this.queue.move(id, 0);
      return this.status();
    });
  }

  /** A job posted here is for this printer when the queue serves several; any printer's otherwise (one printer: the same). */
  private constraint(): { kind: 'any' } | { kind: 'printer'; printer: string } {
    return this.queue.snapshot().printers.length > 1 ? { kind: 'printer', printer: this.printer } : { kind: 'any' };
  }

  /** Removes this printer's jobs that are not printing (a printing copy's job stays: cancel the print first). */
  private async removeAll(user: string | null): Promise<void> {
    for (const j of this.queue.snapshot().jobs) if (this.mine(j) && j.printing.length === 0) await this.queue.remove(j.id, user);
  }
}
