// Public surface of the job runner for other modules (files routes, push channel, recovery): selection, job control,
// snapshots, the live job and its dependencies.
import type { GcodeAnalysis } from '../../files/analysis/types.ts';
import type { Clock } from '../../core/clock.ts';
import type { EventBus } from '../../core/event-bus.ts';
import type { Logger } from '../../core/logger.ts';
import type { FileService } from '../../files/file-service.ts';
import type { PrintHistory, PrintHistoryEntry } from './print-history.ts';
import type { ScriptSource } from './job-scripts.ts';
import type { JobStream, Printer } from '../types.ts';
import type { JobLineFilter } from './job-stream.ts';

export type JobOrigin = 'local' | 'sdcard';

export interface SelectedFile {
  origin: JobOrigin;
  /** Path within the origin (SD: the SD name without a leading slash). */
  path: string;
  name: string;
  display: string;
  size: number | null;
  /** Unix seconds, or null. */
  date: number | null;
  /** User who selected the file. */
  user: string | null;
  analysis?: GcodeAnalysis;
}

export interface JobProgressSnapshot {
  /** Percent 0..100, or null without a job. */
  completion: number | null;
  filepos: number | null;
  printTime: number | null;
  printTimeLeft: number | null;
  printTimeLeftOrigin: string | null;
}

export interface JobSnapshot {
  file: SelectedFile | undefined;
  estimatedPrintTime: number | null;
  averagePrintTime: number | null;
  lastPrintTime: number | null;
  filament: Record<string, { length: number; volume: number }> | null;
  user: string | null;
  /** null until the first progress update after start-up (OctoPrint's printTimeOrigin quirk). */
  progress: JobProgressSnapshot | null;
}

export type PauseAction = 'pause' | 'resume' | 'toggle';

/** What the files routes need from the job side. */
export interface JobControl {
  /** Operational, no job, no SD transfer. */
  isReady(): boolean;
  isOperational(): boolean;
  selected(): SelectedFile | undefined;
  /** Selects a file (404 missing, 415 not machine code, 409 printer not ready); `print` starts it at once. */
  select(origin: JobOrigin, path: string, opts?: { print?: boolean; user?: string }): Promise<void>;
  unselect(): void;
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

/** What a job reads of the serial settings. */
export interface JobSerialSettings {
  /** Seconds between M27 polls while printing from SD (`timeout.sdStatus`). */
  timeout: { sdStatus: number; positionLogWait: number };
  /** Pauses of SD prints log the position, waiting up to `timeout.positionLogWait` seconds for it. */
  logPositionOnPause: boolean;
  /**
   * A cancelled stream asks the firmware for its position (M400, M114) before it ends, and PrintCancelled and the
   * afterPrintCancelled script get it; otherwise PrintCancelled carries nulls.
   */
  logPositionOnCancel: boolean;
}

export interface JobRunnerDeps {
  printer: Printer;
  files: FileService;
  events: EventBus;
  logger: Logger;
  clock: Clock;
  history: PrintHistory;
  scripts: ScriptSource;
  /** The job's slice of the settings (`config.slice('serial')`), read when a job starts; absent, the defaults. */
  config?: { get(): { serial: JobSerialSettings } };
  /**
   * Asked (synchronously) when a print ends with an error: why and where it stopped, from the recovery journal. It
   * goes into PrintFailed (`interruption`), the print history and GET /api/job.
   */
  interruption?: (error: string | undefined) => JobInterruption | null;
  /**
   * Asked before a print starts (not a recovered one): a DomainError refuses it (Spoolman: the active spool has too
   * little filament left, src/spools/). Its time counts before PrintStarted.
   */
  beforeStart?: (file: SelectedFile) => Promise<void>;
  /** What the print history records besides the job's own fields (the spools of the print, src/spools/). */
  historyExtras?: () => Pick<PrintHistoryEntry, 'spools'>;
  /** A filter for the lines of a local print starting at `offset` (cancel-object, src/objects), or null. */
  lineFilter?: (path: string, offset: number) => JobLineFilter | null | Promise<JobLineFilter | null>;
  /** Names of the objects cancelled in the print that is ending (its history entry). */
  cancelledObjects?: () => string[];
}
