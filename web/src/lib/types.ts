// Wire shapes of the OctoPrint-compatible API and push channel, as far as the UI reads them.

export interface StateFlags {
  operational: boolean;
  printing: boolean;
  cancelling: boolean;
  pausing: boolean;
  resuming?: boolean;
  finishing?: boolean;
  closedOrError: boolean;
  error: boolean;
  paused: boolean;
  ready: boolean;
  sdReady: boolean;
}

export interface PrinterState {
  text: string;
  flags: StateFlags;
  error?: string;
}

export interface JobFile {
  name: string | null;
  path?: string | null;
  display?: string | null;
  origin: string | null;
  size: number | null;
  date: number | null;
}

export interface JobInfo {
  file: JobFile;
  estimatedPrintTime: number | null;
  averagePrintTime?: number | null;
  lastPrintTime?: number | null;
  filament: Record<string, { length: number | null; volume: number | null } | number | null> | null;
  user?: string | null;
}

export interface Progress {
  completion: number | null;
  filepos: number | null;
  printTime: number | null;
  printTimeLeft: number | null;
  printTimeLeftOrigin?: string | null;
}

export interface HeaterPoint {
  actual: number | null;
  target: number | null;
  offset?: number;
}

/** One temperature sample: `time` plus one entry per heater (tool0…, bed, chamber, custom). */
export type TempPoint = { time: number } & Record<string, HeaterPoint | number>;

export interface Marking {
  type: string;
  label?: string;
  time: number;
}

export interface StatePayload {
  state: PrinterState;
  job: JobInfo;
  progress: Progress;
  currentZ: number | null;
  offsets: Record<string, number>;
  temps: TempPoint[];
  logs?: string[];
  messages?: string[];
  markings?: Marking[];
  busyFiles?: { origin: string; path: string }[];
  serverTime?: number;
}

export interface LoginResponse {
  name?: string;
  session?: string;
  groups?: string[];
  admin?: boolean;
  apikey?: string | null;
  needs?: { role?: string[]; group?: string[] };
  /** The user's stored settings (the UI keeps its own under `gantry`). */
  settings?: Record<string, unknown>;
}

export interface CurrentUser {
  name: string | null;
  permissions: string[];
  groups: string[];
}

export interface ConnectionInfo {
  current: { state: string; port: string | null; baudrate: number | null; printerProfile: string | null };
  options: {
    ports: string[];
    baudrates: number[];
    printerProfiles: { id: string; name: string }[];
    portPreference?: string | null;
    baudratePreference?: number | null;
    printerProfilePreference?: string | null;
    autoconnect?: boolean;
  };
}

export interface Analysis {
  estimatedPrintTime?: number;
  filament?: Record<string, { length?: number; volume?: number }>;
  dimensions?: { width: number; depth: number; height: number };
  printingArea?: { minX: number; maxX: number; minY: number; maxY: number; minZ: number; maxZ: number };
  _empty?: boolean;
  /** Gantry's additions: what the slicer wrote about its own result. */
  gantry?: { slicer?: { name?: string | null; estimatedPrintTime?: number | null; filamentLength?: number[] | null } };
}

export interface FileEntry {
  name: string;
  display?: string;
  path: string;
  type: string;
  typePath?: string[];
  origin: 'local' | 'sdcard';
  size?: number;
  date?: number;
  children?: FileEntry[];
  refs?: { resource?: string; download?: string };
  gcodeAnalysis?: Analysis;
  prints?: { success: number; failure: number; last?: { success: boolean; date: number; printTime?: number } };
  /** Average and last print time per printer profile id, from the print history. */
  statistics?: { averagePrintTime?: Record<string, number>; lastPrintTime?: Record<string, number> };
  /** Relative URL of the slicer's embedded preview (as OctoPrint's PrusaSlicer-thumbnails plugin gives it). */
  thumbnail?: string;
  thumbnail_src?: string;
}

export interface HistoryEntry {
  origin: 'local' | 'sdcard';
  path: string;
  name: string;
  start: number;
  end: number;
  duration: number;
  result: 'success' | 'failed' | 'cancelled';
  error?: string;
  user?: string | null;
}

export interface TimelapseFile { name: string; bytes: number; size: string; date: string; timestamp?: number; url: string; thumbnail?: string }
export interface UnrenderedJob { name: string; bytes: number; count: number; size: string; date: string; processing: boolean; recording: boolean; rendering: boolean }
export interface TimelapseConfig { type: 'off' | 'zchange' | 'timed'; fps?: number; postRoll?: number; interval?: number; retractionZHop?: number; minDelay?: number }
export interface TimelapseList { config: TimelapseConfig; enabled: boolean; files: TimelapseFile[]; unrendered?: UnrenderedJob[] }

export interface FilesResponse {
  files: FileEntry[];
  free?: number;
  total?: number;
}

export interface TemperatureProfile {
  name: string;
  extruder: number;
  bed: number;
  chamber?: number;
}

export interface TerminalFilter {
  name: string;
  regex: string;
}

/** The parts of GET /api/settings the UI reads; everything else is passed through untouched. */
export interface Settings {
  api?: { key?: string | null; allowCrossOrigin?: boolean };
  appearance?: { name?: string; color?: string; colorTransparent?: boolean; showFahrenheitAlso?: boolean };
  feature?: { printCancelConfirmation?: boolean; sdSupport?: boolean; temperatureGraph?: boolean; gcodeViewer?: boolean; printStartConfirmation?: boolean; uploadOverwriteConfirmation?: boolean };
  printer?: { defaultExtrusionLength?: number };
  scripts?: { gcode?: Record<string, string | null> };
  serial?: Record<string, unknown> & { port?: string | null; baudrate?: number | null; autoconnect?: boolean; portOptions?: string[]; baudrateOptions?: number[] };
  server?: { commands?: Record<string, string | null>; diskspace?: { warning?: number; critical?: number } };
  temperature?: { profiles?: TemperatureProfile[]; cutoff?: number };
  terminalFilters?: TerminalFilter[];
  webcam?: { streamUrl?: string | null; snapshotUrl?: string | null; flipH?: boolean; flipV?: boolean; rotate90?: boolean };
  plugins?: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
}

/** Gantry's addition to a printer profile: the limits the analysis' time estimate uses (mm/s, mm/s², mm). */
export interface MachineLimits {
  maxFeedrate?: Partial<Record<'x' | 'y' | 'z' | 'e', number>>;
  maxAcceleration?: Partial<Record<'x' | 'y' | 'z' | 'e', number>>;
  printAcceleration?: number;
  retractAcceleration?: number;
  travelAcceleration?: number;
  junctionDeviation?: number;
}

export interface PrinterProfile {
  id: string;
  name: string;
  model?: string;
  heatedBed?: boolean;
  heatedChamber?: boolean;
  volume?: { width: number; depth: number; height: number; formFactor?: string; origin?: string };
  extruder?: { count: number; defaultExtrusionLength?: number; nozzleDiameter?: number; filamentDiameter?: number };
  axes?: Record<'x' | 'y' | 'z' | 'e', { speed: number; inverted: boolean }>;
  machineLimits?: MachineLimits;
  current?: boolean;
  default?: boolean;
}

export interface CustomControl {
  name?: string;
  layout?: 'vertical' | 'horizontal' | 'horizontal_grid';
  children?: CustomControl[];
  command?: string;
  commands?: string[];
  script?: string;
  confirm?: string;
  input?: { name: string; parameter: string; default?: string | number; slider?: { min?: number; max?: number; step?: number } | false }[];
}

export interface SystemCommand {
  name: string;
  action: string;
  confirm?: string;
  source: string;
  resource?: string;
}

export interface UserRecord {
  name: string;
  active: boolean;
  admin?: boolean;
  groups: string[];
  permissions: string[];
  apikey?: string | null;
}

export interface AppKeyRequest {
  app_name: string;
  user_token: string;
  user_id: string | null;
}
