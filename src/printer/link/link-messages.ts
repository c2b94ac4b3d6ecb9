// The messages between the main thread's WorkerLink and the printer link thread (src/printer/link/link-thread.ts), both ways.
import type { Config } from '../../config/schema.ts';
import type { DetectionCandidate } from '../../protocol/detection.ts';
import type { MachineShape } from '../../protocol/engine.ts';
import type { EngineSettings } from '../../protocol/settings.ts';

/** What the thread starts with (workerData). */
export interface LinkThreadInit {
  settings: Partial<EngineSettings>;
  machine: MachineShape;
  /** The configuration its transports are made from (serial options, the virtual printer's). */
  config: Pick<Config, 'serial' | 'devel'>;
  /** Folder backing the virtual printer's SD card (null: in memory). */
  virtualSdFolder: string | null;
  /** The thread's nice level (serial.linkThreadNice), when it may be set (null: the process's). */
  nice: number | null;
}

/**
 * The job's ordered stream: file lines, and what the streamer asked for between two of them (a command queued, a
 * marker, the feed stopped at the end of the file). Held by the thread, so the feed never waits on the main thread.
 */
export type StreamItem = string | { e: string; once?: true } | { m: number } | { off: 1 };

export type ToLinkThread =
  | { t: 'connect'; id: number; port: string; baudrate: number }
  | { t: 'auto'; id: number; candidates: DetectionCandidate[] }
  | { t: 'disconnect'; id: number }
  | { t: 'enqueue'; cmd: string; poll?: boolean; once?: boolean }
  | { t: 'marker'; id: number }
  | { t: 'stream'; items: StreamItem[] }
  /** `reset`: a new job's feed, whatever the old one left in the stream is dropped. */
  | { t: 'feed'; on: boolean; reset?: boolean }
  | { t: 'job'; active: boolean }
  | { t: 'targets'; active: boolean }
  | { t: 'offsets'; offsets: Record<string, number> }
  | { t: 'pump' }
  | { t: 'fakeAck' };

/** The link's getters as of the end of the thread's last turn. */
export interface LinkMirror {
  state: string;
  error: string;
  port: string;
  baudrate: number;
  inFlight: number;
  /** Stream lines taken by the feed, or dropped with the stream, so far (the main thread counts those it sent). */
  consumed: number;
  queued: number;
  /** Commands the main thread sent that reached the engine's queue, so far (the main thread counts those it sent). */
  enqueued: number;
  staged: boolean;
  tool: number;
  firmware: string;
  flow: string;
  sawStart: boolean;
  resends: { count: number; transmitted: number; ratio: number };
  z: number | null;
  f: number | null;
  /** The last numbered lines written; sent with every state change (recovery reads it after a link dropped). */
  tail?: Array<{ n: number; wire: string }>;
}

/** In the order they happened in the thread. */
export type LinkEvent =
  | ['hook', string, unknown[]]
  | ['marker', number]
  | ['reply', number]
  | ['host', string]
  | ['pausing', string]
  | ['more']
  | ['dropped', number[]]
  | ['z', number, number | null];

export interface FromLinkThread {
  /** When the thread sent it (Date.now()): what the thread did while the main thread was busy can be told apart. */
  at: number;
  events: LinkEvent[];
  mirror: LinkMirror;
}

/** Job lines the thread holds ahead of the wire: refilled below LOW, up to HIGH (≥ 150 ms at 5,000 lines/s). */
export const STREAM_HIGH = 1500;
export const STREAM_LOW = 750;
