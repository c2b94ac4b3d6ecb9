// Push `subscribe` filters: parsing a client's opt-in message and applying its log/message/event/plugin filters.
import { createRequire } from 'node:module';
import type * as Re2Module from 're2js';

type Re2 = typeof Re2Module;

/** A client's pattern for terminal lines, matched anywhere in a line (Python's `re.search`, as OctoPrint does). */
export interface LinePattern { test(line: string): boolean; pattern(): string }

/** true = every line, false = none, a pattern = matching lines only. */
export type LineFilter = boolean | LinePattern;

export interface Subscription {
  /** false: no `history`/`current` at all. */
  state: false | { logs: LineFilter; messages: LineFilter };
  events: boolean | ReadonlySet<string>;
  plugins: boolean | ReadonlySet<string>;
}

/** Before any `subscribe` a client gets everything it may see, unfiltered. */
export const EVERYTHING: Subscription = Object.freeze({ state: { logs: true, messages: true }, events: true, plugins: true });

const MAX_PATTERN = 200;

/**
 * Patterns come from any client with the terminal permission and run on every line the printer exchanges, so they
 * are compiled by RE2 (re2js), whose matching time is linear in the line: `(a|a)+$` against a line of 28 `a`s held
 * the event loop for 20 s with JavaScript's backtracking RegExp. RE2 has no look-around or back-references; a
 * pattern using them is refused like any invalid one. re2js is required with the first pattern (≈ 30 ms once, and
 * 3 MB that most installations never need), synchronously so a subscribe takes effect before anything else is sent;
 * the build leaves it out of the bundle for that (scripts/build.mjs).
 */
let re2: Re2 | undefined;
const patternEngine = (): Re2 => (re2 ??= createRequire(import.meta.url)('re2js') as Re2);

function lineFilter(v: unknown): LineFilter | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v !== 'string' || v.length > MAX_PATTERN) return undefined;
  // A missing re2js is a broken installation, not a bad pattern: it throws (the caller logs it).
  const { RE2JS } = patternEngine();
  try {
    return RE2JS.compile(v);
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

/** Clients whose filters have the same key share one serialised `current` (and the filtering work behind it). */
export function shareKey(f: LineFilter): string {
  return f === true ? 'a' : f === false ? 'n' : `r${f.pattern()}`;
}
