// What the push channel reads from the rest of the host: narrow views of the printer and job services (main.ts wires
// the real ones), with offline stand-ins for when a service is absent.
import type { PrinterListener, PrinterStateSnapshot, ResendStats, TemperatureHistoryEntry } from '../printer/types.ts';
import { STATE_TEXT, stateFlags } from '../protocol/connection-state.ts';

/** The printer service satisfies this structurally. */
export interface PrinterStatusSource {
  state(): PrinterStateSnapshot;
  temperatureHistory(limit?: number): TemperatureHistoryEntry[];
  offsets(): Record<string, number>;
  currentZ(): number | null;
  resends(): ResendStats;
  subscribe(listener: PrinterListener): () => void;
}

/** Job and progress in the wire shapes of docs/reference/printer-extra-api.md §7/§8, and the files in use. */
export interface JobStatusSource {
  job(): Record<string, unknown>;
  progress(): Record<string, unknown>;
  busyFiles(): Array<{ origin: string; path: string }>;
}

export const offlinePrinter: PrinterStatusSource = {
  state: () => ({ id: 'OFFLINE', text: STATE_TEXT.OFFLINE, flags: stateFlags('OFFLINE', false), error: '' }),
  temperatureHistory: () => [],
  offsets: () => ({}),
  currentZ: () => null,
  resends: () => ({ count: 0, transmitted: 0, ratio: 0 }),
  subscribe: () => () => {},
};

/** What OctoPrint reports before anything was selected (docs/reference/printer-extra-api.md §7, §8 quirks included). */
export const noJob: JobStatusSource = {
  job: () => ({
    file: { name: null, path: null, size: null, origin: null, date: null },
    estimatedPrintTime: null, lastPrintTime: null, filament: { length: null, volume: null }, user: null,
  }),
  progress: () => ({ completion: null, filepos: null, printTime: null, printTimeLeft: null, printTimeOrigin: null }),
  busyFiles: () => [],
};
