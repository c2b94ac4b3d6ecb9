// Job GCODE scripts (beforePrintStarted, afterPrintDone, afterPrintCancelled, afterPrintPaused, beforePrintResumed…):
// lookup and rendering with the context the job provides (pause/cancel position and temperatures, event payload).
//
// Supported template subset (no Jinja dependency), applied in this order:
//   {% snippet 'name' %}        replaced by the snippet `snippets/<name>` (settings, then the scripts folder, then the
//                               built-ins disable_hotends / disable_bed of DEFAULT_GCODE_SCRIPTS, and Gantry's
//                               restore_temperatures / restore_position for beforePrintResumed), nested snippets
//                               expanded up to 5 levels
//   {% if a.b %} … {% else %} … {% endif %}   on their own lines; truthiness of a dotted context path (no elif)
//   {% for i in range(a.b) %} … {% endfor %}  on their own lines; i = 0…n-1 (n a dotted path or a number, at most 64)
//   {{ a.b.c }}                 a dotted context path, e.g. {{ pause_position.x }}, {{ printer_profile.extruder.count }}
// Other tags are dropped; lines that end up empty or are pure comments are not sent.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defaultScript, loadScript, renderScript } from '../gcode-scripts.ts';
import type { EventBus } from '../../core/event-bus.ts';
import type { Logger } from '../../core/logger.ts';
import type { LinkProfile, Printer } from '../types.ts';
import { payload, type ActiveJob } from './active-job.ts';

const SNIPPET = /\{%-?\s*snippet\s+['"]([A-Za-z0-9_.-]+)['"]\s*-?%\}/g;

/** Gantry's own snippets for the profile (disable_hotends and disable_bed are templates in DEFAULT_GCODE_SCRIPTS). */
export function defaultSnippet(name: string, profile: LinkProfile): string | null {
  // Gantry additions for beforePrintResumed after a pause that parked the head or cooled down (not in OctoPrint).
  if (name === 'restore_temperatures') {
    const tools = profile.extruder.sharedNozzle ? 1 : profile.extruder.count;
    const lines: string[] = [];
    if (profile.heatedBed) lines.push('{% if pause_temperature.bed.target %}', 'M190 S{{ pause_temperature.bed.target }}', '{% endif %}');
    for (let i = 0; i < tools; i++) {
      lines.push(`{% if pause_temperature.tool${i}.target %}`, `M109 T${i} S{{ pause_temperature.tool${i}.target }}`, '{% endif %}');
    }
    return lines.join('\n');
  }
  if (name === 'restore_position') {
    return ['{% if pause_position.x %}', 'G90', 'G1 X{{ pause_position.x }} Y{{ pause_position.y }} F4800',
      'G1 Z{{ pause_position.z }} F600', '{% endif %}', '{% if pause_position.f %}', 'G1 F{{ pause_position.f }}', '{% endif %}'].join('\n');
  }
  return null;
}

export interface ScriptSource {
  settings: () => Record<string, string | null>;
  /** The scripts folder (`<basedir>/scripts`); scripts may live in files named after them. */
  scriptsDir: string | null;
  profile: () => LinkProfile;
}

async function snippetText(name: string, src: ScriptSource): Promise<string> {
  const key = `snippets/${name}`;
  const configured = src.settings()[key];
  if (typeof configured === 'string') return configured;
  if (src.scriptsDir) {
    const text = await readFile(join(src.scriptsDir, 'snippets', name), 'utf8').catch(() => null);
    if (text !== null) return text;
  }
  return defaultScript(key) ?? defaultSnippet(name, src.profile()) ?? '';
}

async function expandSnippets(text: string, src: ScriptSource, depth = 0): Promise<string> {
  if (depth > 5 || !SNIPPET.test(text)) return text;
  SNIPPET.lastIndex = 0;
  let out = '';
  let last = 0;
  for (const m of text.matchAll(SNIPPET)) {
    out += text.slice(last, m.index) + (await expandSnippets(await snippetText(m[1], src), src, depth + 1));
    last = (m.index ?? 0) + m[0].length;
  }
  return out + text.slice(last);
}

/** A script's text with its snippets expanded, ready for renderTemplate; null when no script of that name exists. */
export async function loadTemplate(name: string, src: ScriptSource): Promise<string | null> {
  const text = await loadScript(name, src.settings(), src.scriptsDir);
  return text === null ? null : expandSnippets(text, src);
}

/** Renders a loaded template with the context every script sees (printer profile, script name) plus `context`. */
export function renderTemplate(name: string, template: string, profile: LinkProfile, context: Record<string, unknown>): string[] {
  return renderScript(template, { printer_profile: profile, script: { type: 'gcode', name }, ...context });
}

/** Renders a script to command lines; null when no script of that name exists (an empty script gives []). */
export async function renderJobScript(name: string, src: ScriptSource, context: Record<string, unknown>): Promise<string[] | null> {
  const template = await loadTemplate(name, src);
  return template === null ? null : renderTemplate(name, template, src.profile(), context);
}

/** A job script's context: the printer's last position and temperatures, the job's event payload, and `extra`. */
export function scriptContext(printer: Printer, job: ActiveJob | undefined, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { last_position: printer.lastPosition(), last_temperature: printer.temperatures(), ...(job ? { event: payload(job) } : {}), ...extra };
}

/** Renders a job script (empty when it is missing or fails) and fires GcodeScript<Name>Running/Finished. */
export async function jobScript(deps: { scripts: ScriptSource; events: EventBus; logger: Logger }, name: string, ctx: Record<string, unknown>): Promise<string[]> {
  try {
    const lines = await renderJobScript(name, deps.scripts, ctx);
    if (lines === null) return [];
    // Internal events for event subscriptions (never pushed to clients).
    const event = name.charAt(0).toUpperCase() + name.slice(1);
    const p = (ctx.event as Record<string, unknown> | undefined) ?? null;
    deps.events.emit(`GcodeScript${event}Running`, p);
    deps.events.emit(`GcodeScript${event}Finished`, p);
    return lines;
  } catch (err) {
    deps.logger.warn({ err, script: name }, 'script failed to render');
    return [];
  }
}
