// Event catalogue: every event name the host emits with its payload, in OctoPrint's vocabulary (push clients and
// event subscriptions see these names verbatim). Add new events here, nowhere else.

type Payload = Record<string, unknown>;

/** Events documented without a payload: emit `{}`; the push channel sends `payload: null` (PAYLOADLESS_EVENTS). */
type NoPayload = Payload;

/** Common job payload ("J") of the Print* events. */
export interface JobEventPayload {
  name: string;
  path: string;
  /** `local` or `sdcard`. */
  origin: string;
  size: number | null;
  /** User who selected/started the job. */
  owner?: string;
  /** User who performed this action. */
  user?: string;
  [key: string]: unknown;
}

export interface EventPosition {
  x: number | null; y: number | null; z: number | null; e: number | null; t: number | null; f: number | null;
}

/** Common slicing payload ("S"). */
export interface SlicingEventPayload {
  slicer: string;
  stl: string;
  stl_location: string;
  gcode: string;
  gcode_location: string;
  [key: string]: unknown;
}

/** SD transfers: `path` and the deprecated `local` carry the same value (docs/reference/interface-spec.md, Events). */
export interface TransferEventPayload {
  path: string;
  local: string;
  remote: string;
  time?: number;
}

export interface EventMap {
  // server
  Startup: NoPayload;
  Shutdown: NoPayload;
  ClientOpened: { remoteAddress: string };
  ClientAuthed: { remoteAddress: string; username: string };
  ClientClosed: { remoteAddress: string };
  ClientDeauthed: Payload;
  UserLoggedIn: { username: string };
  UserLoggedOut: { username: string };
  ConnectivityChanged: { old: boolean; new: boolean };
  SettingsUpdated: { config_hash: string; effective_hash: string };
  // printer link
  Connecting: NoPayload;
  Connected: { port: string; baudrate: number };
  Disconnecting: NoPayload;
  Disconnected: NoPayload;
  ConnectionsAutorefreshed: { ports: string[] };
  PrinterStateChanged: { state_id: string; state_string: string };
  Error: { error: string; reason?: string; consequence?: string | null; faq?: string | null; logs?: string[] };
  FirmwareData: { name: string; data: Record<string, string> };
  RegisteredMessageReceived: { key: string; matched: string; outputs: unknown };
  PrinterProfileAdded: { identifier: string };
  PrinterProfileModified: { identifier: string };
  PrinterProfileDeleted: { identifier: string };
  // files
  Upload: Payload;
  FileAdded: Payload;
  FileRemoved: Payload;
  FileMoved: Payload;
  FolderAdded: Payload;
  FolderRemoved: Payload;
  FolderMoved: Payload;
  UpdatedFiles: { type: string };
  MetadataAnalysisStarted: Payload;
  MetadataAnalysisFinished: Payload;
  MetadataStatisticsUpdated: Payload;
  FileSelected: Payload;
  FileDeselected: NoPayload;
  TransferStarted: TransferEventPayload;
  TransferDone: TransferEventPayload;
  TransferFailed: TransferEventPayload;
  // printing
  PrintStarted: JobEventPayload;
  PrintFailed: JobEventPayload & { time: number; reason: 'cancelled' | 'error'; error?: string; position?: EventPosition };
  PrintDone: JobEventPayload & { time: number };
  PrintCancelling: JobEventPayload & { firmwareError?: string };
  PrintCancelled: JobEventPayload & { time: number; reason: 'cancelled'; position: EventPosition };
  PrintPaused: JobEventPayload & { position?: EventPosition };
  PrintResumed: JobEventPayload;
  ChartMarked: { type: string; label: string; time?: number };
  // print recovery (Gantry additions, src/recovery/)
  PrintRecoveryAvailable: { origin: string; path: string; line: number | null; filepos: number | null; layer: number | null; cause: string };
  PrintRecovered: { origin: string; path: string; line: number; filepos: number; user?: string; automatic?: boolean };
  // bed mesh (src/bed-mesh/): Bed Level Visualizer's event, its shape (docs/reference/plugins.md §4.4)
  plugin_bedlevelvisualizer_mesh_data_collected: { mesh: string[][]; bed: Record<string, unknown> };
  // the farm's print queue (Gantry additions, src/queue/)
  QueueJobAdded: { id: string; path: string; copies: number; constraint: Payload; user?: string };
  QueueJobStarted: { id: string; path: string; printer: string; copy: number; copies: number };
  QueueJobPrinted: { id: string; path: string; printer: string; outcome: 'finished' | 'failed' | 'cancelled' };
  QueueJobHeld: { id: string; path: string; printer: string; outcome: string; reason: string };
  QueueJobReleased: { id: string; path: string; user?: string };
  QueueJobDone: { id: string; path: string; copies: number };
  QueueJobRemoved: { id: string; path: string; user?: string };
  QueueJobMoved: { id: string; path: string; position: number };
  QueueWaitingForBedClear: { printer: string; id: string; path: string };
  QueueBedCleared: { printer: string; id?: string; user?: string };
  QueuePaused: { user?: string };
  QueueResumed: { user?: string };
  // gcode processing
  PowerOn: NoPayload;
  PowerOff: NoPayload;
  Home: NoPayload;
  ZChange: { new: number; old: number | null };
  /** OctoPrint's name for G4 (docs call it Dwell). */
  Dwelling: NoPayload;
  Waiting: NoPayload;
  Cooling: NoPayload;
  Alert: NoPayload;
  Conveyor: NoPayload;
  Eject: NoPayload;
  EStop: NoPayload;
  FilamentChange: NoPayload;
  PositionUpdate: EventPosition & { reason: string | null };
  ToolChange: { old: number | null; new: number };
  CommandSuppressed: { command: string; message: string; severity: 'warn' | 'info' };
  InvalidToolReported: { tool: number; fallback: number | null };
  // timelapse
  CaptureStart: { file: string };
  CaptureDone: { file: string };
  CaptureFailed: { file: string; error: string; webcamDisplay: string; snapshotDisplay: string; webcamProvider: string };
  PostRollStart: { postroll_duration: number | null; postroll_length: number; postroll_fps: number };
  PostRollEnd: NoPayload;
  MovieRendering: { gcode: string; movie: string; movie_basename: string; movie_prefix: string };
  MovieDone: { gcode: string; movie: string; movie_basename: string; movie_prefix: string };
  MovieFailed: Payload;
  // slicing
  SlicingStarted: SlicingEventPayload & { progressAvailable: boolean };
  SlicingDone: SlicingEventPayload & { time: number };
  SlicingCancelled: SlicingEventPayload;
  SlicingFailed: SlicingEventPayload & { reason: string };
  SlicingProfileAdded: { slicer: string; profile: string };
  SlicingProfileModified: { slicer: string; profile: string };
  SlicingProfileDeleted: { slicer: string; profile: string };
  // settings & system
  PrinterReset: { idle: boolean };
  /**
   * `GcodeScript<Name>Running` / `GcodeScript<Name>Finished`: internal only (never pushed to clients), but they drive
   * event subscriptions. Payload: the script's event context, or null.
   */
  [script: `GcodeScript${string}Running`]: Payload | null;
  [script: `GcodeScript${string}Finished`]: Payload | null;
  /** Events of the plugins Gantry builds in (`plugin_psucontrol_psu_state_changed`, src/power/). */
  [plugin: `plugin_${string}`]: Payload;
  /** DisplayLayerProgress's own events, named `DisplayLayerProgress_<reason>` (src/power/layer-progress.ts). */
  [layer: `DisplayLayerProgress_${string}`]: Payload;
}

export type EventName = keyof EventMap;

/** Events documented without a payload; clients see `payload: null` for them. */
export const PAYLOADLESS_EVENTS: ReadonlySet<string> = new Set([
  'Startup', 'Shutdown', 'Connecting', 'Disconnecting', 'Disconnected', 'FileDeselected', 'PowerOn', 'PowerOff', 'Home',
  'Dwelling', 'Waiting', 'Cooling', 'Alert', 'Conveyor', 'Eject', 'EStop', 'FilamentChange', 'PostRollEnd',
]);

/** Dynamically named script events: they exist for subscriptions but are not part of the declared catalogue. */
export function isScriptEvent(name: string): boolean {
  return name.startsWith('GcodeScript') && (name.endsWith('Running') || name.endsWith('Finished'));
}
