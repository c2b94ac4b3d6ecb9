// The running job as the job runner keeps it (host-streamed or SD): what it was asked (pause, cancel), its print time
// without pauses, its progress and its Print* payload. Its state is the job lifecycle's (job-lifecycle.ts).
import type { EventPosition, JobEventPayload } from '../../core/events.ts';
import type { JobState } from './job-lifecycle.ts';
import type { JobProgressSnapshot, SelectedFile } from './job-types.ts';
import type { ProgressEstimator, SkippedSpans } from './progress-estimator.ts';
import type { SdJob } from './sd-job.ts';
import type { JobStream, Position } from '../types.ts';

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
  /**
   * The pause asked for and not yet resumed: who asked (PrintPaused's `user`; null: the firmware), and whether the
   * firmware paused by itself (`//action:paused`: no afterPrintPaused script). Its state is the lifecycle's.
   */
  pauseRequest: { user: string | null; byFirmware: boolean } | null;
  /** The stream queries the position when cancelled (see logPositionOnCancel). */
  positionOnCancel: boolean;
  /**
   * Set the moment a cancel is asked for (before PrintCancelling, so a second cancel does nothing): resolves once the
   * afterPrintCancelled script is queued (restart waits for it).
   */
  cancelled?: Promise<void>;
  /** The file's spans the print leaves out (cancelled objects, from the job's line filter). */
  skipped?: () => SkippedSpans;
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
  if (job.skipped) job.estimator.setSkipped(job.skipped());
  const left = job.estimator.timeLeft(job.filepos, printTime);
  const size = job.file.size ?? 0;
  return {
    // Bytes, as OctoPrint counts; a cancelled object's bytes are counted out of the job (progress-estimator.ts).
    completion: size > 0 ? Math.min(100, job.estimator.byteFraction(job.filepos) * 100) : null,
    filepos: job.filepos,
    printTime: Math.round(printTime),
    printTimeLeft: left.seconds,
    printTimeLeftOrigin: left.origin,
  };
}
