// OctoPrint's config.yaml in Gantry's settings: every key Gantry's schema has is taken as it is (both follow
// OctoPrint's layout), the few that moved are mapped (classic webcam plugin, discovery uuid, virtual printer), and
// every other key is listed in the report with the reason. OctoPrint-MQTT and OctoPrint-HomeAssistant settings map
// one to one onto Gantry's MQTT service. Missing keys keep Gantry's defaults (OctoPrint's too).
import type { TSchema } from 'typebox';
import { Value } from '../config/typebox.ts';
import { Schema } from '../config/schema.ts';
import type { YamlFile } from './source.ts';
import { isPlain, type Plain } from '../core/plain.ts';
import type { ImportReport } from './report.ts';

/** Keys handled elsewhere in the import, or deliberately not carried over, with the reason given in the report. */
const NOT_TAKEN: Record<string, string> = {
  'api.key': '', // the global key is imported with the other keys
  'printerProfiles.default': '', // set with the printer profiles, once the profile is known to exist
  'accessControl.salt': 'used to check the imported legacy password hashes (stored with them); not a setting in Gantry',
  'accessControl.userfile': 'users are imported into Gantry\'s users.yaml',
  'accessControl.groupfile': 'groups are imported into Gantry\'s groups.yaml',
  'server.secretKey': 'Gantry signs its cookies differently and makes its own secret; users log in once more',
  folder: 'Gantry keeps its folders in its own base dir; their contents were imported',
};

/** classicwebcam plugin keys → Gantry's webcam section (OctoPrint 1.9 moved them into the plugin). */
const CLASSIC_WEBCAM = ['stream', 'snapshot', 'flipH', 'flipV', 'rotate90', 'streamRatio', 'streamTimeout', 'snapshotTimeout',
  'snapshotSslValidation', 'cacheBuster'];

interface Walk { file: YamlFile; report: ImportReport; patch: Plain }

function schemaProps(node: TSchema | undefined): Record<string, TSchema> | undefined {
  const props = (node as { properties?: Record<string, TSchema> } | undefined)?.properties;
  return props && Object.keys(props).length > 0 ? props : undefined;
}

function setIn(obj: Plain, path: string[], value: unknown): void {
  let node = obj;
  for (const k of path.slice(0, -1)) {
    if (!isPlain(node[k])) node[k] = {};
    node = node[k] as Plain;
  }
  node[path[path.length - 1]] = value;
}

/** Every leaf key path below a value (lists count as one leaf), for the report. */
function leaves(value: unknown, path: string[]): string[] {
  if (!isPlain(value) || Object.keys(value).length === 0) return [path.join('.')];
  return Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, k]));
}

function notTaken(w: Walk, path: string[], value: unknown, why: string): void {
  for (const leaf of leaves(value, path)) w.report.skip(leaf, why);
}

/** Takes one value for a schema node, or fails naming the file, line and key (hand-edited input). */
function take(w: Walk, path: string[], value: unknown, node: TSchema, target: string[] = path): void {
  let v = value;
  // OctoPrint writes the cookie SameSite value in lower case.
  if (target.join('.') === 'server.cookies.samesite' && typeof v === 'string') v = v.charAt(0).toUpperCase() + v.slice(1).toLowerCase();
  if (v === null && !Value.Check(node, null)) {
    // A null that OctoPrint stores for "unset" where Gantry has a concrete default: the default applies.
    return;
  }
  for (const e of Value.Errors(node, v)) {
    throw w.file.error(path, `${e.message}${e.instancePath ? ` at ${e.instancePath}` : ''} (found ${JSON.stringify(v)})`);
  }
  setIn(w.patch, target, structuredClone(v));
}

function walkSection(w: Walk, raw: Plain, props: Record<string, TSchema>, path: string[]): void {
  for (const [k, v] of Object.entries(raw)) {
    const here = [...path, k];
    const dotted = here.join('.');
    if (dotted in NOT_TAKEN) {
      if (NOT_TAKEN[dotted]) notTaken(w, here, v, NOT_TAKEN[dotted]);
      continue;
    }
    const node = props[k];
    if (!node) {
      notTaken(w, here, v, 'Gantry has no such setting');
      continue;
    }
    if (dotted === 'scripts.gcode' && isPlain(v)) {
      take(w, here, flattenSnippets(v), node);
      continue;
    }
    const inner = schemaProps(node);
    if (inner && isPlain(v)) walkSection(w, v, inner, here);
    else if (inner && v !== null && v !== undefined) throw w.file.error(here, `must be a mapping (found ${JSON.stringify(v)})`);
    else if (v !== undefined) take(w, here, v, node);
  }
}

/** OctoPrint nests snippets (`scripts.gcode.snippets.<name>`); Gantry names them `snippets/<name>`. */
function flattenSnippets(gcode: Plain): Plain {
  const out: Plain = {};
  for (const [k, v] of Object.entries(gcode)) {
    if (k === 'snippets' && isPlain(v)) for (const [n, text] of Object.entries(v)) out[`snippets/${n}`] = text;
    else out[k] = v;
  }
  return out;
}

/** Plugins whose settings Gantry keeps under the same keys (its built-in MQTT service speaks both plugins' topics). */
const SAME_KEY_PLUGINS = ['mqtt', 'homeassistant'];

function walkPlugins(w: Walk, plugins: Plain): void {
  const webcam = schemaProps(schemaProps(Schema)!.webcam)!;
  const pluginProps = schemaProps(schemaProps(Schema)!.plugins)!;
  for (const [id, section] of Object.entries(plugins)) {
    const base = ['plugins', id];
    if (SAME_KEY_PLUGINS.includes(id) && isPlain(section)) {
      const { _config_version: version, ...rest } = section;
      if (version !== undefined) notTaken(w, [...base, '_config_version'], version, 'OctoPrint plugin settings version');
      walkSection(w, { [id]: rest }, pluginProps, ['plugins']);
      // OctoPrint-MQTT's default base topic is "octoPrint/"; Gantry's default is per host. An imported broker set-up keeps
      // the topics its dashboards and flows subscribe to.
      const publish = isPlain(rest.publish) ? rest.publish : undefined;
      if (id === 'mqtt' && isPlain(rest.broker) && rest.broker.url && !publish?.baseTopic) {
        setIn(w.patch, ['plugins', 'mqtt', 'publish', 'baseTopic'], 'octoPrint/');
        w.report.note('plugins.mqtt.publish.baseTopic set to OctoPrint-MQTT\'s default "octoPrint/" so subscribers keep their topics');
      }
      continue;
    }
    if (!isPlain(section)) {
      notTaken(w, base, section, id === '_disabled' ? 'OctoPrint\'s list of disabled plugins; Gantry has no plugins' : 'Gantry has no such plugin');
      continue;
    }
    for (const [k, v] of Object.entries(section)) {
      const here = [...base, k];
      if (k === '_config_version') notTaken(w, here, v, 'OctoPrint plugin settings version');
      else if (id === 'classicwebcam' && CLASSIC_WEBCAM.includes(k)) take(w, here, v, webcam[k], ['webcam', k]);
      else if (id === 'discovery' && k === 'upnpUuid' && typeof v === 'string' && v) {
        // Home Assistant and other zeroconf clients know the host by this id: keeping it keeps their device.
        setIn(w.patch, ['server', 'uuid'], v);
      } else if (id === 'virtual_printer' && k === 'enabled' && typeof v === 'boolean') setIn(w.patch, ['devel', 'virtualPrinter', 'enabled'], v);
      else notTaken(w, here, v, id === 'classicwebcam' || id === 'virtual_printer' || id === 'discovery'
        ? 'Gantry has no such setting' : `settings of OctoPrint plugin "${id}", which Gantry does not have`);
    }
  }
}

/**
 * The config patch for Gantry from OctoPrint's config.yaml. System commands of event subscriptions come over
 * disabled (they run shell commands; the user turns them on after checking them).
 */
export function mapSettings(file: YamlFile | undefined, report: ImportReport): Plain {
  const patch: Plain = {};
  if (!file || !isPlain(file.value)) return patch;
  const raw = file.value;
  const w: Walk = { file, report, patch };
  const top = schemaProps(Schema)!;
  // Plugins last: OctoPrint 1.9 moved the webcam URLs into the classic webcam plugin, whose values are the ones in use.
  for (const [k, v] of [...Object.entries(raw).filter(([k]) => k !== 'plugins'), ...Object.entries(raw).filter(([k]) => k === 'plugins')]) {
    if (k === 'plugins') {
      if (isPlain(v)) walkPlugins(w, v);
      else if (v !== null) throw file.error(['plugins'], 'must be a mapping of plugin settings');
    } else if (k in NOT_TAKEN) {
      if (NOT_TAKEN[k]) notTaken(w, [k], v, NOT_TAKEN[k]);
    } else if (!top[k]) {
      notTaken(w, [k], v, 'Gantry has no such setting');
    } else {
      walkSection(w, { [k]: v }, top, []);
    }
  }
  const events = patch.events as Plain | undefined;
  if (events && Array.isArray(events.subscriptions)) {
    events.subscriptions = events.subscriptions.map((s: unknown, i) => {
      if (isPlain(s) && s.type === 'system' && s.enabled !== false) {
        report.note(`events.subscriptions[${i}] (${String(s.name ?? s.event)}) runs a system command: imported disabled, enable it after checking it`);
        return { ...s, enabled: false };
      }
      return s;
    });
  }
  return patch;
}
