// Settings schema: every key of config.yaml with its type, default and meaning. Keys follow OctoPrint's config.yaml
// layout (the settings API in src/http maps the renamed ones). Unknown keys (plugin settings) are kept on save.
import { Type } from './typebox.ts';
import type { Static } from 'typebox';
import { MqttSection, HomeAssistantSection } from './mqtt-schema.ts';
import { NotificationsSection } from './notifications-schema.ts';
import { SpoolmanSection } from './spoolman-schema.ts';
import { BedMeshSection } from './bed-mesh-schema.ts';
import { SerialSection } from './serial-schema.ts';
import { PsuControlSection, LayerProgressSection } from './power-schema.ts';
import { CancelObjectSection } from './cancelobject-schema.ts';
import { PrintersSection } from './printers-schema.ts';
import { bool, num, int, str, nstr, strList, obj } from './schema-fields.ts';

export const ServerSection = obj({
  host: Type.String({ default: '127.0.0.1', description: 'Interface to listen on' }),
  port: int(5000, 'TCP port to listen on', { minimum: 0, maximum: 65535 }),
  firstRun: bool(true, 'True until the first admin user has been created'),
  uuid: nstr('Stable id of this installation (UPnP uuid), generated on first start'),
  maxSize: int(102400, 'Maximum request body size in bytes for non-upload requests'),
  uploads: obj({ maxSize: int(1024 * 1024 * 1024, 'Maximum upload size in bytes') }),
  commands: obj({
    systemShutdownCommand: nstr('Shell command that shuts the host down'),
    systemRestartCommand: nstr('Shell command that reboots the host'),
    serverRestartCommand: nstr('Shell command that restarts the server'),
  }),
  diskspace: obj({
    warning: int(524288000, 'Free space in bytes below which a warning is shown'),
    critical: int(209715200, 'Free space in bytes below which uploads are refused'),
  }),
  onlineCheck: obj({
    enabled: Type.Union([Type.Boolean(), Type.Null()], { default: null }),
    interval: int(900, 'Seconds between checks'),
    host: str('1.1.1.1', 'Host to check'),
    port: int(53, 'Port to check'),
    name: str('octoprint.org', 'Name to resolve'),
  }),
  pluginBlacklist: obj({
    enabled: Type.Union([Type.Boolean(), Type.Null()], { default: null }),
    url: str('https://plugins.octoprint.org/blacklist.json', 'Blacklist URL'),
    ttl: int(900, 'Seconds to cache the blacklist'),
  }),
  allowFraming: bool(false, 'Allow the UI to be embedded in frames'),
  secretKey: nstr('Secret that signs remember-me cookies; generated on first start'),
  ipCheck: obj({
    enabled: bool(true, 'Report clients outside the local network as external in login responses'),
    trustedSubnets: strList([], 'Extra networks (CIDR) treated as local'),
  }),
  cookies: obj({
    samesite: Type.Union([Type.Literal('Lax'), Type.Literal('Strict'), Type.Literal('None'), Type.Null()], { default: 'Lax' }),
    secure: bool(false, 'Mark cookies Secure'),
  }),
  // Slow or idle clients must not hold sockets forever (slowloris). Timeouts apply at start; the cap at once.
  connections: obj({
    headersTimeout: num(15, 'Seconds a client has to send the request line and all headers', { exclusiveMinimum: 0 }),
    bodyTimeout: num(30, 'Window in seconds over which an incoming request body must keep moving at bodyMinRate', { exclusiveMinimum: 0 }),
    bodyMinRate: num(64, 'Bytes per second a request body must average over each bodyTimeout window (0: only a full stall counts)', { minimum: 0 }),
    keepAliveTimeout: num(75, 'Seconds an idle keep-alive connection stays open between requests', { exclusiveMinimum: 0 }),
    maxPerAddress: int(256, 'Open connections one client address may hold, push connections included (0: no cap)', { minimum: 0 }),
    uncapped: strList(['127.0.0.1', '::1', '::ffff:127.0.0.1'], 'Addresses without the cap: a reverse proxy on this host carries every client'),
  }, 'Connection limits'),
});

export const AccessControlSection = obj({
  enabled: bool(true, 'When false every request is treated as a full admin'),
  sessionValidityHours: num(24 * 7, 'How long an idle login session stays valid'),
  trustBasicAuthentication: bool(false, 'Accept HTTP Basic credentials'),
  checkBasicAuthenticationPassword: bool(true, 'Check the Basic password'),
  trustRemoteUser: bool(false, 'Trust a reverse proxy user header'),
  remoteUserHeader: str('REMOTE_USER', 'Header holding the proxied user'),
  autologinLocal: bool(false, 'Log in local clients automatically'),
  autologinAs: nstr('User for automatic local login'),
  localNetworks: strList(['127.0.0.0/8', '::1/128'], 'Networks considered local (CIDR)'),
});

export const ApiSection = obj({
  enabled: bool(true, 'API enabled'),
  key: nstr('Global API key; regenerated through the API, never set through it'),
  allowCrossOrigin: bool(false, 'Send CORS headers to cross-origin callers'),
  apps: Type.Record(Type.String(), Type.Object({
    pubkey: Type.String({ description: 'RSA public key (base64 body, no BEGIN/END lines)' }),
    enabled: Type.Optional(Type.Boolean({ default: true, description: 'A disabled app version cannot verify keys' })),
  }, { additionalProperties: true }), { default: {}, description: 'App session key apps keyed "appid:version"' }),
});

export const AppearanceSection = obj({
  name: str('', 'Printer name shown in the UI'),
  color: Type.Union(['red', 'orange', 'yellow', 'green', 'blue', 'violet', 'default'].map((c) => Type.Literal(c)), { default: 'default' }),
  colorTransparent: bool(false, 'Transparent navbar colour'),
  colorIcon: bool(true, 'Colour the icon too'),
  defaultLanguage: str('_default', 'UI language'),
  showFahrenheitAlso: bool(false, 'Show temperatures in Fahrenheit as well'),
  fuzzyTimes: bool(true, 'Show fuzzy times'),
  closeModalsWithClick: bool(true, 'Close dialogs on outside click'),
  showInternalFilename: bool(true, 'Show internal file names'),
});

export const FeatureSection = obj({
  temperatureGraph: bool(true, 'Show the temperature graph'),
  sdSupport: bool(true, 'Enable SD card support'),
  keyboardControl: bool(true, 'Keyboard jog control'),
  pollWatched: bool(false, 'Poll the watched folder'),
  modelSizeDetection: bool(true, 'Check model size against the print volume'),
  rememberFileFolder: bool(false, 'Remember the last file folder'),
  printStartConfirmation: bool(false, 'Ask before starting a print'),
  printCancelConfirmation: bool(true, 'Ask before cancelling a print'),
  uploadOverwriteConfirmation: bool(true, 'Ask before overwriting a file'),
  g90InfluencesExtruder: bool(false, 'G90/G91 also switch the extruder mode'),
  autoUppercaseBlacklist: strList(['M117', 'M118'], 'Commands whose parameters are not upper-cased'),
  enforceReallyUniversalFilenames: bool(false, 'Sanitise file names to ASCII'),
});

export const FolderSection = obj({
  uploads: nstr('Uploads folder (default: <basedir>/uploads)'),
  timelapse: nstr('Timelapse folder'),
  timelapse_tmp: nstr('Timelapse temp folder'),
  logs: nstr('Logs folder (default: <basedir>/logs)'),
  watched: nstr('Watched folder'),
  slicingProfiles: nstr('Slicing profiles folder'),
  printerProfiles: nstr('Printer profiles folder'),
  scripts: nstr('GCODE scripts folder'),
  translations: nstr('Language packs folder'),
  data: nstr('Data folder (history, app keys)'),
});

export const TemperatureSection = obj({
  profiles: Type.Array(Type.Object({
    name: Type.String(),
    extruder: Type.Number(),
    bed: Type.Number(),
    chamber: Type.Optional(Type.Union([Type.Number(), Type.Null()])),
  }, { additionalProperties: true }), {
    default: [{ name: 'ABS', extruder: 210, bed: 100 }, { name: 'PLA', extruder: 180, bed: 60 }],
  }),
  cutoff: int(30, 'Minutes of temperature history kept'),
  sendAutomatically: bool(false, 'Send profile temperatures automatically'),
  sendAutomaticallyAfter: int(1, 'Seconds after which to send', { minimum: 0, maximum: 30 }),
});

export const DEFAULT_TERMINAL_FILTERS = [
  { name: 'Suppress temperature messages', regex: '(Send: (N\\d+\\s+)?M105)|(Recv:\\s+(ok\\s+([PBN]\\d+\\s+)*)?([BCLPR]|T\\d*):-?\\d+)' },
  { name: 'Suppress SD status messages', regex: '(Send: (N\\d+\\s+)?M27)|(Recv: SD printing byte)|(Recv: Not SD printing)' },
  { name: 'Suppress position messages', regex: '(Send:\\s+(N\\d+\\s+)?M114)|(Recv:\\s+(ok\\s+)?X:[+-]?([0-9]*[.])?[0-9]+\\s+Y:[+-]?([0-9]*[.])?[0-9]+\\s+Z:[+-]?([0-9]*[.])?[0-9]+\\s+E\\d*:[+-]?([0-9]*[.])?[0-9]+).*' },
  { name: 'Suppress wait responses', regex: 'Recv: wait' },
  { name: 'Suppress processing responses', regex: 'Recv: (echo:\\s*)?busy:\\s*processing' },
];

/**
 * GCODE scripts that exist before anyone configures one: what GET /api/settings lists under `scripts.gcode` and what
 * runs when neither the settings nor the scripts folder have the name. Written in the template subset of
 * src/printer/gcode-scripts.ts (tags on their own lines), which Jinja reads the same way.
 */
export const DEFAULT_GCODE_SCRIPTS: Readonly<Record<string, string>> = Object.freeze({
  afterPrintCancelled: [
    '; disable motors', 'M84', '', ';disable all heaters', "{% snippet 'disable_hotends' %}", "{% snippet 'disable_bed' %}",
    ';disable fan', 'M106 S0',
  ].join('\n'),
  'snippets/disable_hotends': [
    '{% if printer_profile.extruder.sharedNozzle %}', 'M104 T0 S0', '{% else %}',
    '{% for tool in range(printer_profile.extruder.count) %}', 'M104 T{{ tool }} S0', '{% endfor %}', '{% endif %}',
  ].join('\n'),
  'snippets/disable_bed': ['{% if printer_profile.heatedBed %}', 'M140 S0', '{% endif %}'].join('\n'),
});

export const WebcamSection = obj({
  webcamEnabled: bool(true, 'Webcam enabled'),
  timelapseEnabled: bool(true, 'Timelapse enabled'),
  stream: str('', 'Stream URL'),
  snapshot: str('', 'Snapshot URL'),
  streamRatio: Type.Union([Type.Literal('16:9'), Type.Literal('4:3')], { default: '16:9' }),
  streamTimeout: int(5, 'Stream timeout in seconds'),
  snapshotTimeout: int(5, 'Snapshot timeout in seconds'),
  snapshotSslValidation: bool(true, 'Validate the snapshot certificate'),
  ffmpeg: nstr('Path to ffmpeg'),
  ffmpegThreads: int(1, 'ffmpeg threads'),
  ffmpegVideoCodec: str('libx264', 'ffmpeg codec'),
  bitrate: str('10000k', 'Timelapse bitrate'),
  watermark: bool(true, 'Watermark timelapses'),
  flipH: bool(false, 'Flip horizontally'),
  flipV: bool(false, 'Flip vertically'),
  rotate90: bool(false, 'Rotate 90 degrees'),
  cacheBuster: bool(false, 'Append a cache buster to snapshot URLs'),
  // OctoPrint's command templates (src/timelapse/ffmpeg-template.ts fills in the placeholders).
  ffmpegCommandline: str('{ffmpeg} -framerate {fps} -i "{input}" -vcodec {videocodec} -threads {threads} -b:v {bitrate} -f {containerformat} -y {filters} "{output}"',
    'Timelapse render command: {ffmpeg}, {input} and {output} required; {fps}, {videocodec}, {threads}, {bitrate}, {containerformat}, {filters} optional'),
  ffmpegThumbnailCommandline: str('{ffmpeg} -sseof -1 -i "{input}" -update 1 -q:v 0.7 "{output}"', 'Timelapse thumbnail command: {ffmpeg}, {input} (the movie), {output}'),
  // Timelapse capture and rendering (src/timelapse/); OctoPrint's config.yaml layout.
  timelapse: obj({
    type: Type.Union([Type.Literal('off'), Type.Literal('zchange'), Type.Literal('timed')], { default: 'off', description: 'Timelapse applied at startup' }),
    fps: int(25, 'Frames per second of the rendered movie', { minimum: 1 }),
    postRoll: int(0, 'Seconds the last frame is repeated at the end', { minimum: 0 }),
    options: obj({
      interval: Type.Optional(Type.Union([Type.Number(), Type.Null()], { description: 'timed: seconds between frames (unset: 10)' })),
      retractionZHop: Type.Optional(Type.Union([Type.Number(), Type.Null()], { description: 'zchange: Z hop in mm that is not a layer change (unset: 0)' })),
      minDelay: Type.Optional(Type.Union([Type.Number(), Type.Null()], { description: 'zchange: least seconds between frames (unset: 5)' })),
    }),
  }),
  renderAfterPrint: Type.Union([Type.Literal('always'), Type.Literal('success'), Type.Literal('failure'), Type.Literal('never')],
    { default: 'always', description: 'Which finished prints get their timelapse rendered at once (the others stay unrendered)' }),
  cleanTmpAfterDays: num(7, 'Unrendered timelapse frames older than this many days are deleted when unrendered jobs are listed', { minimum: 0 }),
  // Gantry: stabilised snapshots (zchange only) park the head at each layer change before the frame is taken.
  stabilize: obj({
    enabled: bool(false, 'Park the head for each z-change frame'),
    x: num(0, 'Park position X (mm)'),
    y: num(0, 'Park position Y (mm)'),
    retract: num(1, 'Filament retracted before parking (mm, 0: none)', { minimum: 0, maximum: 20 }),
    retractSpeed: num(2400, 'Retract and unretract feedrate (mm/min)', { minimum: 1 }),
    lift: num(0.5, 'Z lift before travelling to the park position (mm, 0: none)', { minimum: 0, maximum: 20 }),
    zSpeed: num(600, 'Z lift feedrate (mm/min)', { minimum: 1 }),
    travelSpeed: num(9000, 'Travel feedrate to and from the park position (mm/min)', { minimum: 1 }),
    delay: int(100, 'Milliseconds to wait after the head stopped before the snapshot (camera settle)', { minimum: 0, maximum: 10_000 }),
  }),
});

export const DevelSection = obj({
  enableRateLimiter: bool(true, 'Rate-limit failed logins'),
  enableCsrfProtection: bool(true, 'Check the CSRF double-submit cookie'),
  virtualPrinter: obj({
    enabled: bool(true, 'Offer the built-in virtual printer as port VIRTUAL'),
    numExtruders: int(1, 'Extruders of the virtual printer', { minimum: 1, maximum: 8 }),
    hasBed: bool(true, 'Virtual printer has a heated bed'),
    hasChamber: bool(false, 'Virtual printer has a heated chamber'),
    sdFiles: bool(true, 'Virtual printer has an SD card'),
    advancedOk: bool(false, 'Virtual printer answers with ADVANCED_OK (ok N P B)'),
    rxBuffer: int(128, 'Virtual printer receive buffer in bytes'),
    commandBuffer: int(4, 'Virtual printer planner slots'),
    throttle: num(0.1, 'Time scale of the virtual printer (motion, dwell, homing, heating): 1 real time, 0.1 ten times faster, 0 instant', { minimum: 0 }),
    okAfterResend: bool(true, 'Send ok after a resend request'),
    forceChecksum: bool(false, 'Require checksums'),
    resendEveryN: int(0, 'Fault injection: corrupt every Nth received line (0: off)'),
    dropOkEveryN: int(0, 'Fault injection: drop every Nth ok (0: off)'),
    busyInterval: num(2, 'Seconds between busy: processing messages'),
    firmwareName: str('Marlin 2.1.2 (Gantry virtual printer)', 'FIRMWARE_NAME the virtual printer reports in M115'),
    sharedNozzle: bool(false, 'All extruders of the virtual printer share one hotend'),
    disconnectAfterLines: int(0, 'Fault injection: the virtual device vanishes after this many received lines (0: off)'),
    bedShape: obj({
      width: num(220, 'Bed width in mm', { minimum: 10, maximum: 2000 }),
      depth: num(220, 'Bed depth in mm', { minimum: 10, maximum: 2000 }),
      margin: num(10, 'Distance of the outer probe points from the bed edges in mm', { minimum: 0, maximum: 500 }),
      tiltX: num(0.15, 'Bed tilt along X in mm per 100 mm', { minimum: -10, maximum: 10 }),
      tiltY: num(-0.1, 'Bed tilt along Y in mm per 100 mm', { minimum: -10, maximum: 10 }),
      warp: num(0.08, 'Dome of the bed in mm (negative: a bowl)', { minimum: -10, maximum: 10 }),
      points: int(5, 'Probe points per axis', { minimum: 2, maximum: 15 }),
      format: Type.Union(['bilinear', 'ubl', 'mbl', 'prusa', 'klipper'].map((f) => Type.Literal(f)), {
        default: 'bilinear', description: 'What G29 and M420 V print: Marlin bilinear, UBL or MBL, Prusa G81, Klipper BED_MESH_OUTPUT',
      }),
    }, 'The virtual printer\'s bed: a tilt plus a warp, probed by G29/G80/BED_MESH_CALIBRATE'),
  }),
});

// The Moonraker edge (src/moonraker/): Mainsail, Fluidd and other Moonraker clients on /websocket and /server, /printer...
export const MoonrakerSection = obj({
  enabled: bool(true, "Serve Moonraker's API (/websocket, /server/..., /printer/..., /machine/..., /access/...)"),
  trustedClients: strList([], 'Networks (CIDR, e.g. 192.168.1.0/24) whose clients may use the Moonraker API without a key, with the rights of the users group (Mainsail cannot log in)'),
  corsDomains: strList([], 'Origins other than this host allowed to use the Moonraker API from a browser (`*` wildcards, e.g. http://*.local)'),
  ui: nstr('Folder holding a Mainsail or Fluidd release (its index.html), served at uiPath'),
  uiPath: Type.Union([Type.Literal('auto'), Type.Literal('/'), Type.Literal('/mainsail/'), Type.Literal('/fluidd/')],
    { default: 'auto', description: 'Where the UI is served: auto (/mainsail/ or /fluidd/ by what the folder holds), or / (instead of Gantry\'s own UI)' }),
});

export const Schema = Type.Object({
  accessControl: AccessControlSection,
  api: ApiSection,
  appearance: AppearanceSection,
  controls: Type.Array(Type.Unknown(), { default: [], description: 'Custom controls' }),
  devel: DevelSection,
  estimation: obj({
    printTime: obj({
      statsWeighingUntil: num(0.5, ''), validityRange: num(0.15, ''), forceDumbFromPercent: num(0.3, ''),
      forceDumbAfterMin: num(30, ''), stableThreshold: num(60, ''),
    }),
  }),
  events: obj({
    enabled: bool(true, 'Run event subscriptions'),
    commandTimeout: int(60, 'Seconds a system command of an event subscription may run before it is killed', { minimum: 1 }),
    // Entries are checked one by one when loaded (src/events/event-subscriptions.ts): a bad entry is skipped and logged,
    // as OctoPrint does, instead of keeping the whole server from starting.
    subscriptions: Type.Array(Type.Unknown(), {
      default: [],
      description: 'Event subscriptions: {event: name(s), command: line(s), type: system|gcode, enabled?, debug?, name?, shell?}',
    }),
  }),
  feature: FeatureSection,
  folder: FolderSection,
  gcodeAnalysis: obj({
    runAt: Type.Union([Type.Literal('never'), Type.Literal('idle'), Type.Literal('always')], { default: 'idle' }),
    bedZ: num(0, 'Z of the bed for size detection'),
  }),
  gcodeViewer: obj({
    enabled: bool(true, 'GCODE viewer enabled'),
    sizeThreshold: int(20971520, 'Files above this size are not previewed'),
    mobileSizeThreshold: int(2097152, 'Threshold on mobile'),
  }),
  moonraker: MoonrakerSection,
  plugins: Type.Object({ mqtt: MqttSection, homeassistant: HomeAssistantSection, notifications: NotificationsSection, bedmesh: BedMeshSection, psucontrol: PsuControlSection, DisplayLayerProgress: LayerProgressSection, spoolman: SpoolmanSection, cancelobject: CancelObjectSection }, { default: {}, additionalProperties: true, description: 'Plugin settings' }),
  printerParameters: obj({ defaultExtrusionLength: int(5, 'Default extrusion in mm') }),
  printerProfiles: obj({ default: nstr('Default printer profile id') }),
  printers: PrintersSection,
  scripts: obj({
    // Not DEFAULT_GCODE_SCRIPTS: a configured record would replace the defaults whole, and a file in the scripts folder
    // must still win over a built-in default; readers merge them in instead.
    gcode: Type.Record(Type.String(), Type.Union([Type.String(), Type.Null()]), {
      default: {}, description: 'GCODE scripts and snippets (`snippets/<name>`) by name; built-in defaults apply to names not set',
    }),
  }),
  // Prints that survive (src/recovery/): the print journal's timings and reconnecting by itself after a pulled cable.
  recovery: obj({
    journal: bool(true, 'Keep the print journal while printing (what a resume needs); off: nothing is recorded, so nothing can be resumed'),
    autoReconnect: bool(true, 'When the port of an interrupted connection comes back (the same device), reconnect by itself; a print the printer kept running through it (no reset) continues where it stopped'),
    reconnectDelay: num(1, 'Seconds before the first reconnect attempt; doubled after each miss', { minimum: 0.1, maximum: 60 }),
    reconnectMaxDelay: num(10, 'At most this many seconds between reconnect attempts', { minimum: 0.1, maximum: 600 }),
    reconnectGiveUp: num(3600, 'Stop trying after this many seconds (0: never)', { minimum: 0 }),
    probeTimeout: num(3, 'Seconds to wait, right after the port reopened, for the printer to tell its line counter (or `start`, a reset)', { minimum: 0.5, maximum: 60 }),
    journalInterval: num(3, 'At most this many seconds between journal writes while printing (a layer change writes at once)', { minimum: 0.5, maximum: 600 }),
    journalTick: num(0.5, 'Seconds between looks at the stream position', { minimum: 0.05, maximum: 10 }),
    plannerDepth: int(20, 'Commands the firmware may have acknowledged but not yet executed (Marlin: planner 16 + command buffer 4); a resume starts this far before the last acknowledged line', { minimum: 0, maximum: 1000 }),
  }),
  serial: SerialSection,
  server: ServerSection,
  slicing: obj({
    enabled: bool(true, 'Slicing enabled'),
    defaultSlicer: nstr('Default slicer key (null: the first configured slicer)'),
    defaultProfiles: Type.Record(Type.String(), Type.String(), { default: {}, description: 'Default profile key per slicer' }),
    prusaSlicerPath: str('prusa-slicer', 'PrusaSlicer binary (a name on PATH or an absolute path)'),
    timeout: int(1800, 'Seconds one slicing run may take'),
  }),
  system: obj({
    actions: Type.Array(Type.Object({
      action: Type.String(),
      name: Type.Optional(Type.String()),
      command: Type.Optional(Type.String()),
      confirm: Type.Optional(Type.Union([Type.String(), Type.Boolean()])),
      async: Type.Optional(Type.Boolean()),
      ignore: Type.Optional(Type.Boolean()),
    }, { additionalProperties: true }), { default: [] }),
  }),
  temperature: TemperatureSection,
  terminalFilters: Type.Array(Type.Object({ name: Type.String(), regex: Type.String() }, { additionalProperties: true }), {
    default: DEFAULT_TERMINAL_FILTERS,
  }),
  webcam: WebcamSection,
}, { additionalProperties: true });

export type Config = Static<typeof Schema>;
