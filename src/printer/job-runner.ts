// Job runner: the selected file and the print job — select/start/pause/resume/cancel/restart with the transition
// rules of docs/reference/interface-spec.md, streaming a stored file line by line through the printer link, job
// scripts, progress and time-left estimation, Print* events and the print history.
import { stat } from 'node:fs/promises';
import { DomainError, ErrorCodes, conflict, invalid, notOperational } from '../core/errors.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { JobEventPayload, EventPosition } from '../core/events.ts';
import type { Logger } from '../core/logger.ts';
import type { Clock } from '../core/clock.ts';
import type { FileService } from '../files/file-service.ts';
import type { FileUsage, Origin } from '../files/types.ts';
import { isMachineCode } from '../files/file-types.ts';
import type { GcodeAnalysis } from '../files/analysis/types.ts';
import type { FirmwareJobAction, JobOutcome, JobStream, Position, Printer } from './types.ts';
import type { JobControl, JobOrigin, JobProgressSnapshot, JobSnapshot, PauseAction, SelectedFile } from './job-types.ts';
import { fileLineSource } from './file-line-source.ts';
import { ProgressEstimator, watchM73 } from './progress-estimator.ts';
import { describeFile, fileStatistics } from './job-files.ts';
import type { PrintHistory, PrintHistoryEntry } from './print-history.ts';
import { renderJobScript, type ScriptSource } from './scripts.ts';
import { SdJob } from './sd-job.ts';

export interface JobRunnerDeps {
  printer: Printer;
  files: FileService;
  events: EventBus;
  logger: Logger;
  clock: Clock;
  history: PrintHistory;
  scripts: ScriptSource;
  /** Seconds between M27 polls while printing from SD. */
  sdPollInterval?: () => number;
  /** serial.logPositionOnPause and serial.timeout.positionLogWait (seconds), for pauses of SD prints. */
  sdPausePosition?: () => { log: boolean; waitSeconds: number };
  /**
   * serial.logPositionOnCancel: a cancelled stream asks the firmware for its position (M400, M114) before it ends, and
   * PrintCancelled and the afterPrintCancelled script get it; otherwise PrintCancelled carries nulls.
   */
  logPositionOnCancel?: () => boolean;
  /**
   * Asked (synchronously) when a print ends with an error: why and where it stopped, from the recovery journal. It
   * goes into PrintFailed (`interruption`), the print history and GET /api/job.
   */
  interruption?: (error: string | undefined) => JobInterruption | null;
}

/** Why and where a print stopped (Gantry addition). */
export interface JobInterruption {
  cause: string;
  filepos: number | null;
  line: number | null;
  [key: string]: unknown;
}

/** What the recovery journal reads of the running stream (now and then, never per line). */
export interface LiveJob {
  origin: JobOrigin;
  path: string;
  /** Byte offset the streaming started from (non-zero for a resumed print). */
  startOffset: number;
  stream: JobStream;
}

/** The running job (host-streamed or SD). */
interface ActiveJob {
  file: SelectedFile;
  owner: string | null;
  stream: JobStream | SdJob;
  startedAt: number;
  startedMono: number;
  pausedAtMono: number | null;
  pausedTotalMs: number;
  filepos: number;
  estimator: ProgressEstimator;
  pausePosition: Position | null;
  pauseTemperature: Record<string, unknown> | null;
  state: 'printing' | 'pausing' | 'paused' | 'cancelling';
  /** The firmware paused by itself (`//action:paused`): no afterPrintPaused script. */
  pausedByFirmware: boolean;
  /** The stream queries the position when cancelled (see logPositionOnCancel). */
  positionOnCancel: boolean;
  /** Set by cancel: resolves once the afterPrintCancelled script is queued (restart waits for it). */
  cancelled?: Promise<void>;
  /** Set when the stream ends: resolves once history, statistics and the last Print* event are done. */
  finished?: Promise<void>;
}

const NULL_POSITION: EventPosition = { x: null, y: null, z: null, e: null, t: null, f: null };

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
    this.lastProgress = this.idleProgress();
    this.deps.events.emit('FileSelected', {
      name: file.name, path: file.path, origin: file.origin, size: file.size, ...(file.user ? { owner: file.user, user: file.user } : {}),
    });
    if (opts.print) await this.startJob(opts.user ?? null);
  }

  unselect(): void {
    if (!this.selection) return;
    this.selection = undefined;
    this.lastProgress = this.idleProgress();
    this.deps.events.emit('FileDeselected', {});
  }

  // ---------------------------------------------------------------- job commands (POST /api/job)

  /**
   * Applies a job command with the transition table of docs/reference/interface-spec.md (States and transitions);
   * throws 409 (conflict/not operational) or 400.
   */
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
        if (!paused || paused.state !== 'paused') throw conflict('Can only restart a paused job');
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
        const paused = this.job.state === 'paused' || this.job.state === 'pausing';
        if (this.job.state === 'cancelling') return;
        if (action === 'pause' || (action === 'toggle' && !paused)) {
          if (!paused) this.pause(user);
        } else if (paused) {
          await this.resume(user);
        }
      }
    }
  }

  private payload(job: { file: SelectedFile; owner: string | null }, user?: string | null): JobEventPayload {
    return {
      name: job.file.name, path: job.file.path, origin: job.file.origin, size: job.file.size,
      ...(job.owner ? { owner: job.owner } : {}), ...(user ? { user } : {}),
    };
  }

  private printTimeMs(job: ActiveJob): number {
    const now = this.deps.clock.monotonic();
    const paused = job.pausedAtMono !== null ? now - job.pausedAtMono : 0;
    return Math.max(0, now - job.startedMono - job.pausedTotalMs - paused);
  }

  private scriptContext(job: ActiveJob | undefined, extra: Record<string, unknown> = {}): Record<string, unknown> {
    const p = this.deps.printer;
    return {
      last_position: p.lastPosition(), last_temperature: p.temperatures(),
      ...(job ? { event: this.payload(job) } : {}), ...extra,
    };
  }

  private async script(name: string, ctx: Record<string, unknown>): Promise<string[]> {
    try {
      const lines = await renderJobScript(name, this.deps.scripts, ctx);
      if (lines === null) return [];
      // Internal events for event subscriptions (never pushed to clients).
      const event = name.charAt(0).toUpperCase() + name.slice(1);
      const payload = (ctx.event as Record<string, unknown> | undefined) ?? null;
      this.deps.events.emit(`GcodeScript${event}Running`, payload);
      this.deps.events.emit(`GcodeScript${event}Finished`, payload);
      return lines;
    } catch (err) {
      this.deps.logger.warn({ err, script: name }, 'script failed to render');
      return [];
    }
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
    const sel = this.selection;
    if (!sel) throw conflict('No file selected');
    const file = sel.origin === 'local' ? await describeFile(this.deps, 'local', sel.path, sel.user) : sel;
    const owner = user ?? sel.user;
    const average = await this.averagePrintTime(file);
    const estimator = new ProgressEstimator({
      size: file.size ?? 0, analysisTime: file.analysis?.estimatedPrintTime ?? null, averageTime: average,
      timeline: file.analysis?.gantry?.timeline ?? null,
    });
    const base = { file, owner };
    const ctx = { event: this.payload(base, user) };
    let stream: JobStream | SdJob;
    const job: ActiveJob = {
      file, owner, stream: undefined as never, startedAt: this.deps.clock.now() / 1000, startedMono: this.deps.clock.monotonic(),
      pausedAtMono: null, pausedTotalMs: 0, filepos: 0, estimator, pausePosition: null, pauseTemperature: null, state: 'printing', pausedByFirmware: false,
      positionOnCancel: false,
    };
    const listener = {
      progress: (pos: number) => this.onProgress(job, pos),
      stateChanged: (s: string) => this.onState(job, s),
      finished: (outcome: JobOutcome, pos: number, error?: string) => {
        const p = this.onFinished(job, outcome, pos, error);
        // docs/reference/events.md: PrintDone/PrintFailed and the statistics come before
        // PrinterStateChanged(OPERATIONAL).
        if (outcome !== 'error') this.deps.printer.holdStateEvents?.(p);
        job.finished = p;
        this.pending.add(p);
        void p.finally(() => this.pending.delete(p));
      },
    };
    // Job scripts whatever the origin (docs/reference/serial-protocol.md §15.7 makes no exception for SD prints).
    const [started, epilogue] = await Promise.all([resumeAt ? resumeAt.prologue : this.script('beforePrintStarted', ctx), this.script('afterPrintDone', ctx)]);
    const prologue = started;
    this.lastInterruption = null;
    this.liveJob = null;
    if (file.origin === 'sdcard') {
      const pausePosition = this.deps.sdPausePosition?.() ?? { log: true, waitSeconds: 10 };
      stream = new SdJob(this.deps.printer, file.path, listener, {
        pollSeconds: this.deps.sdPollInterval?.() ?? 1, logPositionOnPause: pausePosition.log, positionLogWaitMs: pausePosition.waitSeconds * 1000,
        prologue, epilogue,
      });
    } else {
      const abs = await this.deps.files.absolutePath(file.path);
      const size = (await stat(abs)).size;
      file.size = size;
      job.positionOnCancel = this.deps.logPositionOnCancel?.() ?? false;
      const onCancel = job.positionOnCancel ? ['M400', 'M114'] : [];
      const offset = resumeAt?.offset ?? 0;
      stream = this.deps.printer.streamJob(watchM73(fileLineSource(abs, offset), estimator), listener, { prologue, epilogue, onCancel });
      job.filepos = offset;
      this.liveJob = { origin: 'local', path: file.path, startOffset: offset, stream };
    }
    job.stream = stream;
    this.job = job;
    this.selection = file;
    this.lastProgress = this.progressOf(job);
    this.deps.files.printingChanged(true);
    this.deps.events.emit('PrintStarted', this.payload(job, user ?? owner));
    this.deps.events.emit('ChartMarked', { type: 'print', label: 'Start' });
    if (stream instanceof SdJob) stream.start();
  }

  private pause(user: string | null): void {
    const job = this.job;
    if (!job) return;
    job.state = 'pausing';
    void job.stream.pause().then(() => undefined);
    void user;
  }

  /**
   * `//action:…` from the firmware: what it asks for goes the way of the API (events, scripts); what it reports having
   * done itself (paused, resumed) gets the bookkeeping and events but no commands and no script.
   */
  private async onFirmwareAction(action: FirmwareJobAction, firmwareError?: string): Promise<void> {
    const job = this.job;
    if (!job || job.state === 'cancelling') return;
    const paused = job.state === 'paused' || job.state === 'pausing';
    switch (action) {
      case 'pause':
        if (!paused) this.pause(null);
        return;
      case 'paused':
        if (job.state === 'paused') return;
        job.state = 'pausing';
        job.pausedByFirmware = true;
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
      const lines = await this.script('beforePrintResumed', this.scriptContext(job, {
        pause_position: job.pausePosition ?? NULL_POSITION, pause_temperature: job.pauseTemperature ?? {},
      }));
      if (lines.length) this.deps.printer.commands(lines);
    }
    if (job.pausedAtMono !== null) {
      job.pausedTotalMs += this.deps.clock.monotonic() - job.pausedAtMono;
      job.pausedAtMono = null;
    }
    job.state = 'printing';
    job.pausedByFirmware = false;
    job.stream.resume(byFirmware);
    this.deps.events.emit('PrintResumed', this.payload(job, user));
    this.deps.events.emit('ChartMarked', { type: 'resume', label: 'Resume' });
  }

  private async cancel(user: string | null, firmwareError?: string): Promise<void> {
    const job = this.job;
    if (!job || job.state === 'cancelling') return;
    job.state = 'cancelling';
    this.deps.events.emit('PrintCancelling', { ...this.payload(job, user), ...(firmwareError !== undefined ? { firmwareError } : {}) });
    const ended = job.stream.cancel();
    // Queued after the cancel marker, the script runs once the job's own queue is drained: heaters and motors off.
    // With a position query it waits for the stream's end, so cancel_position is the firmware's answer.
    const positioned = job.positionOnCancel ? ended.then(() => undefined, () => undefined) : Promise.resolve();
    job.cancelled = positioned.then(async () => {
      const lines = await this.script('afterPrintCancelled', this.scriptContext(job, { cancel_position: this.deps.printer.lastPosition() }));
      if (lines.length && this.deps.printer.isOperational()) this.deps.printer.commands(lines);
    });
    this.pending.add(job.cancelled);
    void job.cancelled.finally(() => this.pending.delete(job.cancelled!));
    if (!job.positionOnCancel) await job.cancelled;
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
      job.state = 'paused';
      job.pausedAtMono = this.deps.clock.monotonic();
      job.pausePosition = this.deps.printer.lastPosition();
      job.pauseTemperature = this.deps.printer.temperatures();
      this.deps.events.emit('PrintPaused', { ...this.payload(job), position: { ...job.pausePosition } });
      this.deps.events.emit('ChartMarked', { type: 'pause', label: 'Pause' });
      if (job.pausedByFirmware) return;
      void this.script('afterPrintPaused', this.scriptContext(job, { pause_position: job.pausePosition, pause_temperature: job.pauseTemperature }))
        .then((lines) => { if (lines.length && this.deps.printer.isOperational()) this.deps.printer.commands(lines); })
        .catch(() => {});
    } else if (state === 'PRINTING' && job.state !== 'cancelling') {
      job.state = 'printing';
    }
  }

  private async onFinished(job: ActiveJob, outcome: JobOutcome, pos: number, error?: string): Promise<void> {
    job.filepos = pos;
    const time = this.printTimeMs(job) / 1000;
    const base = this.payload(job);
    if (this.job === job) this.job = undefined;
    this.deps.files.printingChanged(false);
    const profile = this.deps.printer.profile().id;
    let failedAfterStatistics: JobEventPayload & { time: number; reason: 'cancelled'; position: EventPosition } | undefined;
    if (outcome === 'done') {
      this.lastProgress = { ...this.progressOf(job), completion: 100, printTimeLeft: 0, printTimeLeftOrigin: null };
      this.deps.events.emit('ChartMarked', { type: 'done', label: 'Done' });
      this.deps.events.emit('PrintDone', { ...base, time });
    } else if (outcome === 'cancelled') {
      this.lastProgress = this.progressOf(job);
      // Only a position this job asked for is where it stopped (an SD print is never asked; the setting may change mid-print).
      const position = job.positionOnCancel ? { ...this.deps.printer.lastPosition() } : { ...NULL_POSITION };
      const cancelled = { ...base, time, reason: 'cancelled' as const, position };
      this.deps.events.emit('PrintCancelled', cancelled);
      this.deps.events.emit('ChartMarked', { type: 'cancel', label: 'Cancel' });
      // docs/reference/events.md: PrintCancelled → ChartMarked → MetadataStatisticsUpdated → PrintFailed. OctoPrint
      // repeats the cancel's payload, so a PrintFailed subscriber sees where the print stopped too.
      failedAfterStatistics = { ...cancelled, position: { ...position } };
    } else {
      this.lastProgress = this.progressOf(job);
      this.lastInterruption = this.deps.interruption?.(error) ?? null;
      this.deps.events.emit('PrintFailed', { ...base, time, reason: 'error', error: error ?? 'unknown error',
        ...(this.lastInterruption ? { interruption: this.lastInterruption } : {}) });
    }
    const end = this.deps.clock.now() / 1000;
    const result = outcome === 'done' ? 'success' : outcome === 'cancelled' ? 'cancelled' : 'failed';
    try {
      await this.deps.history.add({ origin: job.file.origin, path: job.file.path, name: job.file.name, start: job.startedAt, end,
        duration: time, result, ...(error ? { error } : {}), user: job.owner, printerProfile: profile,
        ...(outcome === 'error' && this.lastInterruption ? { interruption: this.lastInterruption } : {}) });
      if (job.file.origin === 'local') {
        await this.deps.files.recordPrint(job.file.path, { timestamp: end, success: outcome === 'done',
          ...(outcome === 'done' ? { printTime: time } : {}), printerProfile: profile });
        if (this.selection?.origin === 'local' && this.selection.path === job.file.path) this.stats = await fileStatistics(this.deps.files, this.deps.printer.profile().id, job.file.path);
      }
    } catch (err) {
      this.deps.logger.warn({ err }, 'print history not recorded');
    } finally {
      if (failedAfterStatistics) this.deps.events.emit('PrintFailed', failedAfterStatistics);
    }
  }

  // ---------------------------------------------------------------- snapshots

  private idleProgress(): JobProgressSnapshot {
    return { completion: null, filepos: null, printTime: null, printTimeLeft: null, printTimeLeftOrigin: null };
  }

  private progressOf(job: ActiveJob): JobProgressSnapshot {
    const printTime = this.printTimeMs(job) / 1000;
    // The streamer reports progress per read batch; its live position is finer (every line handed to the firmware).
    if (this.job === job && job.stream) {
      job.filepos = Math.max(job.filepos, job.stream.filepos);
      job.estimator.advance(job.filepos, printTime);
    }
    const left = job.estimator.timeLeft(job.filepos, printTime);
    const size = job.file.size ?? 0;
    return {
      completion: size > 0 ? Math.min(100, (job.filepos / size) * 100) : null,
      filepos: job.filepos,
      printTime: Math.round(printTime),
      printTimeLeft: left.seconds,
      printTimeLeftOrigin: left.origin,
    };
  }

  private async averagePrintTime(file: SelectedFile): Promise<number | null> {
    if (file.origin !== 'local') return null;
    return (await fileStatistics(this.deps.files, this.deps.printer.profile().id, file.path)).average;
  }

  /** Files in use by the job (push `busyFiles`). */
  busyFiles(): Array<{ origin: string; path: string }> {
    return this.job ? [{ origin: this.job.file.origin, path: this.job.file.path }] : [];
  }

  /** Job information for GET /api/job and the push channel. */
  snapshot(): JobSnapshot {
    if (this.job) this.lastProgress = this.progressOf(this.job);
    const file = this.job?.file ?? this.selection;
    if (!file) {
      return { file: undefined, estimatedPrintTime: null, averagePrintTime: null, lastPrintTime: null, filament: null, user: null, progress: this.lastProgress };
    }
    const stats = this.stats;
    const analysis = file.analysis;
    return {
      file,
      // The statistical total of docs/reference/gcode-analysis.md §6.1/§6.4: earlier prints on this profile, else the
      // analysis.
      estimatedPrintTime: stats.average ?? analysis?.estimatedPrintTime ?? null,
      averagePrintTime: stats.average,
      lastPrintTime: stats.last,
      filament: analysis?.filament ?? null,
      user: this.job?.owner ?? file.user,
      progress: this.lastProgress,
    };
  }

  /** State text for the job: SD jobs are not visible in the link's state, so they report their own. */
  stateText(): string {
    const job = this.job;
    if (job?.stream instanceof SdJob) {
      if (this.deps.printer.state().id === 'FINISHING') return this.deps.printer.state().text;
      return job.state === 'paused' ? 'Paused' : job.state === 'cancelling' ? 'Cancelling' : job.state === 'pausing' ? 'Pausing' : 'Printing from SD';
    }
    return this.deps.printer.state().text;
  }
}
