// Push `subscribe` filters: parsing a client's opt-in message and applying its log/message/event/plugin filters.

/** true = every line, false = none, RegExp = matching lines only. */
export type LineFilter = boolean | RegExp;

export interface Subscription {
  /** false: no `history`/`current` at all. */
  state: false | { logs: LineFilter; messages: LineFilter };
  events: boolean | ReadonlySet<string>;
  plugins: boolean | ReadonlySet<string>;
}

/** Before any `subscribe` a client gets everything it may see, unfiltered. */
export const EVERYTHING: Subscription = Object.freeze({ state: { logs: true, messages: true }, events: true, plugins: true });

const MAX_PATTERN = 200;
/** A quantified group that itself contains a quantifier (`(a+)+`, `(.*)*`) can backtrack for ages on a log line. */
const NESTED_QUANTIFIER = /\([^)]*[+*}][^)]*\)\s*[+*{]/;

function lineFilter(v: unknown): LineFilter | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v !== 'string' || v.length > MAX_PATTERN || NESTED_QUANTIFIER.test(v)) return undefined;
  try {
    return new RegExp(v);
  } catch {
    return undefined;
  }
}

function nameFilter(v: unknown): boolean | ReadonlySet<string> | undefined {
  if (v === undefined) return false;
  if (typeof v === 'boolean') return v;
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v.length ? new Set(v as string[]) : false;
  return undefined;
}

/** The parsed filter, or undefined when the message is malformed (the whole message is then ignored). */
export function parseSubscription(v: unknown): Subscription | undefined {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  let state: Subscription['state'];
  if (o.state === undefined || o.state === false) state = false;
  else if (o.state === true) state = { logs: true, messages: false };
  else if (o.state && typeof o.state === 'object' && !Array.isArray(o.state)) {
    const s = o.state as Record<string, unknown>;
    const logs = s.logs === undefined ? false : lineFilter(s.logs);
    const messages = s.messages === undefined ? false : lineFilter(s.messages);
    if (logs === undefined || messages === undefined) return undefined;
    state = { logs, messages };
  } else return undefined;
  const events = nameFilter(o.events);
  const plugins = nameFilter(o.plugins);
  if (events === undefined || plugins === undefined) return undefined;
  return { state, events, plugins };
}

export function wantsName(filter: boolean | ReadonlySet<string>, name: string): boolean {
  return typeof filter === 'boolean' ? filter : filter.has(name);
}

export function filterLines(lines: readonly string[], filter: LineFilter): string[] {
  if (filter === true) return lines as string[];
  if (filter === false) return [];
  return lines.filter((l) => filter.test(l));
}

/** Filters that let clients share one serialised `current` (no per-client regex work). */
export function shareKey(f: LineFilter): string | undefined {
  return f === true ? 'a' : f === false ? 'n' : undefined;
}
