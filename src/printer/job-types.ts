// Public surface of the job runner for other modules (files routes, push channel): selection, job control, snapshots.
import type { GcodeAnalysis } from '../files/analysis/types.ts';

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
