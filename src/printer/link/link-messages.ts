// The messages between the main thread's WorkerLink and the printer link thread (src/printer/link/link-thread.ts), both ways.
import type { Config } from '../../config/schema.ts';
import type { DetectionCandidate } from '../../protocol/detection.ts';
import type { EnqueueOptions, MachineShape, ProtocolEngine } from '../../protocol/engine.ts';
import type { EngineHooks } from '../../protocol/hooks.ts';
import type { EngineSettings } from '../../protocol/settings.ts';
import type { SkipFilterOptions, SkipFilterState } from '../../objects/skip-filter.ts';

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
 * While the thread skips cancelled objects (LinkCommands.skipObjects): `{ x }` is a line that is not the file's (a
 * tool-change script's, a timelapse's), sent as it is, and `{ l }` a comment-only object label of the file, which
 * only the object filter reads (neither is sent to the firmware as a file line would be).
 */
export type StreamItem = string | { e: string; once?: true } | { m: number } | { off: 1 } | { x: string } | { l: string };

/** What the thread's object filter of a job starts with (src/objects/skip-filter.ts). */
export interface ObjectSkipPlan extends SkipFilterOptions {
  /** The objects cancelled before the feed opened. */
  cancelled: number[];
  /** The filter's state at the job's first line (a print resumed part way: what the lines before it left). */
  state?: SkipFilterState;
}

/**
 * What the main thread asks of the thread, as methods: the messages below are derived from it, and the thread answers
 * them with an object implementing it, so a renamed command or a wrong argument is a compile error on both sides.
 */
export interface LinkCommands {
  connect(id: number, port: string, baudrate: number): void;
  connectAuto(id: number, candidates: DetectionCandidate[]): void;
  disconnect(id: number): void;
  enqueue(cmd: string, opts: EnqueueOptions): void;
  marker(id: number): void;
  stream(items: StreamItem[]): void;
  /** `reset`: a new job's feed, whatever the old one left in the stream is dropped. */
  setFeed(on: boolean, reset: boolean): void;
  setJobActive(active: boolean): void;
  setOffsets(offsets: Record<string, number>): void;
  /**
   * The job's lines go through an object filter in the thread, where the engine takes them (null: none), so a cancel
   * acts on every line not yet taken for the wire. Sent after setJobActive(true); setJobActive(false) drops it.
   */
  skipObjects(plan: ObjectSkipPlan | null): void;
  /** Cancels an object in the thread's filter: skipped from the next line the engine takes. */
  cancelObject(id: number): void;
  pump(): void;
  fakeAck(): void;
}

/** One message per command: its name and its arguments, checked against LinkCommands. */
export type ToLinkThread = { [K in keyof LinkCommands]: { t: K; args: Parameters<LinkCommands[K]> } }[keyof LinkCommands];

/** Calls the command a message names (the one place a message becomes a call). */
export function runCommand(commands: LinkCommands, msg: ToLinkThread): void {
  (commands[msg.t] as (...args: ToLinkThread['args']) => void)(...msg.args);
}

/**
 * The link's getters as of the end of the thread's last turn, under the engine's own names (ProtocolEngine and
 * EngineLink): one name per piece of link state.
 */
export interface LinkMirror extends Pick<ProtocolEngine, 'state' | 'error' | 'connectedPort' | 'connectedBaudrate' | 'linesInFlight'
  | 'firmwareName' | 'flowControl' | 'currentTool' | 'sawStart'> {
  /** Stream lines taken by the feed, or dropped with the stream, so far (the main thread counts those it sent). */
  consumed: number;
  /** Commands queued in the engine and not yet written. */
  queuedCommands: number;
  /** Commands the main thread sent that reached the engine's queue, so far (the main thread counts those it sent). */
  enqueued: number;
  /** A job line was pulled ahead and is not written yet. */
  staged: boolean;
  resends: { count: number; transmitted: number; ratio: number };
  currentZ: number | null;
  currentF: number | null;
  /** The last numbered lines written; sent with every state change (recovery reads it after a link dropped). */
  tail?: Array<{ n: number; wire: string }>;
}

/** The hooks that cross as hook events: every engine hook but the terminal's two (see TerminalEvent). */
export type RelayedHook = Exclude<keyof EngineHooks, 'sent' | 'received'>;

/** A hook call, its arguments checked against EngineHooks. */
export type HookEvent = { [K in RelayedHook]: ['hook', K, Parameters<NonNullable<EngineHooks[K]>>] }[RelayedHook];

/**
 * The terminal's lines (`sent` and `received` hooks) since the last event, as one string: each line starts with
 * TERMINAL_SENT or TERMINAL_RECEIVED and ends with `\n` (a firmware line has no `\n` of its own). One string per batch
 * instead of three objects per line, on both sides of the thread.
 */
export type TerminalEvent = ['terminal', string];
export const TERMINAL_SENT = '>';
export const TERMINAL_RECEIVED = '<';

/** In the order they happened in the thread. */
export type LinkEvent =
  | HookEvent
  | TerminalEvent
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
