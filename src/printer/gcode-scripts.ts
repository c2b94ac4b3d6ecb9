// GCODE scripts (scripts.gcode.<name> settings or files in the scripts folder): lookup, built-in defaults and a small
// template subset ({{ dotted.path }}, {% if x %}/{% else %}/{% endif %}) rendered to command lines.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LinkProfile } from './types.ts';

export const KNOWN_SCRIPTS = ['afterPrinterConnected', 'beforePrinterDisconnected', 'beforePrintStarted', 'afterPrintDone',
  'afterPrintCancelled', 'afterPrintPaused', 'beforePrintResumed', 'beforeToolChange', 'afterToolChange'];

/** OctoPrint's default afterPrintCancelled: motors off, every hotend and the bed off, fan off. */
export function defaultScript(name: string, profile: LinkProfile): string | null {
  if (name !== 'afterPrintCancelled') return KNOWN_SCRIPTS.includes(name) ? '' : null;
  const lines = ['M84'];
  const tools = profile.extruder.sharedNozzle ? 1 : profile.extruder.count;
  for (let i = 0; i < tools; i++) lines.push(`M104 T${i} S0`);
  if (profile.heatedBed) lines.push('M140 S0');
  lines.push('M106 S0');
  return lines.join('\n');
}

function lookup(ctx: Record<string, unknown>, path: string): unknown {
  let cur: unknown = ctx;
  for (const part of path.trim().split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/** Renders the template subset; unknown tags are dropped rather than sent to the printer. */
export function renderScript(template: string, ctx: Record<string, unknown>): string[] {
  const out: string[] = [];
  const stack: boolean[] = [];
  const active = () => stack.every(Boolean);
  for (const raw of template.split(/\r?\n/)) {
    const tag = /^\s*\{%-?\s*(if|elif|else|endif)\b(.*?)-?%\}\s*$/.exec(raw);
    if (tag) {
      const [, kw, expr] = tag;
      if (kw === 'if') stack.push(Boolean(lookup(ctx, expr)));
      else if (kw === 'else' && stack.length) stack[stack.length - 1] = !stack[stack.length - 1];
      else if (kw === 'endif') stack.pop();
      continue;
    }
    if (!active()) continue;
    if (/\{%.*%\}/.test(raw)) continue;
    const line = raw.replace(/\{\{\s*([^}]+?)\s*\}\}/g, (_m, p: string) => {
      const v = lookup(ctx, p);
      return v === undefined || v === null ? '' : String(v);
    }).trim();
    if (line !== '' && !line.startsWith(';')) out.push(line);
  }
  return out;
}

/** The script text: settings first, then `<scriptsDir>/<name>`, then the built-in default; null if unknown. */
export async function loadScript(name: string, settings: Record<string, string | null>, scriptsDir: string | null, profile: LinkProfile): Promise<string | null> {
  const configured = settings[name];
  if (typeof configured === 'string') return configured;
  if (scriptsDir && /^[A-Za-z0-9_.-]+$/.test(name)) {
    const text = await readFile(join(scriptsDir, name), 'utf8').catch(() => null);
    if (text !== null) return text;
  }
  return defaultScript(name, profile);
}
