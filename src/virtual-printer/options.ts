// Knobs of the simulated firmware (mapped from devel.virtualPrinter by the transport factory), with their defaults.
import { DEFAULT_BED_SHAPE, type BedShape } from './bed-shape.ts';

export interface VirtualPrinterOptions {
  numExtruders: number;
  /** One hotend shared by all extruders (one temperature reported). */
  sharedNozzle: boolean;
  hasBed: boolean;
  hasChamber: boolean;
  /** SD card present. */
  sdCard: boolean;
  /** Answer `ok N<line> P<planner free> B<queue free>` (Marlin ADVANCED_OK). */
  advancedOk: boolean;
  /** Serial receive buffer in bytes; lines beyond it are lost, as on a real board. */
  rxBuffer: number;
  /** Commands parsed ahead of execution (Marlin BUFSIZE). */
  bufsize: number;
  /** Planner slots for moves. */
  commandBuffer: number;
  /**
   * Time scale of the simulation: simulated durations (motion, dwell, homing, heating) are multiplied by it.
   * 1 = real time, 0.1 = ten times faster, 0 = instant.
   */
  timeScale: number;
  /** Send an `ok` after `Resend:` (Marlin does; some firmware does not). */
  okAfterResend: boolean;
  /** Reject lines without line number and checksum. */
  forceChecksum: boolean;
  /** Seconds between `echo:busy: processing` while a command runs long (0: never). Real time. */
  busyInterval: number;
  firmwareName: string;
  ambientTemperature: number;
  /** Fault injection: treat every Nth received numbered line as corrupted (0: off). */
  corruptEveryN: number;
  /** Fault injection: lose every Nth ok (0: off). */
  dropOkEveryN: number;
  /** Fault injection: the device vanishes after this many received lines (0: off). */
  disconnectAfterLines: number;
  /** Boot banner on open, as after a board reset. */
  bootLines: string[];
  /** The bed's shape and the layout the levelling commands print it in (bed-shape.ts). */
  bedShape: BedShape;
}

export const DEFAULT_CAPABILITIES: Record<string, 0 | 1> = {
  SERIAL_XON_XOFF: 0,
  BINARY_FILE_TRANSFER: 0,
  EEPROM: 0,
  AUTOREPORT_TEMP: 1,
  AUTOREPORT_SD_STATUS: 1,
  AUTOREPORT_POS: 0,
  PROGRESS: 0,
  PRINT_JOB: 1,
  AUTOLEVEL: 0,
  Z_PROBE: 0,
  LEVELING_DATA: 0,
  BUILD_PERCENT: 0,
  SOFTWARE_POWER: 0,
  TOGGLE_LIGHTS: 0,
  CASE_LIGHT_BRIGHTNESS: 0,
  EMERGENCY_PARSER: 1,
  HOST_ACTION_COMMANDS: 1,
  PROMPT_SUPPORT: 0,
  SDCARD: 1,
  EXTENDED_M20: 1,
  LFN_WRITE: 0,
  CUSTOM_FIRMWARE_UPLOAD: 0,
  THERMAL_PROTECTION: 1,
  MOTION_MODES: 0,
  ARCS: 1,
  BABYSTEPPING: 0,
  CHAMBER_TEMPERATURE: 0,
};

export function defaultVirtualPrinterOptions(): VirtualPrinterOptions {
  return {
    numExtruders: 1,
    sharedNozzle: false,
    hasBed: true,
    hasChamber: false,
    sdCard: true,
    advancedOk: false,
    rxBuffer: 128,
    bufsize: 4,
    commandBuffer: 16,
    timeScale: 0.1,
    okAfterResend: true,
    forceChecksum: false,
    busyInterval: 2,
    firmwareName: 'Marlin 2.1.2 (Gantry virtual printer)',
    ambientTemperature: 21.3,
    corruptEveryN: 0,
    dropOkEveryN: 0,
    disconnectAfterLines: 0,
    bootLines: ['start', 'echo:Marlin 2.1.2', 'echo: Virtual printer of Gantry'],
    bedShape: { ...DEFAULT_BED_SHAPE },
  };
}
