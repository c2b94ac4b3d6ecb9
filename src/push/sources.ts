// What the push channel reads from the rest of the host: narrow views of the printer and job services (main.ts wires
// the real ones), with offline stand-ins for when a service is absent.
import type { PrinterListener, PrinterStateSnapshot, ResendStats, TemperatureHistoryEntry } from '../printer/types.ts';
import type { JobSnapshot } from '../printer/job/job-types.ts';
import { OFFLINE_STATE } from '../octoprint/state.ts';
import { jobWire, progressWire, startupJob, startupProgress } from '../octoprint/job.ts';

/** The printer service satisfies this structurally. */
export interface PrinterStatusSource {
  state(): PrinterStateSnapshot;
  temperatureHistory(limit?: number): TemperatureHistoryEntry[];
  offsets(): Record<string, number>;
  currentZ(): number | null;
  resends(): ResendStats;
  subscribe(listener: PrinterListener): () => void;
}

/** Job and progress in their wire shapes (src/octoprint/job.ts), and the files in use. */
export interface JobStatusSource {
  job(): Record<string, unknown>;
  progress(): Record<string, unknown>;
  busyFiles(): Array<{ origin: string; path: string }>;
}

export const offlinePrinter: PrinterStatusSource = {
  state: () => ({ ...OFFLINE_STATE, flags: { ...OFFLINE_STATE.flags } }),
  temperatureHistory: () => [],
  offsets: () => ({}),
  currentZ: () => null,
  resends: () => ({ count: 0, transmitted: 0, ratio: 0 }),
  subscribe: () => () => {},
};

/** What OctoPrint reports before anything was selected. */
export const noJob: JobStatusSource = {
  job: startupJob,
  progress: startupProgress,
  busyFiles: () => [],
};

/** A JobStatusSource over the job runner's snapshot (taken once per call pair is fine: both are cheap). */
export function jobStatusFrom(runner: { snapshot(): JobSnapshot }, busyFiles: () => Array<{ origin: string; path: string }>): JobStatusSource {
  return {
    job: () => jobWire(runner.snapshot()),
    progress: () => progressWire(runner.snapshot().progress),
    busyFiles,
  };
}
