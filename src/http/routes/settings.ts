// /api/settings and /api/settings/templates: the settings tree in OctoPrint's wire shape, partial updates, UI template order.
import { assertDepth } from '../../core/deep-merge.ts';
import { STORED_JSON_BOUNDS, assertBoundedJson } from '../../core/bounded-json.ts';
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '../../config/typebox.ts';
import { maskUrl } from '../../notifications/secret-url.ts';
import type { GantryApp } from '../types.ts';
import { DEFAULT_GCODE_SCRIPTS, type Config } from '../../config/schema.ts';
import type { Paths } from '../../config/paths.ts';
import type { EventBus } from '../../core/event-bus.ts';
import { invalid } from '../../core/errors.ts';
import { sendError } from '../error-mapper.ts';
import { apiToPatch, fieldsToApi, setPath, withoutRestatedDefaults } from '../settings-map.ts';
import { isPlain, setOwn } from '../../core/plain.ts';
import { effectiveConfig, type ConfigStore } from '../../config/config-store.ts';
import { scriptsInFolder } from '../../printer/gcode-scripts.ts';
import { checkFfmpegPath } from '../../timelapse/ffmpeg.ts';
import { shortLived, SCAN_REUSE_MS } from '../short-lived.ts';
import { folderPaths, normaliseFolders } from '../../system/folders.ts';
import { checkCommandline } from '../../timelapse/ffmpeg-template.ts';
import { SettingsSchema, TemplatesSchema } from '../../octoprint/settings.ts';
import { NoContent } from '../../octoprint/schema-kit.ts';
import { etagMatches } from '../conditional.ts';

type Plain = Record<string, unknown>;

export interface SerialOptions { ports: string[]; baudrates: number[] }
/** Live port and baudrate choices (the printer link provides them; a config-only fallback is used until it exists). */
export type SerialOptionsProvider = () => Promise<SerialOptions> | SerialOptions;

const STANDARD_BAUDRATES = [250000, 230400, 115200, 57600, 38400, 19200, 9600];

export function configSerialOptions(config: Config): SerialOptions {
  const s = config.serial;
  const ports = s.additionalPorts.filter((p) => !/[*?[]/.test(p));
  if (config.devel.virtualPrinter.enabled) ports.push('VIRTUAL');
  const baudrates = [...new Set([...STANDARD_BAUDRATES, ...s.additionalBaudrates])]
    .filter((b) => !s.blacklistedBaudrates.includes(b)).sort((a, b) => b - a);
  return { ports, baudrates };
}

interface TreeInputs { config: Config; options: SerialOptions; scripts: Record<string, string>; view: string; key: string | null }

export interface SettingsDeps {
  config: ConfigStore;
  paths: Paths;
  events: EventBus;
  serialOptions?: SerialOptionsProvider;
  /**
   * Where the global API key is read: the access service's (on a farm printer, the server's key that access checks,
   * not the printer's own config.yaml). Absent: the config's.
   */
  access?: { globalKey(): string | null };
}


const entry = (id: string, name: string) => ({ id, name });
/** Order of our own UI's components per template type (the UI lays itself out from this). */
export const TEMPLATE_ORDER = {
  about: [entry('about', 'About Gantry'), entry('license', 'License'), entry('thirdparty', 'Third party licenses')],
  generic: [],
  navbar: [entry('settings', 'Settings'), entry('systemmenu', 'System'), entry('login', 'Login')],
  settings: [entry('section_printer', 'Printer'), entry('serial', 'Serial Connection'), entry('printerprofiles', 'Printer Profiles'),
    entry('temperatures', 'Temperatures'), entry('terminalfilters', 'Terminal Filters'), entry('gcodescripts', 'GCODE Scripts'),
    entry('section_features', 'Features'), entry('features', 'Features'), entry('webcam', 'Webcam & Timelapse'),
    entry('api', 'API'), entry('section_server', 'Gantry'), entry('accesscontrol', 'Access Control'), entry('folders', 'Folders'),
    entry('appearance', 'Appearance'), entry('logs', 'Logs'), entry('server', 'Server'), entry('system', 'System commands')],
  sidebar: [entry('connection', 'Connection'), entry('state', 'State'), entry('files', 'Files')],
  tab: [entry('temperature', 'Temperature'), entry('control', 'Control'), entry('gcodeviewer', 'GCode Viewer'),
    entry('terminal', 'Terminal'), entry('timelapse', 'Timelapse')],
  usersettings: [entry('access', 'Access'), entry('interface', 'Interface')],
  wizard: [],
};

/**
 * The defaults a client may echo back without pinning them in config.yaml (GCODE scripts: see unconfiguredScripts).
 * Made on first use: defaults over the whole schema are ≈ 7 ms, which every start paid for a module-level constant.
 */
let defaults: Config | undefined;
const defaultSettings = (): Config => (defaults ??= effectiveConfig({}));

/** GET serialises its answer itself (once per view, for the ETag and the body); the schema says what that writes. */
const ReadReply = { 200: SettingsSchema, 304: NoContent };
const SaveSchema = { body: Type.Unknown(), response: { 200: SettingsSchema } };


export function registerSettingsRoutes(app: GantryApp, deps: SettingsDeps): void {
  const { config, paths, events } = deps;
  const serialOptions = deps.serialOptions ?? (() => configSerialOptions(config.current));

  // Reads of devices and the disk that settings readers share for a second (polling clients); a save reads afresh.
  const portScan = shortLived(serialOptions, SCAN_REUSE_MS);
  const folderScripts = shortLived(() => scriptsInFolder(paths.scripts), SCAN_REUSE_MS);

  /** What a script is when the settings do not set it: its file in the scripts folder, else the built-in text. */
  async function unconfiguredScripts(): Promise<Record<string, string>> {
    return { ...DEFAULT_GCODE_SCRIPTS, ...(await folderScripts.get()) };
  }

  /** The inputs a settings answer is made from; the same inputs give the same bytes. */
  async function inputs(request: FastifyRequest): Promise<TreeInputs> {
    // A port scan that fails must not take the whole settings page down with it.
    const options = await portScan.get().catch((err: unknown) => {
      request.log.warn({ err }, 'listing serial ports failed');
      return configSerialOptions(config.current);
    });
    const id = request.identity;
    const c = config.current;
    return { config: c, options, scripts: await folderScripts.get(), key: deps.access ? deps.access.globalKey() : c.api.key ?? null,
      view: `${id.has('ADMIN') ? 1 : 0}${id.has('SETTINGS') ? 1 : 0}${id.has('WEBCAM') ? 1 : 0}` };
  }

  async function tree(request: FastifyRequest, given?: TreeInputs): Promise<Plain> {
    const { config: c, options, scripts: fromFolder, key } = given ?? await inputs(request);
    const out = fieldsToApi(c);
    const isAdmin = request.identity.has('ADMIN');
    setPath(out, ['api', 'key'], isAdmin ? key : 'n/a');

    for (const [api, path] of Object.entries(folderPaths(c, paths))) setPath(out, ['folder', api], path);

    setPath(out, ['serial', 'portOptions'], options.ports);
    setPath(out, ['serial', 'baudrateOptions'], options.baudrates);

    // Like OctoPrint, every defined script as it would run: the setting, else the file in the scripts folder, else the
    // built-in one (null falls back).
    const configured = Object.entries(c.scripts.gcode).filter(([, v]) => typeof v === 'string');
    setPath(out, ['scripts', 'gcode'], { ...DEFAULT_GCODE_SCRIPTS, ...fromFolder, ...Object.fromEntries(configured) });

    const plugins = c.plugins as Plain;
    const pluginDiscovery = isPlain(plugins.discovery) ? plugins.discovery : {};
    out.plugins = { ...structuredClone(plugins), discovery: { ...structuredClone(pluginDiscovery), upnpUuid: c.server.uuid } };
    // Broker credentials are for those who may change settings, not for every reader.
    if (!request.identity.has('SETTINGS')) {
      const broker = ((out.plugins as Plain).mqtt as Plain | undefined)?.broker as Plain | undefined;
      if (broker) for (const k of ['username', 'password']) if (broker[k] !== null) broker[k] = '';
      // Notification URLs hold bot tokens and webhook keys: readers see only their scheme and host.
      const targets = ((out.plugins as Plain).notifications as Plain | undefined)?.targets;
      if (Array.isArray(targets)) for (const t of targets) if (isPlain(t) && typeof t.url === 'string') t.url = maskUrl(t.url);
    }

    if (request.identity.has('WEBCAM')) {
      const w = out.webcam as Plain;
      const compat = { stream: c.webcam.stream, snapshot: c.webcam.snapshot, streamRatio: c.webcam.streamRatio,
        streamTimeout: c.webcam.streamTimeout, snapshotTimeout: c.webcam.snapshotTimeout,
        snapshotSslValidation: c.webcam.snapshotSslValidation, cacheBuster: c.webcam.cacheBuster };
      w.defaultWebcam = 'classic';
      w.snapshotWebcam = 'classic';
      w.webcams = [{ name: 'classic', displayName: 'Classic Webcam', canSnapshot: c.webcam.snapshot !== '',
        snapshotDisplay: c.webcam.snapshot || null, flipH: c.webcam.flipH, flipV: c.webcam.flipV, rotate90: c.webcam.rotate90,
        extras: {}, compat, provider: 'classicwebcam' }];
    } else {
      out.webcam = {};
    }
    return out;
  }

  // Clients poll settings; an ETag over the caller's own view lets them revalidate with 304.
  // The last answer per view (admin, settings, webcam rights) is kept while its inputs are the same objects: a poll
  // costs neither the tree, nor its serialisation, nor its hash.
  const answers = new Map<string, { from: TreeInputs; body: string; etag: string }>();
  app.get('/api/settings', { config: { access: 'SETTINGS_READ' }, schema: { response: ReadReply } }, async (request, reply) => {
    const from = await inputs(request);
    let answer = answers.get(from.view);
    if (!answer || answer.from.config !== from.config || answer.from.options !== from.options || answer.from.scripts !== from.scripts || answer.from.key !== from.key) {
      const body = JSON.stringify(await tree(request, from));
      answer = { from, body, etag: `"${createHash('sha1').update(body).digest('hex')}"` };
      answers.set(from.view, answer);
    }
    const { body, etag } = answer;
    reply.header('ETag', etag);
    if (etagMatches(request.headers['if-none-match'], etag)) return reply.code(304).send();
    return (reply as FastifyReply).type('application/json; charset=utf-8').send(body);
  });

  app.post('/api/settings', { config: { access: 'SETTINGS' }, schema: SaveSchema }, async (request, reply) => {
    const body = request.body;
    if (!isPlain(body)) return sendError(reply, 400, 'Malformed JSON body in request');
    portScan.clear();
    folderScripts.clear();
    // Before any of the recursive mapping below can overflow the stack on a hostile shape.
    assertDepth(body, 'Settings');
    const mapped = apiToPatch(body);
    if ('problem' in mapped) throw invalid(`Invalid value for ${mapped.problem.field}: ${mapped.problem.message}`);
    const presetProblem = temperaturePresetProblem(body);
    if (presetProblem) throw invalid(presetProblem);
    let { patch } = mapped;

    if (patch.folder) await normaliseFolders(patch.folder as Plain, paths);
    const bitrate = (patch.webcam as Plain | undefined)?.bitrate;
    if (typeof bitrate === 'string' && !/^\d+[KMG]?$/i.test(bitrate)) {
      throw invalid('Invalid webcam.bitrate setting, needs to be a valid ffmpeg bitrate');
    }
    const commandline = (patch.webcam as Plain | undefined)?.ffmpegCommandline;
    if (commandline !== undefined) checkCommandline(String(commandline));
    // A timelapse that cannot render is reported now, not after the next print (empty clears the setting).
    const ffmpeg = (patch.webcam as Plain | undefined)?.ffmpeg;
    if (typeof ffmpeg === 'string' && ffmpeg.trim() !== '' && ffmpeg !== config.current.webcam.ffmpeg) await checkFfmpegPath(ffmpeg);
    // A script echoed back as shown (built-in or from its file) is not pinned in config.yaml: the file stays in charge.
    const shown = { ...defaultSettings(), scripts: { ...defaultSettings().scripts, gcode: await unconfiguredScripts() } };
    patch = withoutRestatedDefaults(patch, shown, config.overrides);
    if ('plugins' in body) {
      // Plugin defaults echoed back (a settings dialog posts the whole tree) are not pinned in config.yaml.
      const plugins = withoutRestatedDefaults(pluginPatch(body.plugins), defaultSettings().plugins, config.overrides.plugins);
      if (Object.keys(plugins).length > 0) patch.plugins = plugins;
    }

    if (Object.keys(patch).length > 0) {
      await config.patch(patch);
      events.emit('SettingsUpdated', {
        config_hash: config.hash(),
        effective_hash: config.effectiveHash(),
      });
    }
    return tree(request);
  });

  app.get('/api/settings/templates', { config: { access: 'ADMIN' }, schema: { response: { 200: TemplatesSchema } } }, async () => ({ order: TEMPLATE_ORDER }));
}

/** Plugin settings are stored as sent, per plugin; the discovery uuid is the installation's and is never overwritten. */
function pluginPatch(plugins: unknown): Plain {
  if (!isPlain(plugins)) throw invalid('Invalid value for plugins: must be an object');
  const out: Plain = {};
  for (const [id, value] of Object.entries(plugins)) {
    if (!isPlain(value)) throw invalid(`Invalid value for plugins.${id}: must be an object`);
    // Stored as sent and sent back in every settings read: bounded like every value a client stores.
    assertBoundedJson(value, STORED_JSON_BOUNDS, `plugins.${id}`);
    const copy = structuredClone(value);
    if (id === 'discovery') delete copy.upnpUuid;
    // Echoing back only the generated uuid is not a setting.
    if (id === 'discovery' && Object.keys(copy).length === 0) continue;
    setOwn(out, id, copy);
  }
  return out;
}

/**
 * Temperature presets are sent to heaters as they are: a negative or absurd value (or a blank saved as 0 by a careless
 * client) is refused, naming the field so a form can show the error beside it.
 */
function temperaturePresetProblem(body: Plain): string | undefined {
  const temperature = body.temperature;
  if (!isPlain(temperature) || !Array.isArray(temperature.profiles)) return undefined;
  for (const [i, p] of temperature.profiles.entries()) {
    if (!isPlain(p)) return `Invalid value for temperature.profiles.${i}: must be an object`;
    if (typeof p.name !== 'string' || p.name.trim() === '') return `Invalid value for temperature.profiles.${i}.name: must not be empty`;
    for (const key of ['extruder', 'bed', 'chamber']) {
      const v = p[key];
      if (key === 'chamber' && (v === undefined || v === null)) continue;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 500) {
        return `Invalid value for temperature.profiles.${i}.${key}: must be a temperature from 0 to 500 °C`;
      }
    }
  }
  return undefined;
}
