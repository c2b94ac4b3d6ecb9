// The printers the farm's print queue dispatches to, as the queue sees them: a name, whether it can take a job now,
// the profile a file's slicer metadata is matched against, a way to start a library file, and what became of a print.
import type { SlicedFor } from '../files/analysis/types.ts';

export interface QueuePrinterProfile {
  /** Bed size in mm (printer profile volume width and depth). */
  bedX: number;
  bedY: number;
  nozzleDiameter: number;
  /** The filament loaded, when the user said (printer profiles do not know it: the queue's per-printer setting). */
  filamentType?: string;
}

export interface QueuePrinter {
  name: string;
  /** Connected, operational and not printing: a job may start on it now. */
  idle: boolean;
  profile: QueuePrinterProfile;
}

/** How a print the printer ran ended. */
export type PrintOutcome = 'finished' | 'failed' | 'cancelled';

export type QueuePrinterEvent = PrintOutcome | 'changed';

export interface QueuePrinters {
  list(): QueuePrinter[];
  /** Selects and starts a file of the shared library (its path in the library) on the printer `name`. */
  startPrint(name: string, libraryPath: string): Promise<void>;
  /**
   * `finished`/`failed`/`cancelled`: a print on printer `name` ended so; `changed`: its state changed (it may be idle
   * now). Returns the unsubscribe.
   */
  on(event: QueuePrinterEvent, fn: (name: string) => void): () => void;
}

/** What the queue asks of the file library: the file exists, and what it was sliced for (undefined: not analysed yet). */
export interface QueueLibrary {
  describe(path: string): Promise<{ path: string; slicedFor: SlicedFor | null | undefined }>;
}
