// Event catalogue: every event name the host emits with its payload, in OctoPrint's vocabulary (push clients and
// event subscriptions see these names verbatim). Add new events here, nowhere else.

type Payload = Record<string, unknown>;

export interface EventMap {
  // server
  Startup: Payload;
  Shutdown: Payload;
  ClientOpened: { remoteAddress: string };
  ClientAuthed: { remoteAddress: string; username: string };
  ClientClosed: { remoteAddress: string };
  UserLoggedIn: { username: string };
  UserLoggedOut: { username: string };
  ConnectivityChanged: { old: boolean; new: boolean };
  SettingsUpdated: { config_hash: string; effective_hash: string };
  // printer link
  Connecting: Payload;
  Connected: { port: string; baudrate: number };
  Disconnected: Payload;
  PrinterStateChanged: { state_id: string; state_string: string };
  Error: { error: string; reason?: string; consequence?: string | null; faq?: string | null; logs?: string[] };
  FirmwareData: { name: string; data: Record<string, string> };
  PrinterProfileAdded: { identifier: string };
  PrinterProfileModified: { identifier: string };
  PrinterProfileDeleted: { identifier: string };
  // files
  Upload: Payload;
  FileAdded: Payload;
  FileRemoved: Payload;
  FolderAdded: Payload;
  FolderRemoved: Payload;
  UpdatedFiles: { type: string };
  MetadataAnalysisStarted: Payload;
  MetadataAnalysisFinished: Payload;
  MetadataStatisticsUpdated: Payload;
  FileSelected: Payload;
  FileDeselected: Payload;
  TransferStarted: Payload;
  TransferDone: Payload;
  TransferFailed: Payload;
  // printing
  PrintStarted: Payload;
  PrintFailed: Payload;
  PrintDone: Payload;
  PrintCancelling: Payload;
  PrintCancelled: Payload;
  PrintPaused: Payload;
  PrintResumed: Payload;
  // gcode processing
  PowerOn: Payload;
  PowerOff: Payload;
  Home: Payload;
  ZChange: { new: number; old: number | null };
  Dwell: Payload;
  Waiting: Payload;
  Cooling: Payload;
  Alert: Payload;
  Conveyor: Payload;
  Eject: Payload;
  EStop: Payload;
  FilamentChange: Payload;
  PositionUpdate: Payload;
  ToolChange: { old: number; new: number };
  CommandSuppressed: Payload;
  InvalidToolReported: Payload;
  // slicing
  SlicingStarted: Payload;
  SlicingDone: Payload;
  SlicingCancelled: Payload;
  SlicingFailed: Payload;
  SlicingProfileAdded: Payload;
  SlicingProfileModified: Payload;
  SlicingProfileDeleted: Payload;
  // settings & system
  PrinterReset: Payload;
}

export type EventName = keyof EventMap;
