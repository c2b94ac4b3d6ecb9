// The handler contract: one entry per G-code, keyed by code, each with a one-line description (the firmware's help text).
import { param } from '../../gcode/line.ts';
import type { VirtualPrinterOptions } from '../options.ts';
import type { ThermalModel } from '../thermal-model.ts';
import type { Planner } from '../planner.ts';
import type { Scheduler } from '../scheduler.ts';
import type { SdCard, SdEntry } from '../sd-card.ts';

export interface Command {
  /** `G1`, `M104`, `T` (tool change), or the first word for anything else. */
  code: string;
  /** The whole command without line number, checksum or comment. */
  text: string;
}

/** Numeric parameter, or null when absent (NaN when present without a value). */
export const num = (cmd: Command, letter: string): number | null => param(cmd.text, letter);
export const has = (cmd: Command, letter: string): boolean => param(cmd.text, letter) !== null;
/** Everything after the code word (file names, messages). */
export const rest = (cmd: Command): string => {
  const sp = cmd.text.indexOf(' ');
  return sp === -1 ? '' : cmd.text.slice(sp + 1).trim();
};

/** What a handler tells the executor: text to put after its `ok` (`ok T:...`), or no ok at all. */
export type HandlerResult = void | { okSuffix?: string; noOk?: boolean };

export interface GcodeHandler {
  description: string;
  /** Long commands send `busy: processing` keep-alives unless they report progress themselves (heating). */
  keepAlive?: boolean;
  run(fw: Firmware, cmd: Command, source: 'serial' | 'sd'): HandlerResult | Promise<HandlerResult>;
}

export type HandlerTable = Record<string, GcodeHandler>;

export interface Position { x: number; y: number; z: number; e: number }

export interface SdPrintState {
  entry: SdEntry;
  pos: number;
  size: number;
  running: boolean;
  /** Set by M25/M524/M26 to stop the reader loop; the loop exits at the next line. */
  stopRequested: boolean;
}

/** Motion settings as Marlin keeps them (M201/M203/M204/M205); reported by M503, not used by the simulation. */
export interface MotionSettings {
  /** mm/s² per axis (M201). */
  maxAcceleration: Position;
  /** mm/s per axis (M203). */
  maxFeedrate: Position;
  /** mm/s² (M204 P R T). */
  printAcceleration: number;
  retractAcceleration: number;
  travelAcceleration: number;
  /** M205 B (µs), S and T (mm/s), J (mm). */
  minSegmentTime: number;
  minFeedrate: number;
  minTravelFeedrate: number;
  junctionDeviation: number;
}

export function marlinMotionDefaults(): MotionSettings {
  return {
    maxAcceleration: { x: 3000, y: 3000, z: 100, e: 10000 },
    maxFeedrate: { x: 300, y: 300, z: 5, e: 25 },
    printAcceleration: 3000, retractAcceleration: 3000, travelAcceleration: 3000,
    minSegmentTime: 20000, minFeedrate: 0, minTravelFeedrate: 0, junctionDeviation: 0.013,
  };
}

/** Mutable machine state shared by the handlers. */
export interface MachineState {
  motion: MotionSettings;
  pos: Position;
  absolute: boolean;
  absoluteE: boolean;
  /** Last F in mm/min. */
  feedrate: number;
  feedFactor: number;
  flowFactor: number;
  tool: number;
  /** Set by M108 to end a heating wait early. */
  abortWait: boolean;
  selected: SdEntry | null;
  sdJob: SdPrintState | null;
  /** Open M28 upload: file name and the lines so far. */
  sdWrite: { name: string; lines: string[] } | null;
  stopTempReport: (() => void) | null;
  stopSdReport: (() => void) | null;
}

/** What handlers may use of the simulated firmware. */
export interface Firmware {
  readonly opts: VirtualPrinterOptions;
  readonly thermal: ThermalModel;
  readonly planner: Planner;
  readonly scheduler: Scheduler;
  readonly sd: SdCard | null;
  readonly state: MachineState;
  readonly handlers: HandlerTable;
  send(line: string): void;
  /** ` T:21.30 /0.00 B:...` without the leading `ok`. */
  temperatureReport(): string;
  /** Runs one command from the SD card through the handlers (no ok). */
  execute(cmd: Command, source: 'serial' | 'sd'): Promise<HandlerResult>;
  /** Starts the SD reader loop for the selected file. */
  startSdPrint(): void;
  /** Firmware halt (M112, fatal error): nothing is answered afterwards. */
  kill(reason: string): void;
}
