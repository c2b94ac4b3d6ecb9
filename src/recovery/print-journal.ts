// The print journal: while a streamed print runs, where it is (acknowledged and executed positions, layer, Z, E,
// temperatures…) kept on disk, so a print cut short by a pulled cable, a printer reset, a halt or a host crash can
// be resumed; tells those causes apart and offers and performs the resume (GET/POST /api/plugin/recovery).
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { removeFile, setAside, writeFileAtomic } from '../core/atomic-file.ts';
import { conflict, invalid, notOperational } from '../core/errors.ts';
import { digestFile } from '../core/file-chunks.ts';
import type { JobInterruption, LiveJob } from '../printer/job/job-runner.ts';
import { isFileChangedOnDisk } from '../printer/job/file-line-source.ts';
import { initialState, offsetOfLayer, offsetOfLine, scanTo, type MachineState } from './gcode-state.ts';
import { recoveryContext, renderRecoveryScript } from './recovery-script.ts';
import { linkTail, offsetAfterLine } from './link-tail.ts';

export type { InterruptionCause, FilePosition, JournalRecord, JournalJobs, PrintJournalDeps } from './journal-types.ts';
import type { InterruptionCause, JournalRecord, PrintJournalDeps } from './journal-types.ts';

const OWNER = 'print-journal';

export class PrintJournal {
  private record: JournalRecord | null = null;
  private live: LiveJob | null = null;
  /** File state at the executed and at the acknowledged position, advanced incrementally from the file. */
  private exec: MachineState = initialState();
  private ack: MachineState = initialState();
  private abs = '';
  private hash: Promise<string | null> = Promise.resolve(null);
  private timer: NodeJS.Timeout | null = null;
  private busy = false;
  /** When the journal was last written, on the monotonic clock: the wall clock may jump (NTP on a board without RTC). */
  private lastWrite = -Infinity;
  private lastLayer = -1;
  /** Set by the link's events just before the stream is aborted: the real cause of the failure. */
  private pendingCause: InterruptionCause | null = null;
  /** The state a resume starts from, picked up by the PrintStarted of that resume. */
  private resumeState: MachineState | null = null;
  /** Disk writes and deletes, in order. */
  private io: Promise<void> = Promise.resolve();
  /** The last save failed (disk full, read-only): the next failure is not logged again. */
  private writeFailing = false;
  private depth: number;
  private readonly journalFile: string;
  private readonly octoFile: string;

  constructor(private readonly deps: PrintJournalDeps) {
    this.depth = deps.plannerDepth ?? 20;
    this.journalFile = join(deps.dataDir, 'print-journal.json');
    this.octoFile = join(deps.dataDir, 'print_recovery_data.yaml');
  }

  async start(): Promise<void> {
    const found = await this.read();
    if (found && found.version === 1 && typeof found.path === 'string') {
      // Still "printing" on disk: the host went away mid-print (crash, kill, power cut).
      if (found.status === 'printing') Object.assign(found, { status: 'interrupted', cause: 'host-restarted' });
      this.record = found;
      this.persist(found);
    }
    const ev = this.deps.events;
    ev.on(OWNER, 'PrintStarted', (p) => this.onStarted(p.origin, p.path));
    ev.on(OWNER, 'PrintDone', () => this.clear());
    ev.on(OWNER, 'PrintCancelled', () => this.clear());
    ev.on(OWNER, 'PrinterReset', () => { this.pendingCause ??= 'printer-reset'; });
    // Power control cut the supply mid-print (src/power/): that is the cause, whatever the link reports after it.
    ev.on(OWNER, 'plugin_psucontrol_power_cut', () => { this.pendingCause = 'power-off'; });
    // A cancelled object is on disk at once: a host crash right after must not print it again on resume.
    ev.on(OWNER, 'plugin_cancelobject_object_cancelled', () => this.objectCancelled());
    ev.on(OWNER, 'Disconnecting', () => { this.pendingCause ??= 'disconnected'; });
    ev.on(OWNER, 'Error', (p) => { this.pendingCause ??= (p as { reason?: string }).reason === 'connection' ? 'port-vanished' : 'printer-halted'; });
    if (this.record) this.announce(this.record);
  }

  /**
   * The journal a previous run left, if any. One that cannot be read as a journal (a damaged SD card) is set aside as
   * `<name>.corrupt-<time>` with a warning: the server starts without an offer rather than not at all.
   */
  private async read(): Promise<JournalRecord | null> {
    const text = await readFile(this.journalFile, 'utf8').catch(() => null);
    if (text === null) return null;
    try {
      return JSON.parse(text) as JournalRecord;
    } catch (err) {
      const aside = await setAside(this.journalFile);
      this.deps.logger.warn({ err, file: aside }, 'print journal: unreadable, set aside; no print is offered for recovery');
      return null;
    }
  }

  async stop(): Promise<void> {
    // Stopped before the job runner (reverse start order), so the cancel a shutdown makes does not clear the journal:
    // a print stopped by a host shutdown is offered again at the next start, as after a crash.
    this.deps.events.removeOwner(OWNER);
    this.stopTimer();
    const rec = this.record;
    if (rec && rec.status === 'printing' && this.live) {
      this.fill(rec);
      this.persist(rec);
    }
    await this.io;
  }

  // ---------------------------------------------------------------- while printing

  private onStarted(origin: string, path: string): void {
    const live = this.deps.jobs.live();
    this.pendingCause = null;
    this.stopTimer();
    // A new print replaces any earlier offer: one journal, for the print of the moment.
    this.record = null;
    this.live = null;
    if (origin !== 'local' || !live || live.path !== path || this.deps.config?.get().recovery.journal === false) {
      this.resumeState = null;
      this.enqueue(() => this.remove());
      return;
    }
    this.live = live;
    const from = this.resumeState && this.resumeState.filepos === live.startOffset ? this.resumeState : null;
    this.resumeState = null;
    this.exec = from ? { ...from, tools: { ...from.tools } } : initialState();
    this.ack = { ...this.exec, tools: { ...this.exec.tools } };
    this.lastLayer = this.exec.layer;
    this.lastWrite = -Infinity;
    this.depth = this.deps.config?.get().recovery.plannerDepth ?? this.depth;
    const started = this.deps.now();
    this.hash = this.deps.files.absolutePath(path).then(async (abs) => {
      this.abs = abs;
      const size = (await stat(abs)).size;
      const hash = await digestFile(abs, 'sha256');
      if (this.live === live) this.record = this.snapshot(live, path, hash, size, started);
      return hash;
    }).catch((err: unknown) => {
      this.deps.logger.warn({ err, path }, 'print journal: file not readable; this print is not journalled');
      return null;
    });
    const tick = this.deps.config ? this.deps.config.get().recovery.journalTick * 1000 : (this.deps.tickMs ?? 500);
    this.timer = setInterval(() => this.tick(), tick);
    this.timer.unref();
  }

  private snapshot(live: LiveJob, path: string, hash: string, size: number, started: number): JournalRecord {
    const pos = { filepos: live.startOffset, line: this.exec.line };
    return {
      version: 1, status: 'printing', origin: 'local', path, hash, size, started, time: started, acknowledged: pos, executed: pos,
      method: `acknowledged minus ${this.depth} commands (planner + command buffer depth)`, layer: null, z: null, x: null, y: null, e: 0,
      extrusion: 'absolute', feedrate: null, fan: 0, tool: 0, temperatures: {},
    };
  }

  /** Every tickMs: where the stream is; writes at a layer change or after intervalMs. Never on the streaming path. */
  private tick(): void {
    const live = this.live;
    const rec = this.record;
    if (!live || !rec || this.busy || rec.status !== 'printing') return;
    const inFlight = live.stream.linesInFlight ?? 0;
    const acked = live.stream.positionBack?.(inFlight) ?? null;
    const executed = live.stream.positionBack?.(inFlight + this.depth) ?? null;
    this.busy = true;
    void this.advance(rec, acked, executed).catch((err: unknown) => this.deps.logger.warn({ err }, 'print journal: update failed'))
      .finally(() => { this.busy = false; });
  }

  private async advance(rec: JournalRecord, acked: number | null, executed: number | null): Promise<void> {
    if (executed !== null && executed > this.exec.filepos) await scanTo(this.abs, this.exec, executed);
    if (acked !== null && acked > this.ack.filepos) await scanTo(this.abs, this.ack, acked);
    if (this.record !== rec || rec.status !== 'printing') return;
    this.fill(rec);
    const now = performance.now();
    const layerChanged = this.exec.layer !== this.lastLayer;
    const interval = this.deps.config ? this.deps.config.get().recovery.journalInterval * 1000 : (this.deps.intervalMs ?? 3000);
    if (!layerChanged && now - this.lastWrite < interval) return;
    this.lastLayer = this.exec.layer;
    this.lastWrite = now;
    this.persist(rec);
    await this.io;
  }

  private objectCancelled(): void {
    const rec = this.record;
    if (!rec || rec.status !== 'printing' || !this.live) return;
    this.noteObjects(rec);
    this.persist(rec);
  }

  private noteObjects(rec: JournalRecord): void {
    const ids = this.deps.objects?.cancelled() ?? [];
    if (ids.length > 0) rec.cancelledObjects = ids;
    else delete rec.cancelledObjects;
  }

  private fill(rec: JournalRecord): void {
    this.noteObjects(rec);
    const s = this.exec;
    rec.time = this.deps.now();
    rec.executed = { filepos: s.filepos, line: s.line };
    rec.acknowledged = { filepos: Math.max(this.ack.filepos, s.filepos), line: Math.max(this.ack.line, s.line) };
    Object.assign(rec, {
      layer: s.layer >= 0 ? s.layer : null, z: s.z, x: s.x, y: s.y, e: s.e, extrusion: s.relativeE ? 'relative' : 'absolute',
      feedrate: s.f, fan: s.fan, tool: s.tool, temperatures: this.targets(s),
    });
  }

  /** The targets the file set, else what the printer reports as its targets. */
  private targets(s: MachineState): Record<string, number | null> {
    const out: Record<string, number | null> = {};
    const now = this.deps.temperatures() as Record<string, { target?: number | null } | undefined>;
    for (const [k, v] of Object.entries(now)) if (v && typeof v === 'object' && 'target' in v) out[k] = v.target ?? null;
    Object.assign(out, s.tools);
    if (s.bed !== null) out.bed = s.bed;
    if (s.chamber !== null) out.chamber = s.chamber;
    return out;
  }

  /** The job runner asks this, synchronously, when a print ends with an error. */
  interruption(error: string | undefined): JobInterruption | null {
    const rec = this.record;
    const own = causeOf(error);
    const cause: InterruptionCause = own === 'file-changed' ? own : this.pendingCause ?? own;
    this.pendingCause = null;
    if (cause === 'file-changed') {
      // The file on disk is no longer what was printed: a resume would print another file's rest at this one's
      // offset (its hash, taken as the print began, may already be of the new content).
      const at = rec ? { filepos: rec.executed.filepos, line: rec.executed.line + 1 } : { filepos: null, line: null };
      this.clear();
      return { cause, ...at };
    }
    this.stopTimer();
    const live = this.live;
    this.live = null;
    if (!rec || rec.status !== 'printing') return { cause, filepos: null, line: null };
    rec.status = 'interrupted';
    rec.cause = cause;
    this.noteObjects(rec);
    if (error) rec.error = error;
    const tail = live ? linkTail(live) : null;
    if (tail) rec.link = tail;
    rec.time = this.deps.now();
    this.persist(rec);
    this.announce(rec);
    return { cause, filepos: rec.executed.filepos, line: rec.executed.line + 1, layer: rec.layer, z: rec.z };
  }

  private announce(rec: JournalRecord): void {
    this.deps.events.emit('PrintRecoveryAvailable', { origin: rec.origin, path: rec.path, line: rec.executed.line + 1,
      filepos: rec.executed.filepos, layer: rec.layer, cause: rec.cause ?? 'host-restarted' });
  }

  // ---------------------------------------------------------------- the offer

  /** GET /api/plugin/recovery. `line` is the 1-based line a resume starts at; `filepos` its byte offset. */
  offer(): Record<string, unknown> {
    const rec = this.record;
    if (!rec || rec.status !== 'interrupted') return { available: false };
    return {
      available: true, origin: rec.origin, path: rec.path, line: rec.executed.line + 1, filepos: rec.executed.filepos,
      acknowledged: { line: rec.acknowledged.line, filepos: rec.acknowledged.filepos }, layer: rec.layer, z: rec.z,
      temperatures: rec.temperatures, cause: rec.cause ?? null, error: rec.error ?? null, time: rec.time, method: rec.method,
      reconnect: rec.reconnect ?? null,
    };
  }

  /** Resolves once the journal and OctoPrint's recovery file are gone from disk. */
  async discard(): Promise<void> {
    if (!this.record || this.record.status !== 'interrupted') throw conflict('There is no interrupted print to discard');
    this.clear();
    await this.io;
  }

  /** Runs the recovery script and streams the rest of the file from the executed position (or `line`/`layer`). */
  async resume(opts: { line?: number; layer?: number }, user: string | null): Promise<{ line: number; filepos: number }> {
    const rec = this.record;
    if (!rec || rec.status !== 'interrupted') throw conflict('There is no interrupted print to resume');
    if (rec.origin !== 'local') throw conflict('An SD card print is run by the printer itself; it cannot be resumed from the host');
    if (!this.deps.jobs.isOperational()) throw notOperational();
    if (!this.deps.jobs.isReady()) throw conflict('The printer is busy; resume needs it idle');
    let abs: string;
    try {
      abs = await this.deps.files.absolutePath(rec.path);
    } catch {
      throw conflict(`The file ${rec.path} is gone; the print cannot be resumed`);
    }
    const hash = await digestFile(abs, 'sha256').catch(() => null);
    if (hash === null || rec.hash === null || hash !== rec.hash) {
      throw conflict(`The file ${rec.path} changed since the print was interrupted; resuming it would print something else`);
    }
    const size = (await stat(abs)).size;
    let offset = rec.executed.filepos;
    if (opts.line !== undefined) {
      const o = await offsetOfLine(abs, opts.line);
      if (o === null) throw invalid(`line ${opts.line} is not in the file`);
      offset = o;
    } else if (opts.layer !== undefined) {
      const o = await offsetOfLayer(abs, opts.layer, size);
      if (o === null) throw invalid(`layer ${opts.layer} is not in the file`);
      offset = o;
    }
    // Starting later than the firmware acknowledged would skip lines it never received.
    if (offset > rec.acknowledged.filepos) throw invalid('Can only resume at or before the last acknowledged line');
    const state = await scanTo(abs, initialState(), offset);
    const lines = await renderRecoveryScript(this.deps.scripts, recoveryContext(state, rec.temperatures));
    this.resumeState = { ...state, tools: { ...state.tools } };
    const line = state.line + 1;
    this.deps.objects?.restore(rec.path, rec.cancelledObjects ?? [], { scripted: true });
    await this.deps.jobs.startRecovered(rec.path, offset, lines, user);
    this.deps.events.emit('PrintRecovered', { origin: rec.origin, path: rec.path, line, filepos: offset, ...(user ? { user } : {}) });
    return { line, filepos: offset };
  }

  // ---------------------------------------------------------------- after a reconnect

  /** A print cut off by its port going away, its last lines known: worth asking the printer for its line counter. */
  awaitsReconnect(): boolean {
    const rec = this.record;
    // Only the first reconnect after the port went away: any later one finds a counter of another session.
    return rec !== null && rec.status === 'interrupted' && rec.origin === 'local' && rec.cause === 'port-vanished'
      && rec.link !== undefined && rec.reconnect === undefined;
  }

  /** The reconnect found the printer reset (or could not tell): the offer stays, with why. */
  noteReconnect(outcome: 'reset' | 'unsure', reason: string): void {
    const rec = this.record;
    if (!rec || rec.status !== 'interrupted') return;
    rec.reconnect = { time: this.deps.now(), outcome, reason };
    this.persist(rec);
    this.announce(rec);
  }

  /**
   * The port came back and the printer did not reset: `firmwareLine` is its line counter, the number of the last line
   * it took. It still holds (and runs) everything up to that line, so streaming goes on from the next file line, with
   * no recovery script. When that line cannot be placed for sure, nothing is sent and the offer stays, with the reason.
   */
  async continueAfterReconnect(firmwareLine: number): Promise<{ continued: boolean; reason: string; line?: number }> {
    const rec = this.record;
    if (!rec || rec.status !== 'interrupted' || rec.origin !== 'local') return { continued: false, reason: 'no interrupted print' };
    const unsure = (reason: string) => {
      this.noteReconnect('unsure', reason);
      return { continued: false, reason };
    };
    const offset = rec.link ? offsetAfterLine(rec.link, firmwareLine) : null;
    if (offset === null) {
      return unsure(`The printer's line counter (${firmwareLine}) is not one of the lines sent before the link dropped, so where it stopped is not known for sure`);
    }
    const abs = await this.deps.files.absolutePath(rec.path).catch(() => null);
    const hash = abs ? await digestFile(abs, 'sha256').catch(() => null) : null;
    if (abs === null || hash === null || hash !== rec.hash) return unsure(`The file ${rec.path} changed or is gone`);
    if (!this.deps.jobs.isOperational() || !this.deps.jobs.isReady()) return unsure('The printer is not idle after the reconnect');
    const state = await scanTo(abs, initialState(), offset);
    this.resumeState = { ...state, tools: { ...state.tools } };
    const line = state.line + 1;
    rec.reconnect = { time: this.deps.now(), outcome: 'continued', reason: `the printer kept its line counter (${firmwareLine})` };
    this.deps.objects?.restore(rec.path, rec.cancelledObjects ?? [], { scripted: false });
    await this.deps.jobs.startRecovered(rec.path, offset, [], null);
    this.deps.events.emit('PrintRecovered', { origin: rec.origin, path: rec.path, line, filepos: offset, automatic: true });
    return { continued: true, reason: rec.reconnect.reason, line };
  }

  // ---------------------------------------------------------------- disk

  private clear(): void {
    this.stopTimer();
    this.live = null;
    this.record = null;
    this.enqueue(() => this.remove());
  }

  private persist(rec: JournalRecord): void {
    const json = JSON.stringify(rec, null, 1);
    const yaml = stringify({ origin: rec.origin, path: rec.path, pos: rec.executed.filepos, date: Math.floor(rec.time) });
    this.enqueue(async () => {
      await writeFileAtomic(this.journalFile, json);
      await writeFileAtomic(this.octoFile, yaml);
    });
  }

  /** For good: a journal a power cut brought back would offer to resume a print that ended. */
  private async remove(): Promise<void> {
    await removeFile(this.journalFile).catch(() => {});
    await removeFile(this.octoFile).catch(() => {});
  }

  private enqueue(fn: () => Promise<void>): void {
    this.io = this.io.then(fn).then(() => {
      if (!this.writeFailing) return;
      this.writeFailing = false;
      this.deps.logger.info('print journal: written again');
    }, (err: unknown) => {
      // Said once while it lasts: a full disk fails every save, a few seconds apart while printing.
      if (this.writeFailing) return;
      this.writeFailing = true;
      this.deps.logger.warn({ err }, 'print journal: cannot be saved, tried again with each save (after a crash now, recovery would start from the last one saved)');
    });
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/**
 * The link aborts the job when its state leaves Operational, which is before it emits Error with a reason: the cause is
 * read from the error text then (the engine's texts: `Connection error: …` for a vanished port, the firmware's own
 * text for a halt, its own wording for timeouts and resend trouble).
 */
function causeOf(error: string | undefined): InterruptionCause {
  if (!error) return 'link-error';
  if (isFileChangedOnDisk(error)) return 'file-changed';
  if (/printer was reset/i.test(error)) return 'printer-reset';
  if (/^Connection error/i.test(error)) return 'port-vanished';
  if (/timeouts|requesting line|requested line|emergency stop/i.test(error)) return 'link-error';
  return 'printer-halted';
}

