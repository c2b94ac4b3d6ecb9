// Placeholder substitution for event subscription commands, with Python `str.format` semantics as OctoPrint users
// write them: `{name}`, `{{`/`}}` for literal braces, nested `{position[x]}` / `{a.b}`; unknown names fail the command.

export class UnknownPlaceholderError extends Error {
  constructor(readonly placeholder: string) {
    super(`unknown placeholder {${placeholder}}`);
  }
}

/** Python's str() of a value: True/False/None, repr-style containers, plain strings as they are. */
export function pyStr(v: unknown): string {
  return typeof v === 'string' ? v : pyRepr(v);
}

/** Python's repr() of a JSON-like value (`{__data}`). */
export function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : v > 0 ? 'inf' : v < 0 ? '-inf' : 'nan';
  if (typeof v === 'string') return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (typeof v === 'object') {
    return `{${Object.entries(v as Record<string, unknown>).map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`).join(', ')}}`;
  }
  return String(v);
}

/** Resolves `name[key].attr[0]` against the values; throws UnknownPlaceholderError when any step is missing. */
function resolveField(field: string, values: Record<string, unknown>): unknown {
  // Read by index, step by step: an expression per step (`^(?:\.([^.[]+)|…)(.*)$`) could retry a long name from each
  // of its characters.
  const steps = /[.[]/;
  const first = field.search(steps);
  const head = first < 0 ? field : field.slice(0, first);
  if (!Object.prototype.hasOwnProperty.call(values, head)) throw new UnknownPlaceholderError(field);
  let cur: unknown = values[head];
  let at = first < 0 ? field.length : first;
  while (at < field.length) {
    let key: string;
    if (field[at] === '.') {
      const next = field.slice(at + 1).search(steps);
      const end = next < 0 ? field.length : at + 1 + next;
      if (end === at + 1) throw new UnknownPlaceholderError(field);
      key = field.slice(at + 1, end);
      at = end;
    } else if (field[at] === '[') {
      const end = field.indexOf(']', at + 1);
      if (end < 0) throw new UnknownPlaceholderError(field);
      key = field.slice(at + 1, end);
      at = end + 1;
    } else {
      // Only `.` or `[` may follow `]` (Python's str.format refuses the rest too).
      throw new UnknownPlaceholderError(field);
    }
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, key)) throw new UnknownPlaceholderError(field);
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/**
 * Formats `template` with `values`. A `!r` conversion gives the repr; a format spec after `:` is accepted but only
 * `d`/`s`/`f` with an optional precision are applied (others pass the plain value through).
 */
export function formatCommand(template: string, values: Record<string, unknown>): string {
  let out = '';
  let i = 0;
  while (i < template.length) {
    const ch = template[i];
    if (ch === '{') {
      if (template[i + 1] === '{') { out += '{'; i += 2; continue; }
      const end = template.indexOf('}', i);
      if (end === -1) throw new Error("Single '{' encountered in format string");
      out += formatField(template.slice(i + 1, end), values);
      i = end + 1;
      continue;
    }
    if (ch === '}') {
      if (template[i + 1] === '}') { out += '}'; i += 2; continue; }
      throw new Error("Single '}' encountered in format string");
    }
    out += ch;
    i++;
  }
  return out;
}

function formatField(spec: string, values: Record<string, unknown>): string {
  let field = spec;
  let format = '';
  const colon = field.indexOf(':');
  if (colon !== -1) { format = field.slice(colon + 1); field = field.slice(0, colon); }
  let conversion = '';
  const bang = field.indexOf('!');
  if (bang !== -1) { conversion = field.slice(bang + 1); field = field.slice(0, bang); }
  if (field === '') throw new UnknownPlaceholderError(spec);
  const v = resolveField(field, values);
  if (conversion === 'r') return pyRepr(v);
  const fm = /^\.?(\d*)([dfs]?)$/.exec(format);
  if (format && fm && typeof v === 'number') {
    if (fm[2] === 'd') return String(Math.trunc(v));
    if (fm[2] === 'f') return v.toFixed(fm[1] ? Number(fm[1]) : 6);
  }
  return pyStr(v);
}

/** `datetime.now().isoformat()`: local time with microseconds, no zone. */
export function pyIsoNow(d: Date): string {
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}000`;
}
