// The print journal's record and what the journal needs of its neighbours: the shapes shared by the journal, the
// automatic reconnect and the recovery route.
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import type { LiveJob } from '../printer/job/job-runner.ts';
import type { TemperatureSnapshot } from '../printer/types.ts';
import type { RecoveryScripts } from './recovery-script.ts';
import type { LinkTail } from './link-tail.ts';

/** Why a print ended otherwise than done or cancelled; `file-changed` (its file written over in place) is never offered. */
export type InterruptionCause = 'port-vanished' | 'printer-reset' | 'printer-halted' | 'host-restarted' | 'disconnected' | 'link-error' | 'file-changed' | 'power-off';

/** A position in the file: byte offset just after a line, and the number of whole lines before that offset. */
export interface FilePosition { filepos: number; line: number }

export interface JournalRecord {
  version: 1;
  status: 'printing' | 'interrupted';
  origin: 'local' | 'sdcard';
  path: string;
  /** sha256 of the file when the print started (null until computed). */
  hash: string | null;
  size: number;
  /** Unix seconds: print start and this record. */
  started: number;
  time: number;
  /** The last line the firmware acknowledged (`ok`). */
  acknowledged: FilePosition;
  /** The last line known executed: acknowledged less the planner depth (see `method`). */
  executed: FilePosition;
  method: string;
  layer: number | null;
  z: number | null;
  x: number | null;
  y: number | null;
  e: number;
  extrusion: 'absolute' | 'relative';
  feedrate: number | null;
  fan: number;
  tool: number;
  /** Target temperatures (°C) the print had set: tool0…, bed, chamber. */
  temperatures: Record<string, number | null>;
  cause?: InterruptionCause;
  error?: string;
  /** The numbered lines last written before the link dropped, to continue after a reconnect without a reset. */
  link?: LinkTail;
  /** Ids of the objects cancelled in the print (src/objects/): its resume skips them again. */
  cancelledObjects?: number[];
  /** What the automatic reconnect found (see auto-reconnect.ts). */
  reconnect?: { time: number; outcome: 'reset' | 'unsure' | 'continued'; reason: string };
}

/** What the journal needs of the job runner. */
export interface JournalJobs {
  live(): LiveJob | null;
  isReady(): boolean;
  isOperational(): boolean;
  startRecovered(path: string, offset: number, prologue: string[], user: string | null): Promise<void>;
}

export interface PrintJournalDeps {
  jobs: JournalJobs;
  files: { absolutePath(path: string): Promise<string> };
  temperatures: () => TemperatureSnapshot;
  events: EventBus;
  logger: Logger;
  now: () => number;
  /** The data folder: print-journal.json and OctoPrint's print_recovery_data.yaml live here. */
  dataDir: string;
  scripts: RecoveryScripts;
  /** Moves the firmware may hold acknowledged but not yet executed (Marlin BLOCK_BUFFER_SIZE 16 + BUFSIZE 4). */
  plannerDepth?: number;
  /** At most this long between journal writes while printing (a layer change writes at once). */
  intervalMs?: number;
  /** How often the stream's position is looked at. */
  tickMs?: number;
  /**
   * Cancel-object (src/objects/): the ids cancelled in the running print (or the one that just ended), and the way to
   * hand them to the resumed print (`scripted`: the recovery script runs first; else a reconnect goes on as it was).
   */
  objects?: { cancelled(): number[]; restore(path: string, ids: number[], o: { scripted: boolean }): void };
  /** The `recovery` config slice (`config.slice('recovery')`), read live (wins over the three above). */
  config?: { get(): { recovery: { journal: boolean; journalInterval: number; journalTick: number; plannerDepth: number } } };
}
