// Job and progress snapshots in the wire shapes of push `current`/`history` (docs/reference/printer-extra-api.md §7, §8).
import type { JobProgressSnapshot, JobSnapshot } from '../printer/job-types.ts';
import { noJob, type JobStatusSource } from './sources.ts';

export function jobWire(s: JobSnapshot): Record<string, unknown> {
  const f = s.file;
  // Before anything was ever selected OctoPrint sends its start-up object (no display, length/volume filament).
  if (!f && s.progress === null) return noJob.job();
  return {
    file: f
      ? { name: f.name, path: f.path, display: f.display, origin: f.origin, size: f.size, date: f.date }
      : { name: null, path: null, display: null, origin: null, size: null, date: null },
    estimatedPrintTime: s.estimatedPrintTime,
    averagePrintTime: s.averagePrintTime,
    lastPrintTime: s.lastPrintTime,
    filament: s.filament,
    user: s.user,
  };
}

export function progressWire(p: JobProgressSnapshot | null): Record<string, unknown> {
  if (!p) return noJob.progress();
  return { completion: p.completion, filepos: p.filepos, printTime: p.printTime, printTimeLeft: p.printTimeLeft,
    printTimeLeftOrigin: p.printTimeLeftOrigin };
}

/** A JobStatusSource over the job runner's snapshot (taken once per call pair is fine: both are cheap). */
export function jobStatusFrom(runner: { snapshot(): JobSnapshot }, busyFiles: () => Array<{ origin: string; path: string }>): JobStatusSource {
  return {
    job: () => jobWire(runner.snapshot()),
    progress: () => progressWire(runner.snapshot().progress),
    busyFiles,
  };
}
