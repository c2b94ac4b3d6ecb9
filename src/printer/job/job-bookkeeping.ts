// What the job runner keeps about the running job and what a job leaves behind: print time without pauses, progress,
// the Print* payload, the rendered job scripts, the job document (GET /api/job), and the history entry and file
// statistics of a finished print.
import type { EventBus } from '../../core/event-bus.ts';
import type { EventPosition, JobEventPayload } from '../../core/events.ts';
import type { Logger } from '../../core/logger.ts';
import type { FileService } from '../../files/file-service.ts';
import type { JobState } from './job-lifecycle.ts';
import type { JobProgressSnapshot, JobSerialSettings, JobSnapshot, SelectedFile } from './job-types.ts';
import type { PrintHistory, PrintHistoryEntry } from './print-history.ts';
import type { ProgressEstimator } from './progress-estimator.ts';
import { renderJobScript, type ScriptSource } from './job-scripts.ts';
import { stat } from 'node:fs/promises';
import { SdJob } from './sd-job.ts';
import { fileLineSource } from './file-line-source.ts';
import { watchM73 } from './progress-estimator.ts';
import type { JobOutcome, JobStream, JobStreamListener, Position, Printer } from '../types.ts';
import type { JobLineFilter } from './job-stream.ts';

/** The running job (host-streamed or SD); its state is the stream's (the job lifecycle). */
export interface ActiveJob {
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
  /** The firmware paused by itself (`//action:paused`): no afterPrintPaused script. */
  pausedByFirmware: boolean;
  /** Who asked for the pause under way (PrintPaused's `user`); null when the firmware did. */
  pauseUser: string | null;
  /** The stream queries the position when cancelled (see logPositionOnCancel). */
  positionOnCancel: boolean;
  /** Set by cancel: resolves once the afterPrintCancelled script is queued (restart waits for it). */
  cancelled?: Promise<void>;
  /** Set when the stream ends: resolves once history, statistics and the last Print* event are done. */
  finished?: Promise<void>;
}

export const NULL_POSITION: EventPosition = { x: null, y: null, z: null, e: null, t: null, f: null };
export const IDLE_PROGRESS: Readonly<JobProgressSnapshot> = { completion: null, filepos: null, printTime: null, printTimeLeft: null, printTimeLeftOrigin: null };

/** Where the job is in its lifecycle (ENDED once the stream finished). */
export function jobState(job: ActiveJob): JobState | 'ENDED' {
  return job.stream.state;
}

export function isPaused(job: ActiveJob): boolean {
  const s = jobState(job);
  return s === 'PAUSED' || s === 'PAUSING';
}

export function printTimeMs(job: ActiveJob, now: number): number {
  const paused = job.pausedAtMono !== null ? now - job.pausedAtMono : 0;
  return Math.max(0, now - job.startedMono - job.pausedTotalMs - paused);
}

export function payload(job: { file: SelectedFile; owner: string | null }, user?: string | null): JobEventPayload {
  return {
    name: job.file.name, path: job.file.path, origin: job.file.origin, size: job.file.size,
    ...(job.owner ? { owner: job.owner } : {}), ...(user ? { user } : {}),
  };
}

/** Progress at `printTime` seconds; the live stream's position is finer than the last progress report. */
export function progressOf(job: ActiveJob, printTime: number, live: boolean): JobProgressSnapshot {
  if (live && job.stream) {
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

/** State text for an SD job: the link's state does not show it all, so it reports its own. */
export function sdStateText(job: ActiveJob, printerState: { id: string; text: string }): string {
  if (printerState.id === 'FINISHING') return printerState.text;
  const s = jobState(job);
  return s === 'PAUSED' ? 'Paused' : s === 'CANCELLING' ? 'Cancelling' : s === 'PAUSING' ? 'Pausing' : 'Printing from SD';
}

/** A job script's context: the printer's last position and temperatures, the job's event payload, and `extra`. */
export function scriptContext(printer: Printer, job: ActiveJob | undefined, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { last_position: printer.lastPosition(), last_temperature: printer.temperatures(), ...(job ? { event: payload(job) } : {}), ...extra };
}

/** Renders a job script (empty when it is missing or fails) and fires GcodeScript<Name>Running/Finished. */
export async function jobScript(deps: { scripts: ScriptSource; events: EventBus; logger: Logger }, name: string, ctx: Record<string, unknown>): Promise<string[]> {
  try {
    const lines = await renderJobScript(name, deps.scripts, ctx);
    if (lines === null) return [];
    // Internal events for event subscriptions (never pushed to clients).
    const event = name.charAt(0).toUpperCase() + name.slice(1);
    const p = (ctx.event as Record<string, unknown> | undefined) ?? null;
    deps.events.emit(`GcodeScript${event}Running`, p);
    deps.events.emit(`GcodeScript${event}Finished`, p);
    return lines;
  } catch (err) {
    deps.logger.warn({ err, script: name }, 'script failed to render');
    return [];
  }
}

/** The print history entry and, for a local file, its print statistics. */
export async function recordEnd(deps: { history: PrintHistory; files: FileService; historyExtras?: () => Pick<PrintHistoryEntry, 'spools'>; cancelledObjects?: () => string[] }, job: ActiveJob, r: {
  outcome: JobOutcome; time: number; end: number; error?: string; profile: string; interruption: PrintHistoryEntry['interruption'] | null;
}): Promise<void> {
  const result = r.outcome === 'done' ? 'success' : r.outcome === 'cancelled' ? 'cancelled' : 'failed';
  const cancelledObjects = job.file.origin === 'local' ? (deps.cancelledObjects?.() ?? []) : [];
  await deps.history.add({ origin: job.file.origin, path: job.file.path, name: job.file.name, start: job.startedAt, end: r.end,
    duration: r.time, result, ...(r.error ? { error: r.error } : {}), user: job.owner, printerProfile: r.profile,
    ...(cancelledObjects.length > 0 ? { cancelledObjects } : {}),
    ...(r.outcome === 'error' && r.interruption ? { interruption: r.interruption } : {}), ...deps.historyExtras?.() });
  if (job.file.origin === 'local') {
    await deps.files.recordPrint(job.file.path, { timestamp: r.end, success: r.outcome === 'done',
      ...(r.outcome === 'done' ? { printTime: r.time } : {}), printerProfile: r.profile });
  }
}

/**
 * The end's events: PrintDone, PrintCancelled (with where it stopped) or PrintFailed (with the interruption). For a
 * cancel, returns the PrintFailed to send once the statistics are written (events.md: PrintCancelled → ChartMarked →
 * MetadataStatisticsUpdated → PrintFailed; OctoPrint repeats the cancel's payload).
 */
export function emitEnd(events: EventBus, job: ActiveJob, outcome: JobOutcome, r: {
  base: JobEventPayload; time: number; error?: string; interruption: PrintHistoryEntry['interruption'] | null; position: () => Position;
}): (JobEventPayload & { time: number; reason: 'cancelled'; position: EventPosition }) | undefined {
  const { base, time } = r;
  if (outcome === 'done') {
    events.emit('ChartMarked', { type: 'done', label: 'Done' });
    events.emit('PrintDone', { ...base, time });
    return undefined;
  }
  if (outcome === 'cancelled') {
    // Only a position this job asked for is where it stopped (an SD print is never asked; the setting may change mid-print).
    const position = job.positionOnCancel ? { ...r.position() } : { ...NULL_POSITION };
    const cancelled = { ...base, time, reason: 'cancelled' as const, position };
    events.emit('PrintCancelled', cancelled);
    events.emit('ChartMarked', { type: 'cancel', label: 'Cancel' });
    return { ...cancelled, position: { ...position } };
  }
  events.emit('PrintFailed', { ...base, time, reason: 'error', error: r.error ?? 'unknown error', ...(r.interruption ? { interruption: r.interruption } : {}) });
  return undefined;
}

/** What a driver needs to be opened. */
export interface DriverDeps {
  printer: Printer;
  files: FileService;
  config?: { get(): { serial: JobSerialSettings } };
  lineFilter?: (path: string, offset: number) => JobLineFilter | null;
}

/**
 * The job's driver: the firmware's own SD print, or the host streaming the stored file from byte `offset` (its size
 * is read now, and a cancel asks for the position when serial.logPositionOnCancel is on). The SD one starts later.
 */
export async function openDriver(deps: DriverDeps, job: ActiveJob, listener: JobStreamListener, scripts: { prologue: string[]; epilogue: string[] },
  offset: number): Promise<JobStream | SdJob> {
  const { prologue, epilogue } = scripts;
  if (job.file.origin === 'sdcard') {
    const serial = deps.config?.get().serial;
    return new SdJob(deps.printer, job.file.path, listener, {
      pollSeconds: serial?.timeout.sdStatus ?? 1, logPositionOnPause: serial?.logPositionOnPause ?? true,
      positionLogWaitMs: (serial?.timeout.positionLogWait ?? 10) * 1000,
      prologue, epilogue,
    });
  }
  const abs = await deps.files.absolutePath(job.file.path);
  job.file.size = (await stat(abs)).size;
  job.positionOnCancel = deps.config?.get().serial.logPositionOnCancel ?? false;
  const onCancel = job.positionOnCancel ? ['M400', 'M114'] : [];
  const lineFilter = deps.lineFilter?.(job.file.path, offset) ?? null;
  const stream = deps.printer.streamJob(watchM73(fileLineSource(abs, offset), job.estimator), listener, { prologue, epilogue, onCancel, lineFilter });
  job.filepos = offset;
  return stream;
}

/** The job document (GET /api/job, the push channel): the selected or printed file with its statistics, or nulls. */
export function jobDocument(file: SelectedFile | undefined, stats: { average: number | null; last: number | null }, user: string | null,
  progress: JobProgressSnapshot | null): JobSnapshot {
  if (!file) return { file: undefined, estimatedPrintTime: null, averagePrintTime: null, lastPrintTime: null, filament: null, user: null, progress };
  const analysis = file.analysis;
  return {
    file,
    // The statistical total of docs/reference/gcode-analysis.md §6.1/§6.4: earlier prints on this profile, else the analysis.
    estimatedPrintTime: stats.average ?? analysis?.estimatedPrintTime ?? null,
    averagePrintTime: stats.average,
    lastPrintTime: stats.last,
    filament: analysis?.filament ?? null,
    user,
    progress,
  };
}
