// GCODE scripts (scripts.gcode.<name> settings or files in the scripts folder): lookup, built-in defaults and a small
// template subset ({{ dotted.path }}, {% if x %}/{% else %}/{% endif %}, {% for i in range(n) %}/{% endfor %}) rendered
// to command lines.
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_GCODE_SCRIPTS } from '../config/schema.ts';
import { splitLines } from '../gcode/line-breaks.ts';

export const KNOWN_SCRIPTS = ['afterPrinterConnected', 'beforePrinterDisconnected', 'beforePrintStarted', 'afterPrintDone',
  'afterPrintCancelled', 'afterPrintPaused', 'beforePrintResumed', 'beforeToolChange', 'afterToolChange'];

/**
 * The built-in text of a script or snippet (`snippets/<name>`), the same the settings show: afterPrintCancelled turns
 * motors, hotends, bed and fan off; other known scripts are empty; null for names nobody defines.
 */
export function defaultScript(name: string): string | null {
  if (Object.hasOwn(DEFAULT_GCODE_SCRIPTS, name)) return DEFAULT_GCODE_SCRIPTS[name];
  return KNOWN_SCRIPTS.includes(name) ? '' : null;
}

const SCRIPT_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

/**
 * The scripts kept as files in the scripts folder (`<name>`, `snippets/<name>`), by name: what runs when the settings
 * do not replace them, so the settings show them too.
 */
export async function scriptsInFolder(scriptsDir: string | null): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  if (!scriptsDir) return out;
  const readFolder = async (dir: string, prefix: string) => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    await Promise.all(entries.filter((e) => e.isFile() && SCRIPT_NAME.test(e.name)).map(async (e) => {
      const text = await readFile(join(dir, e.name), 'utf8').catch(() => null);
      if (text !== null) out[prefix + e.name] = text;
    }));
  };
  await Promise.all([readFolder(scriptsDir, ''), readFolder(join(scriptsDir, 'snippets'), 'snippets/')]);
  return out;
}

function lookup(ctx: Record<string, unknown>, path: string): unknown {
  let cur: unknown = ctx;
  for (const part of path.trim().split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

const TAG = /^\s*\{%-?\s*(if|elif|else|endif|for|endfor)\b(.*?)-?%\}\s*$/;
// The range's arguments are trimmed after the match: `\(\s*([^)]*?)\s*\)` could split a run of spaces every way.
const FOR = /^\s*([A-Za-z_]\w*)\s+in\s+range\(([^)]*)\)\s*$/;
/** A loop bound from a setting must not make a script of thousands of lines (profiles have at most a few tools). */
const MAX_LOOP = 64;

/** Renders the template subset; unknown tags are dropped rather than sent to the printer. */
export function renderScript(template: string, ctx: Record<string, unknown>): string[] {
  const out: string[] = [];
  const lines = splitLines(template);
  renderLines(lines, 0, lines.length, ctx, out);
  return out;
}

function renderLines(lines: string[], from: number, to: number, ctx: Record<string, unknown>, out: string[]): void {
  const stack: boolean[] = [];
  const active = () => stack.every(Boolean);
  for (let i = from; i < to; i++) {
    const raw = lines[i];
    const tag = TAG.exec(raw);
    if (tag) {
      const [, kw, expr] = tag;
      if (kw === 'for') {
        const end = loopEnd(lines, i + 1, to);
        const loop = FOR.exec(expr);
        if (loop && active()) {
          const count = Math.min(MAX_LOOP, loopCount(loop[2].trim(), ctx));
          for (let k = 0; k < count; k++) renderLines(lines, i + 1, end, { ...ctx, [loop[1]]: k }, out);
        }
        i = end;
      } else if (kw === 'if') stack.push(Boolean(lookup(ctx, expr)));
      else if (kw === 'else' && stack.length) stack[stack.length - 1] = !stack[stack.length - 1];
      else if (kw === 'endif') stack.pop();
      continue;
    }
    if (!active()) continue;
    if (/\{%.*%\}/.test(raw)) continue;
    // From the first of a run of `{` only, the name trimmed after (each `{` of a run, and each split of the spaces
    // around the name, would be tried in turn).
    const line = raw.replace(/(?<!\{)\{\{([^}]+)\}\}/g, (_m, p: string) => {
      const v = lookup(ctx, p.trim());
      return v === undefined || v === null ? '' : String(v);
    }).trim();
    if (line !== '' && !line.startsWith(';')) out.push(line);
  }
}

/** Index of the `{% endfor %}` closing a loop whose body starts at `from` (nested loops skipped); `to` if unclosed. */
function loopEnd(lines: string[], from: number, to: number): number {
  let depth = 0;
  for (let i = from; i < to; i++) {
    const tag = TAG.exec(lines[i]);
    if (tag?.[1] === 'for') depth++;
    else if (tag?.[1] === 'endfor' && depth-- === 0) return i;
  }
  return to;
}

function loopCount(arg: string, ctx: Record<string, unknown>): number {
  const n = /^\d+$/.test(arg) ? Number(arg) : Number(lookup(ctx, arg));
  return Number.isInteger(n) && n > 0 ? n : 0;
}

/** The script text: settings first, then `<scriptsDir>/<name>`, then the built-in default; null if unknown. */
export async function loadScript(name: string, settings: Record<string, string | null>, scriptsDir: string | null): Promise<string | null> {
  const configured = settings[name];
  if (typeof configured === 'string') return configured;
  if (scriptsDir && SCRIPT_NAME.test(name)) {
    const text = await readFile(join(scriptsDir, name), 'utf8').catch(() => null);
    if (text !== null) return text;
  }
  return defaultScript(name);
}
