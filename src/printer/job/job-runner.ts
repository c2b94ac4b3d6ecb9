// Job runner: the selected file and the print job — select/start/pause/resume/cancel/restart with the transition
// rules of docs/reference/interface-spec.md, streaming a stored file line by line through the printer link, job
// scripts, progress and time-left estimation, Print* events and the print history.
import { DomainError, ErrorCodes, conflict, invalid, notOperational } from '../../core/errors.ts';
import type { FileUsage, Origin } from '../../files/types.ts';
import { isMachineCode } from '../../files/file-types.ts';
import type { GcodeAnalysis } from '../../files/analysis/types.ts';
import type { FirmwareJobAction, JobOutcome } from '../types.ts';
import type {
  JobControl, JobInterruption, JobOrigin, JobProgressSnapshot, JobRunnerDeps, JobSnapshot, LiveJob, PauseAction, SelectedFile,
} from './job-types.ts';
import { ProgressEstimator } from './progress-estimator.ts';
import { averagePrintTime, describeFile, fileStatistics, jobDocument } from './job-files.ts';
import type { PrintHistoryEntry } from './print-history.ts';
import { SdJob } from './sd-job.ts';
import { IDLE_PROGRESS, NULL_POSITION, isPaused, jobState, payload, printTimeMs, progressOf, type ActiveJob } from './active-job.ts';
import { emitEnd, recordEnd } from './job-end.ts';
import { openDriver } from './job-driver.ts';
import { jobScript, scriptContext } from './job-scripts.ts';

export type { JobInterruption, JobRunnerDeps, LiveJob } from './job-types.ts';

export class JobRunner implements JobControl, FileUsage {
  private selection: SelectedFile | undefined;
  private job: ActiveJob | undefined;
  private lastProgress: JobProgressSnapshot | null = null;
  /** Average/last print time of the selected file on the current profile (refreshed on select and after prints). */
  private stats: { average: number | null; last: number | null } = { average: null, last: null };
  private unsubscribe: (() => void) | undefined;
  /** Why the last print stopped, when it failed; cleared by the next start. */
  private lastInterruption: JobInterruption | null = null;
  private liveJob: LiveJob | null = null;
  /** The cancel script of the last job that failed with the printer connected: before the next job's lines. */
  private afterFailure = Promise.resolve();
  /** Bookkeeping of finished jobs still being written (history, file metadata); stop() waits for it. */
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly deps: JobRunnerDeps) {}

  async start(): Promise<void> {
    // An analysis that finishes after selection completes the job information (estimate, filament).
    this.deps.events.on('job-runner', 'MetadataAnalysisFinished', (p) => {
      const sel = this.selection;
      if (sel?.origin === 'local' && p.path === sel.path) sel.analysis = p.result as GcodeAnalysis;
    });
    this.unsubscribe = this.deps.printer.subscribe({
      state: (s) => {
        // A disconnect drops the selection (OctoPrint fires FileDeselected on disconnect).
        if (s.flags.closedOrError && !this.job && this.selection) this.unselect();
      },
      jobAction: (action, firmwareError) => {
        this.onFirmwareAction(action, firmwareError).catch((err: unknown) => this.deps.logger.warn({ err, action }, 'firmware job action failed'));
      },
    });
  }

  async stop(): Promise<void> {
    this.deps.events.removeOwner('job-runner');
    this.unsubscribe?.();
    if (this.job) await this.job.stream.cancel().catch(() => undefined);
    while (this.pending.size) await Promise.all([...this.pending]);
  }

  // ---------------------------------------------------------------- FileUsage (for the files service)

  isInUse(origin: Origin, path: string): boolean {
    return this.job !== undefined && this.job.file.origin === origin && this.job.file.path === path;
  }

  /** Every recorded print, oldest first (the web UI's history page). */
  printHistory(): Promise<PrintHistoryEntry[]> {
    return this.deps.history.list();
  }

  isPrinting(): boolean {
    return this.job !== undefined;
  }

  released(origin: Origin, path: string): void {
    if (!this.job && this.selection?.origin === origin && this.selection.path === path) this.unselect();
  }

  replaced(origin: Origin, path: string): void {
    if (!this.job && this.selection?.origin === origin && this.selection.path === path) {
      void this.select(origin, path, { user: this.selection.user ?? undefined }).catch(() => this.unselect());
    }
  }

  // ---------------------------------------------------------------- selection

  isOperational(): boolean {
    return this.deps.printer.isOperational();
  }

  isReady(): boolean {
    return this.deps.printer.state().flags.ready && !this.job;
  }

  selected(): SelectedFile | undefined {
    return this.selection;
  }

  async select(origin: JobOrigin, path: string, opts: { print?: boolean; user?: string } = {}): Promise<void> {
    const file = await describeFile(this.deps, origin, path, opts.user ?? null);
    if (!isMachineCode(file.name)) throw new DomainError(ErrorCodes.UNSUPPORTED_MEDIA, 'Cannot select file for printing, not a machinecode file');
    if (!this.isReady()) throw conflict('Printer is already printing, cannot select a new file');
    this.stats = file.origin === 'local' ? await fileStatistics(this.deps.files, this.deps.printer.profile().id, file.path) : { average: null, last: null };
    this.selection = file;
    this.lastProgress = { ...IDLE_PROGRESS };
    this.deps.events.emit('FileSelected', {
      name: file.name, path: file.path, origin: file.origin, size: file.size, ...(file.user ? { owner: file.user, user: file.user } : {}),
    });
    if (opts.print) await this.startJob(opts.user ?? null);
  }

  unselect(): void {
    if (!this.selection) return;
    this.selection = undefined;
    this.lastProgress = { ...IDLE_PROGRESS };
    this.deps.events.emit('FileDeselected', {});
  }

  // ---------------------------------------------------------------- job commands (POST /api/job)

  /** Applies a job command with the transition table of docs/reference/interface-spec.md; throws 409 (conflict/not operational) or 400. */
  async command(command: string, opts: { action?: string; user?: string } = {}): Promise<void> {
    if (!['start', 'cancel', 'restart', 'pause'].includes(command)) throw invalid('command is invalid');
    if (command === 'pause' && opts.action !== undefined && !['pause', 'resume', 'toggle'].includes(opts.action)) {
      throw invalid('action is invalid');
    }
    if (!this.deps.printer.isOperational()) throw notOperational();
    const user = opts.user ?? null;
    switch (command) {
      case 'start':
        if (this.job || this.deps.printer.isBusy()) throw conflict('Printer is already printing');
        if (!this.selection) throw conflict('No file selected');
        return this.startJob(user);
      case 'cancel':
        // A file being written to the SD card is the job of the moment: cancelling stops the upload (TransferFailed).
        if (!this.job && this.deps.printer.cancelTransfer()) return;
        if (!this.job) throw conflict('No active job to cancel');
        return this.cancel(user);
      case 'restart': {
        const paused = this.job;
        if (!paused || jobState(paused) !== 'PAUSED') throw conflict('Can only restart a paused job');
        await this.cancel(user);
        await paused.stream.done;
        // The cancelled job's afterPrintCancelled lines must be queued before the new job's, and its PrintFailed
        // come before the new PrintStarted.
        await paused.cancelled;
        await paused.finished;
        return this.startJob(user);
      }
      default: {
        if (!this.job) throw conflict('No active job to pause or resume');
        const action = (opts.action ?? 'toggle') as PauseAction;
        const paused = isPaused(this.job);
        if (jobState(this.job) === 'CANCELLING') return;
        if (action === 'pause' || (action === 'toggle' && !paused)) {
          if (!paused) this.pause(user);
        } else if (paused) {
          await this.resume(user);
        }
      }
    }
  }

  /** Renders a job script with the job's context (position, temperatures, its event payload) and `extra`. */
  private script(name: string, job: ActiveJob, extra: Record<string, unknown> = {}): Promise<string[]> {
    return jobScript(this.deps, name, scriptContext(this.deps.printer, job, extra));
  }

  private printTimeMs(job: ActiveJob): number {
    return printTimeMs(job, this.deps.clock.monotonic());
  }

  /** Why the last print failed, if it did and nothing was started since (GET /api/job). */
  interruption(): JobInterruption | null {
    return this.lastInterruption;
  }

  /** The streamed job being printed, for the recovery journal. */
  live(): LiveJob | null {
    return this.job ? this.liveJob : null;
  }

  /**
   * Selects a local file and streams it from byte `offset`, with `prologue` (the recovery script) instead of
   * beforePrintStarted: resuming an interrupted print.
   */
  async startRecovered(path: string, offset: number, prologue: string[], user: string | null): Promise<void> {
    if (!this.deps.printer.isOperational()) throw notOperational();
    if (this.job || this.deps.printer.isBusy()) throw conflict('Printer is already printing');
    await this.select('local', path, { user: user ?? undefined });
    await this.startJob(user, { offset, prologue });
  }

  private async startJob(user: string | null, resumeAt?: { offset: number; prologue: string[] }): Promise<void> {
    await this.afterFailure;
    const sel = this.selection;
    if (!sel) throw conflict('No file selected');
    const file = sel.origin === 'local' ? await describeFile(this.deps, 'local', sel.path, sel.user) : sel;
    if (!resumeAt) await this.deps.beforeStart?.(file);
    const owner = user ?? sel.user;
    const average = await averagePrintTime(this.deps, file);
    const estimator = new ProgressEstimator({
      size: file.size ?? 0, analysisTime: file.analysis?.estimatedPrintTime ?? null, averageTime: average,
      timeline: file.analysis?.gantry?.timeline ?? null,
    });
    const base = { file, owner };
    const ctx = { event: payload(base, user) };
    const job: ActiveJob = {
      file, owner, stream: undefined as never, startedAt: this.deps.clock.now() / 1000, startedMono: this.deps.clock.monotonic(),
      pausedAtMono: null, pausedTotalMs: 0, filepos: 0, estimator, pausePosition: null, pauseTemperature: null, pauseRequest: null,
      positionOnCancel: false,
    };
    const listener = {
      progress: (pos: number) => this.onProgress(job, pos),
      stateChanged: (s: string) => this.onState(job, s),
      finished: (outcome: JobOutcome, pos: number, error?: string) => {
        const p = this.onFinished(job, outcome, pos, error);
        // events.md: PrintDone/PrintFailed and the statistics come before PrinterStateChanged(OPERATIONAL).
        if (outcome !== 'error') this.deps.printer.holdStateEvents?.(p);
        job.finished = p;
        this.pending.add(p);
        void p.finally(() => this.pending.delete(p));
      },
    };
    // Job scripts whatever the origin (docs/reference/serial-protocol.md §15.7 makes no exception for SD prints).
    const [started, epilogue] = await Promise.all([resumeAt ? resumeAt.prologue : jobScript(this.deps, 'beforePrintStarted', ctx), jobScript(this.deps, 'afterPrintDone', ctx)]);
    const prologue = started;
    this.lastInterruption = null;
    this.liveJob = null;
    const offset = resumeAt?.offset ?? 0;
    const stream = await openDriver(this.deps, job, listener, { prologue, epilogue }, offset);
    if (!(stream instanceof SdJob)) this.liveJob = { origin: 'local', path: file.path, startOffset: offset, stream };
    job.stream = stream;
    this.job = job;
    this.selection = file;
    this.lastProgress = this.progressOf(job);
    this.deps.files.printingChanged(true);
    this.deps.events.emit('PrintStarted', payload(job, user ?? owner));
    this.deps.events.emit('ChartMarked', { type: 'print', label: 'Start' });
    if (stream instanceof SdJob) stream.start();
  }

  /** PrintPaused (naming `user`) and afterPrintPaused follow when the stream reports PAUSED (onState). */
  private pause(user: string | null): void {
    const job = this.job;
    if (!job) return;
    job.pauseRequest = { user, byFirmware: false };
    void job.stream.pause();
  }

  /**
   * `//action:…` from the firmware: what it asks for goes the way of the API (events, scripts); what it reports having
   * done itself (paused, resumed) gets the bookkeeping and events but no commands and no script.
   */
  private async onFirmwareAction(action: FirmwareJobAction, firmwareError?: string): Promise<void> {
    const job = this.job;
    if (!job || jobState(job) === 'CANCELLING') return;
    const paused = isPaused(job);
    switch (action) {
      case 'pause':
        if (!paused) this.pause(null);
        return;
      case 'paused':
        if (jobState(job) === 'PAUSED') return;
        job.pauseRequest = { user: null, byFirmware: true };
        await job.stream.pause(true);
        return;
      case 'resume':
      case 'resumed':
        if (paused) await this.resume(null, action === 'resumed');
        return;
      case 'cancel':
        await this.cancel(null, firmwareError);
    }
  }

  private async resume(user: string | null, byFirmware = false): Promise<void> {
    const job = this.job;
    if (!job) return;
    if (!byFirmware) {
      const lines = await this.script('beforePrintResumed', job, { pause_position: job.pausePosition ?? NULL_POSITION, pause_temperature: job.pauseTemperature ?? {} });
      if (lines.length) this.deps.printer.commands(lines);
    }
    if (job.pausedAtMono !== null) {
      job.pausedTotalMs += this.deps.clock.monotonic() - job.pausedAtMono;
      job.pausedAtMono = null;
    }
    job.pauseRequest = null;
    job.stream.resume(byFirmware);
    this.deps.events.emit('PrintResumed', payload(job, user));
    this.deps.events.emit('ChartMarked', { type: 'resume', label: 'Resume' });
  }

  private async cancel(user: string | null, firmwareError?: string): Promise<void> {
    const job = this.job;
    // Asked once: the job's `cancelled` is set before PrintCancelling, so a second cancel (a listener's included) does nothing.
    if (!job || job.cancelled) return;
    let queued!: { resolve: () => void; reject: (err: unknown) => void };
    job.cancelled = new Promise<void>((resolve, reject) => { queued = { resolve, reject }; });
    this.deps.events.emit('PrintCancelling', { ...payload(job, user), ...(firmwareError !== undefined ? { firmwareError } : {}) });
    const ended = job.stream.cancel();
    // Queued after the cancel marker, the script runs once the job's own queue is drained: heaters and motors off.
    // With a position query it waits for the stream's end, so cancel_position is the firmware's answer.
    const positioned = job.positionOnCancel ? ended.then(() => undefined, () => undefined) : Promise.resolve();
    this.sendCancelScript(job, positioned).then(queued.resolve, queued.reject);
    if (!job.positionOnCancel) await job.cancelled;
  }

  /** After `after`, the afterPrintCancelled script (heaters, fan, motors off by default) if the printer can take it. */
  private sendCancelScript(job: ActiveJob, after = Promise.resolve()): Promise<void> {
    const sent = after.then(async () => {
      const lines = await this.script('afterPrintCancelled', job, { cancel_position: this.deps.printer.lastPosition() });
      if (lines.length && this.deps.printer.isOperational()) this.deps.printer.commands(lines);
    });
    this.pending.add(sent);
    void sent.finally(() => this.pending.delete(sent));
    return sent;
  }

  private onProgress(job: ActiveJob, pos: number): void {
    job.filepos = pos;
    // SD listings often carry no size; the firmware's progress reports do.
    if (job.stream instanceof SdJob && job.stream.size > 0 && !job.file.size) job.file.size = job.stream.size;
    job.estimator.advance(pos, this.printTimeMs(job) / 1000);
    if (this.job === job) this.lastProgress = this.progressOf(job);
  }

  private onState(job: ActiveJob, state: string): void {
    if (state === 'PAUSED' && this.job === job) {
      job.pausedAtMono = this.deps.clock.monotonic();
      job.pausePosition = this.deps.printer.lastPosition();
      job.pauseTemperature = this.deps.printer.temperatures();
      this.deps.events.emit('PrintPaused', { ...payload(job, job.pauseRequest?.user ?? null), position: { ...job.pausePosition } });
      this.deps.events.emit('ChartMarked', { type: 'pause', label: 'Pause' });
      if (job.pauseRequest?.byFirmware) return;
      void this.script('afterPrintPaused', job, { pause_position: job.pausePosition, pause_temperature: job.pauseTemperature })
        .then((lines) => { if (lines.length && this.deps.printer.isOperational()) this.deps.printer.commands(lines); })
        .catch(() => {});
    }
  }

  private async onFinished(job: ActiveJob, outcome: JobOutcome, pos: number, error?: string): Promise<void> {
    job.filepos = pos;
    const time = this.printTimeMs(job) / 1000;
    const base = payload(job);
    if (this.job === job) this.job = undefined;
    this.deps.files.printingChanged(false);
    const profile = this.deps.printer.profile().id;
    const progress = this.progressOf(job);
    this.lastProgress = outcome === 'done' ? { ...progress, completion: 100, printTimeLeft: 0, printTimeLeftOrigin: null } : progress;
    if (outcome === 'error') this.lastInterruption = this.deps.interruption?.(error) ?? null;
    // A print that failed on the host's side (its file unreadable or written over) leaves the printer connected, hot and
    // holding its motors, for as long as nobody looks: it gets a cancel's script. The next start waits for it.
    if (outcome === 'error' && job.file.origin === 'local' && this.deps.printer.isOperational()) this.afterFailure = this.sendCancelScript(job);
    const failedAfterStatistics = emitEnd(this.deps.events, job, outcome, { base, time, error, interruption: this.lastInterruption,
      position: () => this.deps.printer.lastPosition() });
    try {
      await recordEnd(this.deps, job, { outcome, time, end: this.deps.clock.now() / 1000, error, profile, interruption: this.lastInterruption });
      if (job.file.origin === 'local' && this.selection?.origin === 'local' && this.selection.path === job.file.path) {
        this.stats = await fileStatistics(this.deps.files, this.deps.printer.profile().id, job.file.path);
      }
    } catch (err) {
      this.deps.logger.warn({ err }, 'print history not recorded');
    } finally {
      if (failedAfterStatistics) this.deps.events.emit('PrintFailed', failedAfterStatistics);
    }
  }

  // ---------------------------------------------------------------- snapshots

  private progressOf(job: ActiveJob): JobProgressSnapshot {
    // The streamer reports progress per read batch; its live position is finer (every line handed to the firmware).
    return progressOf(job, this.printTimeMs(job) / 1000, this.job === job);
  }

  /** Files in use by the job (push `busyFiles`). */
  busyFiles(): Array<{ origin: string; path: string }> {
    return this.job ? [{ origin: this.job.file.origin, path: this.job.file.path }] : [];
  }

  /** Job information for GET /api/job and the push channel. */
  snapshot(): JobSnapshot {
    if (this.job) this.lastProgress = this.progressOf(this.job);
    const file = this.job?.file ?? this.selection;
    return jobDocument(file, this.stats, this.job?.owner ?? file?.user ?? null, this.lastProgress);
  }

  /** State text for the job: the printer's, whose one job lifecycle every driver (streamed or SD) moves. */
  stateText(): string {
    return this.deps.printer.state().text;
  }
}
