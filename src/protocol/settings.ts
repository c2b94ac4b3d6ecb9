// The protocol engine's knobs (a plain mirror of config.yaml's serial section, so the engine needs no config import).

export interface EngineSettings {
  helloCommand: string;
  waitForStartOnConnect: boolean;
  alwaysSendChecksum: boolean;
  neverSendChecksum: boolean;
  sendChecksumWithUnknownCommands: boolean;
  unknownCommandsNeedAck: boolean;
  checksumRequiringCommands: string[];
  longRunningCommands: string[];
  blockedCommands: string[];
  ignoredCommands: string[];
  pausingCommands: string[];
  emergencyCommands: string[];
  /**
   * Klipper-style words in a streamed file that the host answers itself and never sends (Moonraker's Spoolman macros,
   * `SET_ACTIVE_SPOOL ID=3`): they go to the job's feed as host commands, like `@pause`.
   */
  hostWords: string[];
  disconnectOnErrors: boolean;
  ignoreErrorsFromFirmware: boolean;
  sendM112OnError: boolean;
  lastLineBufferSize: number;
  supportResendsWithoutOk: 'detect' | boolean;
  swallowOkAfterResend: boolean;
  ignoreIdenticalResends: boolean;
  identicalResendsCountdown: number;
  maxConsecutiveResends: number;
  abortHeatupOnCancel: boolean;
  logPositionOnPause: boolean;
  firmwareDetection: boolean;
  sdAlwaysAvailable: boolean;
  capabilities: { autoreport_temp: boolean; autoreport_sdstatus: boolean; autoreport_pos: boolean; busy_protocol: boolean; emergency_parser: boolean; extended_m20: boolean };
  /** Seconds (as in config.yaml). */
  timeout: {
    detectionFirst: number; detectionConsecutive: number; connection: number; communication: number; communicationBusy: number;
    temperature: number; temperatureTargetSet: number; temperatureAutoreport: number; sdStatus: number; sdStatusAutoreport: number;
    posAutoreport: number; resendOk: number; positionLogWait: number;
  };
  maxCommunicationTimeouts: { idle: number; printing: number; long: number };
  /** Send-ahead byte budget; 0 = ping-pong unless ADVANCED_OK is seen. */
  rxBufferSize: number;
  /** Use ADVANCED_OK replies for send-ahead. */
  advancedOk: boolean;
  /** Upper bound of lines in flight with send-ahead. */
  maxLinesInFlight: number;
  /** Quiet time after a resend request with several lines in flight, before rewinding (ms). */
  resendDrainMs: number;
}

export const DEFAULT_ENGINE_SETTINGS: EngineSettings = {
  helloCommand: 'M110 N0',
  waitForStartOnConnect: false,
  alwaysSendChecksum: false,
  neverSendChecksum: false,
  sendChecksumWithUnknownCommands: false,
  unknownCommandsNeedAck: false,
  checksumRequiringCommands: ['M110'],
  longRunningCommands: ['G4', 'G28', 'G29', 'G30', 'G32', 'M400', 'M226', 'M600'],
  blockedCommands: ['M0', 'M1'],
  ignoredCommands: [],
  pausingCommands: ['M0', 'M1', 'M25'],
  emergencyCommands: ['M112', 'M108', 'M410'],
  hostWords: ['SET_ACTIVE_SPOOL', 'CLEAR_ACTIVE_SPOOL'],
  disconnectOnErrors: true,
  ignoreErrorsFromFirmware: false,
  sendM112OnError: true,
  lastLineBufferSize: 50,
  supportResendsWithoutOk: 'detect',
  swallowOkAfterResend: true,
  ignoreIdenticalResends: false,
  identicalResendsCountdown: 7,
  maxConsecutiveResends: 10,
  abortHeatupOnCancel: true,
  logPositionOnPause: true,
  firmwareDetection: true,
  sdAlwaysAvailable: false,
  capabilities: { autoreport_temp: true, autoreport_sdstatus: true, autoreport_pos: true, busy_protocol: true, emergency_parser: true, extended_m20: true },
  timeout: {
    detectionFirst: 10, detectionConsecutive: 2, connection: 10, communication: 30, communicationBusy: 3,
    temperature: 5, temperatureTargetSet: 2, temperatureAutoreport: 2, sdStatus: 1, sdStatusAutoreport: 1,
    posAutoreport: 5, resendOk: 0.5, positionLogWait: 10,
  },
  maxCommunicationTimeouts: { idle: 2, printing: 5, long: 5 },
  rxBufferSize: 0,
  advancedOk: true,
  maxLinesInFlight: 32,
  resendDrainMs: 5,
};

/** Timer seam: tests drive a fake clock instead of sleeping. */
export interface Timers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};
