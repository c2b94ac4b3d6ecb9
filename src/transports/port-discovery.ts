// Which serial ports and baudrates to offer: device scan (udev when present, /dev globs otherwise), settings globs, VIRTUAL.
import { readdir, access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

export const VIRTUAL_PORT = 'VIRTUAL';

/** Where printers show up on Linux: stable by-id links and the usual USB/UART device names. */
export const DEFAULT_PORT_GLOBS = ['/dev/serial/by-id/*', '/dev/ttyUSB*', '/dev/ttyACM*', '/dev/ttyAMA*', '/dev/rfcomm*'];

/** The baudrates OctoPrint offers in the connection dialog. */
export const STANDARD_BAUDRATES = [250000, 230400, 115200, 57600, 38400, 19200, 9600];
/** Detection order: most likely first. */
const DETECTION_ORDER = [115200, 250000, 230400, 57600, 38400, 19200, 9600];

export interface PortDiscoverySettings {
  additionalPorts: readonly string[];
  blacklistedPorts: readonly string[];
  /** Offer `VIRTUAL` (devel.virtualPrinter.enabled). */
  virtualPrinter: boolean;
  /** Patterns scanned for devices; tests point it at a fake /dev. */
  deviceGlobs?: readonly string[];
  /** Ask udev through SerialPort.list() when udevadm is installed (default true). */
  useUdev?: boolean;
}

export interface BaudrateSettings {
  additionalBaudrates: readonly number[];
  blacklistedBaudrates: readonly number[];
}

type GlobToken = { star: true } | { star: false; test: (c: string) => boolean };

/** `[...]` at `i` (`!` or `^` first negates, `a-z` ranges, a `]` right after the opening is a member): its test and end. */
function globClass(glob: string, i: number): { test: (c: string) => boolean; end: number } | null {
  const end = glob.indexOf(']', i + 2);
  if (end === -1) return null;
  let body = glob.slice(i + 1, end);
  const negate = body[0] === '!' || body[0] === '^';
  if (negate) body = body.slice(1);
  const ranges: Array<[string, string]> = [];
  for (let k = 0; k < body.length; k++) {
    if (body[k + 1] === '-' && k + 2 < body.length) {
      ranges.push([body[k], body[k + 2]]);
      k += 2;
    } else ranges.push([body[k], body[k]]);
  }
  return { test: (c) => ranges.some(([lo, hi]) => c >= lo && c <= hi) !== negate, end };
}

/**
 * fnmatch-style glob (`*`, `?`, `[...]`) → a test of a whole name (one path segment, or a whole path: `*` crosses `/`).
 * Matched by the two-pointer walk that backs up only to the last `*`: time at most name × glob. As a regular expression
 * (`.*` per `*`) a glob of many stars took time exponential in their number against every name listed.
 */
export function globMatcher(glob: string): (name: string) => boolean {
  const tokens: GlobToken[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') {
      if (!tokens.at(-1)?.star) tokens.push({ star: true });
    } else if (c === '?') tokens.push({ star: false, test: () => true });
    else {
      const cls = c === '[' ? globClass(glob, i) : null;
      if (cls) {
        tokens.push({ star: false, test: cls.test });
        i = cls.end;
      } else tokens.push({ star: false, test: (x) => x === c });
    }
  }
  return (name) => {
    let t = 0, n = 0, starT = -1, starN = 0;
    while (n < name.length) {
      const tok = tokens[t];
      if (tok !== undefined && !tok.star && tok.test(name[n])) {
        t++;
        n++;
      } else if (tok?.star) {
        starT = t++;
        starN = n;
      } else if (starT >= 0) {
        t = starT + 1;
        n = ++starN;
      } else return false;
    }
    while (tokens[t]?.star) t++;
    return t === tokens.length;
  };
}

const hasMagic = (s: string) => /[*?[]/.test(s);

/** Expands an absolute glob against the file system (wildcards allowed in any segment). Never throws. */
export async function expandGlob(pattern: string): Promise<string[]> {
  if (!hasMagic(pattern)) return (await exists(pattern)) ? [pattern] : [];
  const segments = pattern.split('/');
  let bases = [segments[0] === '' ? '/' : '.'];
  for (let i = segments[0] === '' ? 1 : 0; i < segments.length; i++) {
    const seg = segments[i];
    if (seg === '') continue;
    const next: string[] = [];
    for (const base of bases) {
      if (!hasMagic(seg)) {
        next.push(join(base, seg));
        continue;
      }
      const matches = globMatcher(seg);
      const names = await readdir(base).catch(() => [] as string[]);
      for (const n of names) if (matches(n) && (n[0] !== '.' || seg[0] === '.')) next.push(join(base, n));
    }
    bases = next;
  }
  const out: string[] = [];
  for (const p of bases) if (await exists(p)) out.push(p);
  return out;
}

async function exists(p: string): Promise<boolean> {
  return access(p, constants.F_OK).then(() => true, () => false);
}

/** SerialPort.list() spawns `udevadm` with no error handler: without it the spawn error would kill the process. */
async function udevadmInstalled(): Promise<boolean> {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && await access(join(dir, 'udevadm'), constants.X_OK).then(() => true, () => false)) return true;
  }
  return false;
}

async function udevPorts(): Promise<string[]> {
  if (!await udevadmInstalled()) return [];
  try {
    const listed = await Promise.race([
      import('serialport').then(({ SerialPort }) => SerialPort.list()),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('udev list timed out')), 3000).unref()),
    ]);
    // Every PC reports 4–32 phantom on-board UARTs (ttyS*); printers are never there unless configured explicitly.
    return listed.map((p) => p.path).filter((p) => !/^\/dev\/ttyS\d+$/.test(p));
  } catch {
    return [];
  }
}

/**
 * Natural order (ttyUSB2 before ttyUSB10; letters case-insensitively), without Intl: ICU's collator maps ≈ 10 MB of
 * its data into the process on first use (Node 24), for a list the UI asks for on every page load.
 */
export function natural(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (isDigit(a, i) && isDigit(b, j)) {
      const ei = digitsEnd(a, i);
      const ej = digitsEnd(b, j);
      const d = Number(a.slice(i, ei)) - Number(b.slice(j, ej));
      if (d !== 0) return d;
      i = ei;
      j = ej;
      continue;
    }
    const ka = collationKey(a[i]);
    const kb = collationKey(b[j]);
    if (ka !== kb) return ka < kb ? -1 : 1;
    i++;
    j++;
  }
  if (i < a.length || j < b.length) return i < a.length ? 1 : -1;
  // Equal but for case: lower case first, as collation's last level has it.
  for (let k = 0; k < Math.min(a.length, b.length); k++) if (a[k] !== b[k]) return a[k] === a[k].toLowerCase() ? -1 : 1;
  return 0;
}

/** Collation's order of ASCII punctuation, all of which comes before digits and letters. */
const PUNCTUATION = '_-,;:!?.\'"()[]{}@*/\\&#%`^+<=>|~$';
const isDigit = (s: string, i: number) => s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57;
const digitsEnd = (s: string, i: number) => { while (i < s.length && isDigit(s, i)) i++; return i; };
function collationKey(c: string): string {
  const p = PUNCTUATION.indexOf(c);
  return p >= 0 ? String.fromCharCode(1 + p) : c.toLowerCase();
}

/** Ports to offer, naturally sorted: devices found + additionalPorts globs − blacklistedPorts globs (+ VIRTUAL). */
export async function listPorts(s: PortDiscoverySettings): Promise<string[]> {
  const found = new Set<string>();
  if (s.useUdev ?? true) for (const p of await udevPorts()) found.add(p);
  for (const g of [...(s.deviceGlobs ?? DEFAULT_PORT_GLOBS), ...s.additionalPorts]) {
    for (const p of await expandGlob(g)) found.add(p);
  }
  const blacklist = s.blacklistedPorts.map(globMatcher);
  const ports = [...found].filter((p) => !blacklist.some((matches) => matches(p)));
  if (s.virtualPrinter) ports.push(VIRTUAL_PORT);
  return ports.sort(natural);
}

/** Baudrates for the connection dialog: the standard list + additional − blacklisted, fastest first. */
export function baudrateOptions(s: BaudrateSettings): number[] {
  const all = new Set([...STANDARD_BAUDRATES, ...s.additionalBaudrates]);
  for (const b of s.blacklistedBaudrates) all.delete(b);
  return [...all].sort((a, b) => b - a);
}

/**
 * Baudrates to try while auto-detecting, in order: the last one that worked, additional ones (fastest first), then
 * the likely ones. With several candidate ports only the two common rates are tried, to keep detection short.
 */
export function detectionBaudrates(s: BaudrateSettings, opts: { lastUsed?: number | null; portCount?: number } = {}): number[] {
  const base = (opts.portCount ?? 1) > 1 ? [115200, 250000] : DETECTION_ORDER;
  const order = [...(opts.lastUsed ? [opts.lastUsed] : []), ...[...s.additionalBaudrates].sort((a, b) => b - a), ...base];
  const blacklisted = new Set(s.blacklistedBaudrates);
  return [...new Set(order)].filter((b) => !blacklisted.has(b));
}
