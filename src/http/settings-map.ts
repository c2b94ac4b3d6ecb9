// The one table between the /api/settings wire tree and config.yaml: every API field, its config path, its conversion
// and its bounds. Routes build GET answers and POST patches from it; nothing else knows the renamed keys.
import { Type, Value } from '../config/typebox.ts';
import type { TSchema } from 'typebox';
import { Schema, type Config } from '../config/schema.ts';
import { isPlain, type Plain } from '../core/plain.ts';

export interface SettingField {
  /** Dotted path in the API tree, e.g. `serial.timeoutConnection`. */
  api: string;
  /** Path in config.yaml, e.g. ['serial', 'timeout', 'connection']. */
  config: string[];
  /** Config value → wire value (default: as is). */
  toApi?: (v: unknown) => unknown;
  /** Wire value → config value, after the wire value passed `wire` (default: as is). */
  fromApi?: (v: unknown) => unknown;
  /** Schema of the wire value when it differs from the config schema (converted fields). */
  wire?: TSchema;
  min?: number;
  max?: number;
  /** Shown, never written (api.key). */
  readOnly?: boolean;
}

const MINUTES = { toApi: (v: unknown) => (typeof v === 'number' ? v / 60 : v), fromApi: (v: unknown) => Math.round((v as number) * 60),
  wire: Type.Number(), min: 0 };

const field = (api: string, config: string, extra: Partial<SettingField> = {}): SettingField =>
  ({ api, config: config.split('.'), ...extra });
/** Fields whose API name equals their config name inside one section. */
const same = (section: string, names: string[], extra: Partial<SettingField> = {}): SettingField[] =>
  names.map((n) => field(`${section}.${n}`, `${section}.${n}`, extra));
const renamed = (apiSection: string, configSection: string, pairs: Record<string, string>, extra: Partial<SettingField> = {}) =>
  Object.entries(pairs).map(([a, c]) => field(`${apiSection}.${a}`, `${configSection}.${c}`, extra));

const SERIAL_TIMEOUTS: Record<string, string> = {
  timeoutDetection: 'timeout.detectionFirst',
  timeoutDetectionFirst: 'timeout.detectionFirst',
  timeoutDetectionConsecutive: 'timeout.detectionConsecutive',
  timeoutConnection: 'timeout.connection',
  timeoutCommunication: 'timeout.communication',
  timeoutCommunicationBusy: 'timeout.communicationBusy',
  timeoutTemperature: 'timeout.temperature',
  timeoutTemperatureTargetSet: 'timeout.temperatureTargetSet',
  timeoutTemperatureAutoreport: 'timeout.temperatureAutoreport',
  timeoutSdStatus: 'timeout.sdStatus',
  timeoutSdStatusAutoreport: 'timeout.sdStatusAutoreport',
  timeoutPosAutoreport: 'timeout.posAutoreport',
  timeoutBaudrateDetectionPause: 'timeout.baudrateDetectionPause',
  timeoutPositionLogWait: 'timeout.positionLogWait',
  timeoutResendOk: 'timeout.resendOk',
};

/** Serial flags the API also shows under `feature` (the pre-1.3 layout some clients still read). */
const FEATURE_SERIAL_OVERLAY: Record<string, string> = {
  waitForStart: 'waitForStartOnConnect', alwaysSendChecksum: 'alwaysSendChecksum', neverSendChecksum: 'neverSendChecksum',
  sdRelativePath: 'sdRelativePath', sdAlwaysAvailable: 'sdAlwaysAvailable', swallowOkAfterResend: 'swallowOkAfterResend',
  repetierTargetTemp: 'repetierTargetTemp', externalHeatupDetection: 'externalHeatupDetection',
  ignoreIdenticalResends: 'ignoreIdenticalResends', firmwareDetection: 'firmwareDetection', blockWhileDwelling: 'blockWhileDwelling',
};

/**
 * In write order: when two API fields reach the same config key (feature overlay vs serial, the old
 * `timeoutDetection` name), the later, more specific one wins.
 */
export const SETTINGS_FIELDS: readonly SettingField[] = [
  field('api.enabled', 'api.enabled'),
  field('api.key', 'api.key', { readOnly: true }),
  field('api.allowCrossOrigin', 'api.allowCrossOrigin'),

  ...same('appearance', ['name', 'color', 'colorTransparent', 'colorIcon', 'defaultLanguage', 'showFahrenheitAlso', 'fuzzyTimes',
    'closeModalsWithClick', 'showInternalFilename']),

  ...renamed('feature', 'serial', FEATURE_SERIAL_OVERLAY),
  field('feature.gcodeViewer', 'gcodeViewer.enabled'),
  field('feature.sizeThreshold', 'gcodeViewer.sizeThreshold', { min: 0 }),
  field('feature.mobileSizeThreshold', 'gcodeViewer.mobileSizeThreshold', { min: 0 }),
  ...same('feature', ['temperatureGraph', 'sdSupport', 'keyboardControl', 'pollWatched', 'modelSizeDetection', 'rememberFileFolder',
    'printStartConfirmation', 'printCancelConfirmation', 'uploadOverwriteConfirmation', 'g90InfluencesExtruder',
    'autoUppercaseBlacklist', 'enforceReallyUniversalFilenames']),

  ...renamed('folder', 'folder', { uploads: 'uploads', timelapse: 'timelapse', timelapseTmp: 'timelapse_tmp', logs: 'logs', watched: 'watched' }),

  field('gcodeAnalysis.runAt', 'gcodeAnalysis.runAt'),
  field('gcodeAnalysis.bedZ', 'gcodeAnalysis.bedZ'),

  field('printer.defaultExtrusionLength', 'printerParameters.defaultExtrusionLength', { min: 0 }),

  field('scripts.gcode', 'scripts.gcode', {
    // Browsers send CRLF from textareas; scripts are stored with plain newlines.
    fromApi: (v) => Object.fromEntries(Object.entries(v as Plain).map(([k, s]) => [k, typeof s === 'string' ? s.replace(/\r\n?/g, '\n') : s])),
  }),

  field('serial.port', 'serial.port'),
  field('serial.baudrate', 'serial.baudrate', { min: 0 }),
  ...same('serial', ['exclusive', 'lowLatency', 'autoconnect', 'log']),
  ...same('serial', ['resetOnConnect']),
  ...renamed('serial', 'serial', SERIAL_TIMEOUTS, { min: 0, max: 3600 }),
  ...renamed('serial', 'serial', { maxTimeoutsIdle: 'maxCommunicationTimeouts.idle', maxTimeoutsPrinting: 'maxCommunicationTimeouts.printing',
    maxTimeoutsLong: 'maxCommunicationTimeouts.long' }, { min: 0 }),
  ...same('serial', ['additionalPorts', 'additionalBaudrates', 'blacklistedPorts', 'blacklistedBaudrates', 'longRunningCommands',
    'checksumRequiringCommands', 'blockedCommands', 'ignoredCommands', 'pausingCommands', 'emergencyCommands', 'helloCommand',
    'disconnectOnErrors', 'ignoreErrorsFromFirmware', 'logResends', 'logPositionOnPause', 'logPositionOnCancel',
    'abortHeatupOnCancel', 'alwaysSendChecksum', 'neverSendChecksum', 'sendChecksumWithUnknownCommands', 'unknownCommandsNeedAck',
    'sdRelativePath', 'sdAlwaysAvailable', 'sdLowerCase', 'sdCancelCommand', 'swallowOkAfterResend', 'repetierTargetTemp',
    'externalHeatupDetection', 'ignoreIdenticalResends', 'firmwareDetection', 'blockWhileDwelling', 'useParityWorkaround',
    'triggerOkForM29', 'sanityCheckTools', 'sendM112OnError', 'disableSdPrintingDetection', 'ignoreEmptyPorts', 'encoding',
    'enableShutdownActionCommand', 'notifySuppressedCommands', 'advancedOk']),
  ...same('serial', ['identicalResendsCountdown', 'ackMax', 'resendRatioThreshold', 'resendRatioStart', 'maxWritePasses',
    'terminalLogSize', 'lastLineBufferSize', 'rxBufferSize'], { min: 0 }),
  // docs/reference/interface-spec.md (Settings tree) spells this one with a capital I; both spellings read and write
  // the same key.
  field('serial.supportResendsWIthoutOk', 'serial.supportResendsWithoutOk'),
  field('serial.supportResendsWithoutOk', 'serial.supportResendsWithoutOk'),
  field('serial.waitForStart', 'serial.waitForStartOnConnect'),
  ...renamed('serial', 'serial.capabilities', { capAutoreportTemp: 'autoreport_temp', capAutoreportSdStatus: 'autoreport_sdstatus',
    capAutoreportPos: 'autoreport_pos', capBusyProtocol: 'busy_protocol', capEmergencyParser: 'emergency_parser',
    capExtendedM20: 'extended_m20', capLfnWrite: 'lfn_write' }),

  ...same('server', ['commands.systemShutdownCommand', 'commands.systemRestartCommand', 'commands.serverRestartCommand']),
  ...same('server', ['diskspace.warning', 'diskspace.critical'], { min: 0 }),
  ...same('server', ['onlineCheck.enabled', 'onlineCheck.host', 'onlineCheck.name']),
  field('server.onlineCheck.port', 'server.onlineCheck.port', { min: 1, max: 65535 }),
  field('server.onlineCheck.interval', 'server.onlineCheck.interval', MINUTES),
  ...same('server', ['pluginBlacklist.enabled', 'pluginBlacklist.url']),
  field('server.pluginBlacklist.ttl', 'server.pluginBlacklist.ttl', MINUTES),
  field('server.allowFraming', 'server.allowFraming'),

  field('slicing.defaultSlicer', 'slicing.defaultSlicer'),
  field('slicing.prusaSlicerPath', 'slicing.prusaSlicerPath'),

  field('system.actions', 'system.actions'),
  field('system.events', 'system.events', { wire: Type.Union([Type.Array(Type.Unknown()), Type.Null()]) }),

  field('temperature.profiles', 'temperature.profiles'),
  field('temperature.cutoff', 'temperature.cutoff', { min: 1 }),
  field('temperature.sendAutomatically', 'temperature.sendAutomatically'),
  field('temperature.sendAutomaticallyAfter', 'temperature.sendAutomaticallyAfter', { min: 0, max: 30 }),

  field('terminalFilters', 'terminalFilters'),

  ...same('webcam', ['webcamEnabled', 'timelapseEnabled', 'streamRatio', 'snapshotSslValidation', 'ffmpegVideoCodec', 'bitrate',
    'watermark', 'flipH', 'flipV', 'rotate90', 'cacheBuster']),
  ...same('webcam', ['streamTimeout', 'snapshotTimeout'], { min: 1 }),
  field('webcam.ffmpegThreads', 'webcam.ffmpegThreads', { min: 1 }),
  field('webcam.ffmpegCommandline', 'webcam.ffmpegCommandline'),
  ...renamed('webcam', 'webcam', { streamUrl: 'stream', snapshotUrl: 'snapshot', ffmpegPath: 'ffmpeg' }),
  // Gantry's timelapse additions (src/timelapse/): when to render, and stabilised snapshots.
  ...same('webcam', ['renderAfterPrint', 'stabilize.enabled', 'stabilize.x', 'stabilize.y', 'stabilize.retract', 'stabilize.retractSpeed',
    'stabilize.lift', 'stabilize.zSpeed', 'stabilize.travelSpeed', 'stabilize.delay']),
];

export function getPath(obj: unknown, path: readonly string[]): unknown {
  let node = obj;
  for (const k of path) {
    if (!isPlain(node) || !(k in node)) return undefined;
    node = node[k];
  }
  return node;
}

export function setPath(obj: Plain, path: readonly string[], value: unknown): void {
  let node = obj;
  for (const k of path.slice(0, -1)) {
    if (!isPlain(node[k])) node[k] = {};
    node = node[k] as Plain;
  }
  node[path[path.length - 1]] = value;
}

/** The schema node of a config path (sections are plain JSON-schema objects). */
export function schemaAt(path: readonly string[]): TSchema | undefined {
  let node: unknown = Schema;
  for (const k of path) {
    const props = isPlain(node) ? (node as { properties?: Plain }).properties : undefined;
    if (!props || !(k in props)) return undefined;
    node = props[k];
  }
  return node as TSchema;
}

/** Why a wire value is not acceptable for a field, or undefined when it is. */
export function checkField(f: SettingField, value: unknown): string | undefined {
  const schema = f.wire ?? schemaAt(f.config);
  if (schema) {
    for (const e of Value.Errors(schema, value)) {
      const where = e.instancePath ? ` at ${e.instancePath}` : '';
      return `${e.message}${where}`;
    }
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return 'must be a finite number';
    if (f.min !== undefined && value < f.min) return `must be >= ${f.min}`;
    if (f.max !== undefined && value > f.max) return `must be <= ${f.max}`;
  }
  return undefined;
}

/** The wire values of every mapped field, nested by their API paths. */
export function fieldsToApi(config: Config): Plain {
  const out: Plain = {};
  for (const f of SETTINGS_FIELDS) {
    const v = getPath(config, f.config);
    setPath(out, f.api.split('.'), f.toApi ? f.toApi(v) : v ?? null);
  }
  return out;
}

export interface PatchProblem { field: string; message: string }

/**
 * Turns a partial wire tree into a config patch. Unknown keys are ignored (as OctoPrint does); read-only keys are
 * skipped; the first value of the wrong type or out of bounds is reported and nothing is returned.
 */
export function apiToPatch(body: Plain): { patch: Plain; touched: string[] } | { problem: PatchProblem } {
  const patch: Plain = {};
  const touched: string[] = [];
  for (const f of SETTINGS_FIELDS) {
    const path = f.api.split('.');
    const parent = getPath(body, path.slice(0, -1));
    if (path.length > 1 && parent !== undefined && !isPlain(parent)) {
      return { problem: { field: path.slice(0, -1).join('.'), message: 'must be an object' } };
    }
    if (!isPlain(parent) && path.length > 1) continue;
    const container = path.length > 1 ? (parent as Plain) : body;
    if (!(path[path.length - 1] in container)) continue;
    if (f.readOnly) continue;
    const value = container[path[path.length - 1]];
    const problem = checkField(f, value);
    if (problem) return { problem: { field: f.api, message: problem } };
    setPath(patch, f.config, f.fromApi ? f.fromApi(value) : value);
    touched.push(f.api);
  }
  return { patch, touched };
}

/**
 * Drops leaves of a config patch that only restate a default the file does not override, so a client that posts the
 * whole tree back (as settings dialogs do) does not pin every default in config.yaml.
 */
export function withoutRestatedDefaults(patch: Plain, defaults: unknown, raw: unknown): Plain {
  const out: Plain = {};
  for (const [k, v] of Object.entries(patch)) {
    const d = isPlain(defaults) ? defaults[k] : undefined;
    const r = isPlain(raw) ? raw[k] : undefined;
    if (isPlain(v) && isPlain(d)) {
      const inner = withoutRestatedDefaults(v, d, r);
      if (Object.keys(inner).length > 0) out[k] = inner;
    } else if (r !== undefined || !sameValue(v, d)) {
      out[k] = v;
    }
  }
  return out;
}

/** Structural equality; an absent default and null mean the same (nullable keys without a schema default). */
function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** What a form can check before sending a field: its kind, bounds and whether it may be left empty. */
export interface FieldRule { type?: string; min?: number; max?: number; required?: boolean }

/**
 * The rules of every writable mapped field, by API path: the table's bounds narrowed by the config schema's own
 * (minimum/maximum), the schema's type, and `required` for a value that cannot be null.
 */
export function fieldRules(): Record<string, FieldRule> {
  const out: Record<string, FieldRule> = {};
  for (const f of SETTINGS_FIELDS) {
    if (f.readOnly) continue;
    const s = (f.wire ?? schemaAt(f.config)) as { type?: unknown; minimum?: number; maximum?: number; anyOf?: { type?: unknown }[] } | undefined;
    const types = s?.anyOf ? s.anyOf.map((a) => a.type) : [s?.type];
    const type = types.find((t) => typeof t === 'string' && t !== 'null') as string | undefined;
    const rule: FieldRule = {};
    if (type) rule.type = type;
    const min = [f.min, s?.minimum].filter((n): n is number => typeof n === 'number');
    const max = [f.max, s?.maximum].filter((n): n is number => typeof n === 'number');
    if (min.length) rule.min = Math.max(...min);
    if (max.length) rule.max = Math.min(...max);
    if ((type === 'number' || type === 'integer') && !types.includes('null')) rule.required = true;
    out[f.api] = rule;
  }
  return out;
}
