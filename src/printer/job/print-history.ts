// Print history: every finished, failed or cancelled print (file, start, end, duration, result) kept in one JSON file
// in the data folder, written atomically and capped; survives restarts.
import { readFile } from 'node:fs/promises';
import { setAside, writeFileAtomic } from '../../core/atomic-file.ts';
import type { Logger } from '../../core/logger.ts';

export interface PrintHistoryEntry {
  origin: 'local' | 'sdcard';
  path: string;
  name: string;
  /** Unix seconds (float). */
  start: number;
  end: number;
  /** Seconds spent printing (pauses excluded). */
  duration: number;
  result: 'success' | 'failed' | 'cancelled';
  error?: string;
  user?: string | null;
  printerProfile?: string;
  /** A failed print: why and where it stopped (cause, filepos, line; see src/recovery/). */
  /** Objects cancelled during the print (cancel-object), by name. */
  cancelledObjects?: string[];
  interruption?: { cause: string; filepos: number | null; line: number | null; [key: string]: unknown };
  /** The Spoolman spool of each tool that printed, and the filament (mm) it gave (src/spools/). */
  spools?: Array<{ tool: number; spool_id: number; used: number }>;
}

export class PrintHistory {
  private entries: PrintHistoryEntry[] = [];
  private loaded: Promise<void> | undefined;

  constructor(private readonly file: string, private readonly logger: Logger, private readonly max = 1000) {}

  private load(): Promise<void> {
    this.loaded ??= readFile(this.file, 'utf8').then(async (t) => {
      let v: unknown;
      try {
        v = JSON.parse(t);
      } catch (err) {
        // Kept for a person to look at; the history starts again.
        this.logger.warn({ err, file: await setAside(this.file) }, 'print history unreadable, set aside; starting a new one');
        return;
      }
      if (Array.isArray(v)) this.entries = v as PrintHistoryEntry[];
    }, (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') this.logger.warn({ err }, 'print history unreadable; starting a new one');
    });
    return this.loaded;
  }

  async list(): Promise<PrintHistoryEntry[]> {
    await this.load();
    return [...this.entries];
  }

  async add(entry: PrintHistoryEntry): Promise<void> {
    await this.load();
    this.entries.push(entry);
    if (this.entries.length > this.max) this.entries.splice(0, this.entries.length - this.max);
    await writeFileAtomic(this.file, JSON.stringify(this.entries, null, 1));
  }
}
