// The farm's print queue: jobs of a library file with a copy count and a constraint, dispatched to the first idle
// printer that fits; after each print the printer waits for "bed clear" before its next job; a failed or cancelled
// print holds its job; every change is on disk (queue.json) before it is acknowledged, and survives a restart.
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../core/atomic-file.ts';
import { conflict, invalid, notFound } from '../core/errors.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import { SerialQueue } from '../core/serial-queue.ts';
import { profileMismatch } from './profile-match.ts';
import type { PrintOutcome, QueueLibrary, QueuePrinter, QueuePrinters } from './queue-printers.ts';

export type QueueConstraint = { kind: 'any' } | { kind: 'printer'; printer: string } | { kind: 'profile' };

export interface QueueJob {
  id: string;
  path: string;
  copies: number;
  /** Copies that finished. */
  done: number;
  constraint: QueueConstraint;
  /** Printers printing a copy of it now. */
  printing: string[];
  /** Set when a copy failed or was cancelled (or a start failed): no further copy starts until the user releases it. */
  held: { printer: string; outcome: PrintOutcome | 'error' | 'interrupted'; reason: string; at: number } | null;
  added: number;
  user: string | null;
}

export interface PrinterQueueState {
  /** The bed holds a print: the printer takes no job until someone confirms it is clear. */
  waitingForBedClear: boolean;
  /** The job whose print left the bed so (null: cleared, or never used by the queue). */
  lastJob: string | null;
  /** Belt printers and auto-ejection: a finished print needs no confirmation. */
  autoClear: boolean;
  /** The filament loaded, for the profile constraint (printer profiles do not know it). */
  filamentType: string | null;
}

interface Stored {
  version: 1;
  paused: boolean;
  jobs: QueueJob[];
  printers: Record<string, PrinterQueueState>;
}

export interface QueueSnapshot {
  paused: boolean;
  jobs: Array<QueueJob & { waiting: string | null }>;
  printers: Array<{ name: string; idle: boolean; job: string | null } & PrinterQueueState>;
}

export interface PrintQueueDeps {
  file: string;
  printers: QueuePrinters;
  library: QueueLibrary;
  events: EventBus;
  logger: Logger;
  now?: () => number;
  /** Every change (the push channel's `queue` message). */
  onChange?: (snapshot: QueueSnapshot) => void;
}

const MAX_COPIES = 1000;
const MAX_JOBS = 500;
const OWNER = 'print-queue';

const defaults = (): PrinterQueueState => ({ waitingForBedClear: false, lastJob: null, autoClear: false, filamentType: null });

export class PrintQueue {
  private state: Stored = { version: 1, paused: false, jobs: [], printers: {} };
  /** Every mutation runs here, one at a time, and saves before it resolves. */
  private readonly serial = new SerialQueue();
  private unsubscribe: Array<() => void> = [];
  private readonly now: () => number;
  private stopped = false;

  constructor(private readonly deps: PrintQueueDeps) {
    this.now = deps.now ?? (() => Date.now() / 1000);
  }

  async start(): Promise<void> {
    this.state = await this.load();
    // Prints the queue had started did not survive the restart (a host crash or stop ends the stream): their jobs are
    // held and their beds are not clear.
    let interrupted = false;
    for (const job of this.state.jobs) {
      for (const printer of job.printing) {
        job.held ??= { printer, outcome: 'interrupted', reason: 'The server stopped during the print', at: this.now() };
        this.printer(printer).waitingForBedClear = true;
        this.printer(printer).lastJob = job.id;
        interrupted = true;
      }
      job.printing = [];
    }
    if (interrupted) await this.save();
    const p = this.deps.printers;
    this.unsubscribe = [
      p.on('finished', (name) => this.outcome(name, 'finished')),
      p.on('failed', (name) => this.outcome(name, 'failed')),
      p.on('cancelled', (name) => this.outcome(name, 'cancelled')),
      p.on('changed', () => this.kick()),
      this.deps.events.on(OWNER, 'MetadataAnalysisFinished', () => this.kick()),
    ];
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
    await this.serial.run(async () => {});
  }

  // ---------------------------------------------------------------- reading

  snapshot(): QueueSnapshot {
    const printers = this.deps.printers.list();
    return {
      paused: this.state.paused,
      jobs: this.state.jobs.map((j) => ({ ...structuredClone(j), waiting: this.waitingReason(j, printers) })),
      printers: printers.map((p) => ({
        name: p.name, idle: p.idle, ...this.printer(p.name),
        job: this.state.jobs.find((j) => j.printing.includes(p.name))?.id ?? null,
      })),
    };
  }

  // ---------------------------------------------------------------- commands

  async add(body: { path: string; copies?: number; constraint?: QueueConstraint }, user: string | null): Promise<QueueJob> {
    const copies = body.copies ?? 1;
    if (!Number.isInteger(copies) || copies < 1 || copies > MAX_COPIES) throw invalid(`copies must be an integer from 1 to ${MAX_COPIES}`);
    const constraint = body.constraint ?? { kind: 'any' };
    if (constraint.kind === 'printer' && !this.deps.printers.list().some((p) => p.name === constraint.printer)) {
      throw invalid(`No printer named ${constraint.printer}`);
    }
    const file = await this.deps.library.describe(body.path);
    if (constraint.kind === 'profile' && file.slicedFor === null) {
      throw invalid('The file names no bed, nozzle or filament it was sliced for, so no profile can match it');
    }
    return this.mutate(() => {
      if (this.state.jobs.length >= MAX_JOBS) throw conflict(`The queue holds ${MAX_JOBS} jobs already`);
      const job: QueueJob = {
        id: randomUUID(), path: file.path, copies, done: 0, constraint, printing: [], held: null, added: this.now(), user,
      };
      this.state.jobs.push(job);
      this.deps.events.emit('QueueJobAdded', { id: job.id, path: job.path, copies, constraint: { ...constraint }, ...(user ? { user } : {}) });
      return structuredClone(job);
    });
  }

  remove(id: string, user: string | null): Promise<void> {
    return this.mutate(() => {
      const job = this.job(id);
      if (job.printing.length > 0) throw conflict(`A copy of this job is printing on ${job.printing.join(', ')}: cancel it first`);
      this.state.jobs = this.state.jobs.filter((j) => j !== job);
      this.deps.events.emit('QueueJobRemoved', { id, path: job.path, ...(user ? { user } : {}) });
    });
  }

  /** Moves a job to `position` (0 = next). */
  move(id: string, position: number): Promise<void> {
    return this.mutate(() => {
      const job = this.job(id);
      if (!Number.isInteger(position) || position < 0) throw invalid('position must be an integer ≥ 0');
      const rest = this.state.jobs.filter((j) => j !== job);
      rest.splice(Math.min(position, rest.length), 0, job);
      this.state.jobs = rest;
      this.deps.events.emit('QueueJobMoved', { id, path: job.path, position: Math.min(position, rest.length - 1) });
    });
  }

  /** A held job may start its next copy again (the user looked at what went wrong). */
  release(id: string, user: string | null): Promise<void> {
    return this.mutate(() => {
      const job = this.job(id);
      if (!job.held) throw conflict('The job is not held');
      job.held = null;
      this.deps.events.emit('QueueJobReleased', { id, path: job.path, ...(user ? { user } : {}) });
    });
  }

  setPaused(paused: boolean, user: string | null): Promise<void> {
    return this.mutate(() => {
      if (this.state.paused === paused) return;
      this.state.paused = paused;
      this.deps.events.emit(paused ? 'QueuePaused' : 'QueueResumed', user ? { user } : {});
    });
  }

  bedClear(name: string, user: string | null): Promise<void> {
    return this.mutate(() => {
      this.knownPrinter(name);
      const p = this.printer(name);
      if (!p.waitingForBedClear) return;
      p.waitingForBedClear = false;
      this.deps.events.emit('QueueBedCleared', { printer: name, ...(p.lastJob ? { id: p.lastJob } : {}), ...(user ? { user } : {}) });
      p.lastJob = null;
    });
  }

  configurePrinter(name: string, settings: { autoClear?: boolean; filamentType?: string | null }): Promise<PrinterQueueState> {
    return this.mutate(() => {
      this.knownPrinter(name);
      const p = this.printer(name);
      if (settings.autoClear !== undefined) p.autoClear = settings.autoClear;
      if (settings.filamentType !== undefined) p.filamentType = settings.filamentType?.trim() || null;
      return { ...p };
    });
  }

  /** The queue's per-printer settings, for the printer list's profile. */
  printerSettings(name: string): PrinterQueueState {
    return { ...(this.state.printers[name] ?? defaults()) };
  }

  // ---------------------------------------------------------------- dispatch

  /** Runs `fn` on the state in turn, saves, tells, and dispatches. */
  private async mutate<T>(fn: () => T): Promise<T> {
    const out = await this.serial.run(async () => {
      const r = fn();
      await this.save();
      return r;
    });
    this.changed();
    this.kick();
    return out;
  }

  private changed(): void {
    this.deps.onChange?.(this.snapshot());
  }

  /** Asks for a dispatch pass (after the mutations queued before it). */
  private kick(): void {
    if (this.stopped) return;
    void this.serial.run(() => this.dispatch()).catch((err: unknown) => this.deps.logger.error({ err }, 'queue dispatch failed'));
  }

  private waitingReason(job: QueueJob, printers: QueuePrinter[]): string | null {
    if (job.held) return `held: ${job.held.reason}`;
    if (job.done + job.printing.length >= job.copies) return null;
    if (this.state.paused) return 'the queue is paused';
    if (job.constraint.kind === 'printer') {
      const name = job.constraint.printer;
      if (!printers.some((p) => p.name === name)) return `no printer named ${name}`;
      if (this.printer(name).waitingForBedClear) return `${name} waits for its bed to be cleared`;
      return printers.find((p) => p.name === name)?.idle ? null : `${name} is not idle`;
    }
    return null;
  }

  private async dispatch(): Promise<void> {
    if (this.state.paused || this.stopped) return;
    const busy = new Set(this.state.jobs.flatMap((j) => j.printing));
    let free = this.deps.printers.list().filter((p) => p.idle && !busy.has(p.name) && !this.printer(p.name).waitingForBedClear);
    for (const job of this.state.jobs) {
      if (free.length === 0) return;
      if (job.held) continue;
      while (job.done + job.printing.length < job.copies && free.length > 0 && !job.held) {
        const target = await this.firstFit(job, free);
        if (!target) break;
        free = free.filter((p) => p !== target);
        await this.startCopy(job, target.name);
      }
    }
  }

  private async firstFit(job: QueueJob, free: QueuePrinter[]): Promise<QueuePrinter | undefined> {
    const c = job.constraint;
    if (c.kind === 'any') return free[0];
    if (c.kind === 'printer') return free.find((p) => p.name === c.printer);
    let sliced;
    try {
      sliced = (await this.deps.library.describe(job.path)).slicedFor;
    } catch (err) {
      this.hold(job, free[0]?.name ?? '', 'error', `The file cannot be read: ${(err as Error).message}`);
      return undefined;
    }
    // Not analysed yet: dispatched when its analysis is in (MetadataAnalysisFinished).
    if (sliced === undefined || sliced === null) return undefined;
    return free.find((p) => profileMismatch(sliced, { ...p.profile, ...(this.printer(p.name).filamentType ? { filamentType: this.printer(p.name).filamentType! } : {}) }) === null);
  }

  private async startCopy(job: QueueJob, printer: string): Promise<void> {
    job.printing.push(printer);
    await this.save();
    const copy = job.done + job.printing.length;
    try {
      await this.deps.printers.startPrint(printer, job.path);
      this.deps.events.emit('QueueJobStarted', { id: job.id, path: job.path, printer, copy, copies: job.copies });
    } catch (err) {
      job.printing = job.printing.filter((p) => p !== printer);
      this.hold(job, printer, 'error', `The print did not start: ${(err as Error).message}`);
      await this.save();
    }
    this.changed();
  }

  private hold(job: QueueJob, printer: string, outcome: NonNullable<QueueJob['held']>['outcome'], reason: string): void {
    job.held = { printer, outcome, reason, at: this.now() };
    this.deps.events.emit('QueueJobHeld', { id: job.id, path: job.path, printer, outcome, reason });
  }

  /** A print on `name` ended: if the queue started it, count it or hold its job, and the bed waits to be cleared. */
  private outcome(name: string, outcome: PrintOutcome): void {
    void this.serial.run(async () => {
      const job = this.state.jobs.find((j) => j.printing.includes(name));
      if (!job) return;
      job.printing = job.printing.filter((p) => p !== name);
      const p = this.printer(name);
      p.lastJob = job.id;
      this.deps.events.emit('QueueJobPrinted', { id: job.id, path: job.path, printer: name, outcome });
      if (outcome === 'finished') {
        job.done++;
        if (job.done >= job.copies && job.printing.length === 0 && !job.held) {
          this.state.jobs = this.state.jobs.filter((j) => j !== job);
          this.deps.events.emit('QueueJobDone', { id: job.id, path: job.path, copies: job.copies });
        }
      } else {
        this.hold(job, name, outcome, outcome === 'cancelled' ? `The print on ${name} was cancelled` : `The print on ${name} failed`);
      }
      // A failed print leaves its remains on the bed even on a belt: only a finished one clears itself.
      if (p.autoClear && outcome === 'finished') p.lastJob = null;
      else {
        p.waitingForBedClear = true;
        this.deps.events.emit('QueueWaitingForBedClear', { printer: name, id: job.id, path: job.path });
      }
      await this.save();
    }).then(() => { this.changed(); this.kick(); }, (err: unknown) => this.deps.logger.error({ err, printer: name }, 'queue bookkeeping failed'));
  }

  // ---------------------------------------------------------------- state

  private job(id: string): QueueJob {
    const job = this.state.jobs.find((j) => j.id === id);
    if (!job) throw notFound(`No queued job ${id}`);
    return job;
  }

  private knownPrinter(name: string): void {
    if (!this.deps.printers.list().some((p) => p.name === name)) throw notFound(`No printer named ${name}`);
  }

  private printer(name: string): PrinterQueueState {
    return (this.state.printers[name] ??= defaults());
  }

  private async load(): Promise<Stored> {
    let text: string;
    try {
      text = await readFile(this.deps.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, paused: false, jobs: [], printers: {} };
      throw err;
    }
    try {
      const s = JSON.parse(text) as Partial<Stored>;
      return {
        version: 1, paused: s.paused === true, jobs: Array.isArray(s.jobs) ? s.jobs.filter((j) => typeof j?.id === 'string' && typeof j.path === 'string') : [],
        printers: s.printers && typeof s.printers === 'object' ? s.printers : {},
      };
    } catch (err) {
      // A file nobody can read is kept aside for a look, not overwritten silently.
      this.deps.logger.error({ err, file: this.deps.file }, 'queue file unreadable, starting with an empty queue');
      await writeFileAtomic(`${this.deps.file}.unreadable`, text);
      return { version: 1, paused: false, jobs: [], printers: {} };
    }
  }

  private save(): Promise<void> {
    return writeFileAtomic(this.deps.file, `${JSON.stringify(this.state, null, 1)}\n`, 0o600);
  }
}
