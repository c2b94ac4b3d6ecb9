// Public interface of the printer service: what routes, the push channel and the job runner may rely on (kept stable).
import type { ConnectionStateId, StateFlags } from './printer-state.ts';
import type { EnqueueOptions } from '../protocol/engine.ts';
import type { JobMoves, JobState } from './job/job-lifecycle.ts';
import type { JobLineSource } from './job/job-line-cursor.ts';
import type { JobOutcome, JobStreamListener, JobStreamOptions } from './job/job-stream.ts';

export type { ConnectionStateId, StateFlags } from './printer-state.ts';

/** The parts of a printer profile the link uses; the full profile lives in printer-profiles.ts. */
export interface LinkProfile {
  id: string;
  name: string;
  heatedBed: boolean;
  heatedChamber: boolean;
  extruder: { count: number; sharedNozzle: boolean; defaultExtrusionLength?: number };
  axes: { x: { speed: number }; y: { speed: number }; z: { speed: number }; e: { speed: number } };
}

export interface PrinterStateSnapshot {
  id: ConnectionStateId;
  /** Display text (`Operational`, `Offline after error`, ...). */
  text: string;
  flags: StateFlags;
  /** Last error text, '' when none. */
  error: string;
}

export interface HeaterReading {
  actual: number | null;
  target: number | null;
  offset: number;
}

/** Keys: tool0..toolN, bed, chamber, and custom sensors (P, A, W...). */
export type TemperatureSnapshot = Record<string, HeaterReading>;

/** One history point: `time` (unix s) plus per heater {actual, target}. */
export interface TemperatureHistoryEntry {
  time: number;
  [heater: string]: number | { actual: number | null; target: number | null };
}

export interface ConnectionSnapshot {
  /** State text as /api/connection reports it (`Closed` when no link was ever made or after a disconnect). */
  state: string;
  port: string | null;
  baudrate: number | null;
  printerProfile: string;
}

export interface ConnectOptions {
  /** Port name, `VIRTUAL`, or undefined/'AUTO' for auto-detection. */
  port?: string;
  /** 0/undefined: auto-detect. */
  baudrate?: number;
  /** Profile id; default profile when omitted. */
  profileId?: string;
}

export interface ResendStats {
  count: number;
  transmitted: number;
  ratio: number;
}

export interface Position {
  x: number | null;
  y: number | null;
  z: number | null;
  e: number | null;
  t: number | null;
  f: number | null;
}

export interface SdFileEntry {
  name: string;
  /** Long name if the firmware reported one. */
  display: string;
  size: number | null;
  date: number | null;
}

export type { JobLineBatch, JobLineSource } from './job/job-line-cursor.ts';
export type { JobOutcome, JobStreamListener, JobStreamOptions } from './job/job-stream.ts';

export interface JobStream {
  /** Bytes of the file consumed so far. */
  readonly filepos: number;
  /** Lines sent and not yet acknowledged (recovery journal). */
  readonly linesInFlight?: number;
  /** Byte offset after the file line `back` command lines before the last one sent; null when not known (recovery journal). */
  positionBack?(back: number): number | null;
  /** The last numbered lines written and whether a job line is pulled but unsent (recovery: resync after a drop). */
  sentTail?(max: number): { lines: Array<{ n: number; wire: string }>; unsent: number };
  /**
   * Resolves when Paused is reached (or the job ended). No-op unless printing. `byFirmware`: the firmware paused by
   * itself (`//action:paused`), so nothing is sent to it.
   */
  pause(byFirmware?: boolean): Promise<void>;
  /** `byFirmware`: the firmware resumed by itself (`//action:resumed`), so nothing is sent to it. */
  resume(byFirmware?: boolean): void;
  /** Stops feeding at once; resolves when the job has ended. */
  cancel(): Promise<void>;
  /** Resolves with the outcome. */
  readonly done: Promise<JobOutcome>;
  /** Where the job is in its lifecycle (printer/job/job-lifecycle.ts); ENDED once it finished. */
  readonly state: JobState | 'ENDED';
}

/** What a listener on the printer sees; the push channel subscribes to these. */
/**
 * Job changes the firmware asks for (`//action:pause`, `resume`, `cancel`, e.g. from its own display or a runout
 * sensor) or reports having made itself (`paused`, `resumed`).
 */
export type FirmwareJobAction = 'pause' | 'paused' | 'resume' | 'resumed' | 'cancel';

export interface PrinterListener {
  /** The job owner (the job runner) acts on it; without one the link pauses/resumes/cancels its stream itself. */
  /** `firmwareError`: the cancel is the host's answer to that firmware error (PrintCancelling.firmwareError). */
  jobAction?(action: FirmwareJobAction, firmwareError?: string): void;
  state?(snapshot: PrinterStateSnapshot): void;
  /** A new temperature point (also appended to the history). */
  temperature?(entry: TemperatureHistoryEntry): void;
  /** Serial log lines as shown in the terminal: `Send: ...` / `Recv: ...`. */
  log?(lines: string[]): void;
  /** Lines received from the firmware as they came (push `current.messages`), batched like `log`. */
  messages?(lines: string[]): void;
  /** currentZ changed. */
  z?(z: number | null): void;
}

/** The printer service's public surface. */
export interface Printer {
  connect(opts: ConnectOptions): Promise<void>;
  disconnect(): Promise<void>;
  fakeAck(): void;

  state(): PrinterStateSnapshot;
  connection(): ConnectionSnapshot;
  isOperational(): boolean;
  /** Printing or paused (a job exists). */
  isBusy(): boolean;
  /** The profile in use (or the default when not connected). */
  profile(): LinkProfile;

  temperatures(): TemperatureSnapshot;
  temperatureHistory(limit?: number): TemperatureHistoryEntry[];
  offsets(): Record<string, number>;
  currentZ(): number | null;
  resends(): ResendStats;
  lastPosition(): Position;
  /** Recent terminal lines (serial.terminalLogSize). */
  terminal(): string[];

  /** Queue lines for the firmware (the host's own: scripts, SD control). Throws notOperational when not connected. */
  commands(lines: string[], opts?: EnqueueOptions): void;
  /**
   * Queue lines a client sent (the API, the terminal, MQTT). Throws notOperational when not connected, and conflict
   * when they do not fit the MAX_WAITING_COMMANDS the link may hold unwritten.
   */
  clientCommands(lines: string[]): void;
  setTemperature(heater: string, target: number): void;
  setTemperatureOffsets(offsets: Record<string, number>): void;
  jog(axes: { x?: number; y?: number; z?: number }, opts?: { relative?: boolean; speed?: number | false }): void;
  home(axes: Array<'x' | 'y' | 'z'>): void;
  extrude(amount: number, speed?: number): void;
  selectTool(tool: number): void;
  feedRate(percent: number): void;
  flowRate(percent: number): void;

  sdReady(): boolean;
  sdFiles(): SdFileEntry[];
  sdInit(): void;
  sdRefresh(): void;
  sdRelease(): void;

  /**
   * Resolves once every line queued so far has been acknowledged by the firmware, or after `timeoutMs` (a silent or
   * closed link never holds the caller).
   */
  settled(timeoutMs: number): Promise<void>;

  /** Stream a job through the link. Throws notOperational / conflict if a job already runs. */
  streamJob(source: JobLineSource, listener: JobStreamListener, opts?: JobStreamOptions): JobStream;
  /** A file is being written to the SD card (a stream with `transfer`). */
  transferring(): boolean;
  /** Cancels the file being written to the SD card (M29, M30 of the partial file); false when there is none. */
  cancelTransfer(): boolean;
  /** The firmware reported LFN_WRITE and serial.capabilities.lfn_write is on: SD uploads keep their long names. */
  sdLongNames(): boolean;

  subscribe(listener: PrinterListener): () => void;
  /**
   * Every line the firmware sends from now on, in order and as it arrives (for jobs that follow replies; the `log`
   * listener is batched and may skip lines under heavy traffic). Returns the way to stop watching.
   */
  watchReplies(watch: (line: string) => void): () => void;

  /**
   * The job lifecycle for a print the firmware runs from its SD card (printer/job/sd-job.ts drives it with
   * M23/M24/M27): the link's one lifecycle, said to be of kind `sd`, so the printer's state (STARTING, PRINTING,
   * PAUSED, CANCELLING, FINISHING, back to OPERATIONAL) and its `… from SD` texts follow the driver's moves. Throws
   * notOperational, or conflict while a job runs.
   */
  beginSdJob(): JobMoves;
  /**
   * PrinterStateChanged events wait until `reported` settles (5 s at most): a job's owner reports its end (history,
   * statistics, PrintFailed) before the link announces Operational. The state itself changes at once.
   */
  holdStateEvents?(reported: Promise<unknown>): void;
}
