// The timelapse configuration: OctoPrint 1.9.3's rules for building it from a request or from config.yaml, and its
// three wire forms (GET /api/timelapse `config`, the `timelapse` push message, the saved webcam.timelapse section).
import { invalid } from '../core/errors.ts';
import type { Config } from '../config/schema.ts';

export type TimelapseType = 'off' | 'zchange' | 'timed';

export type TimelapseConfig =
  | { type: 'off' }
  | { type: 'zchange'; postRoll: number; fps: number; retractionZHop: number; minDelay: number }
  | { type: 'timed'; postRoll: number; fps: number; interval: number };

export const OFF: TimelapseConfig = Object.freeze({ type: 'off' });

const DEFAULTS = { postRoll: 0, fps: 25, interval: 10, retractionZHop: 0, minDelay: 5 };

type Plain = Record<string, unknown>;

/** OctoPrint's int(): numbers are truncated, numeric strings parsed; anything else is not a number. */
function toInt(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v)) return Number.parseInt(v, 10);
  return undefined;
}

function toFloat(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

/** A field of the request: absent → default; present but unparsable or out of range → 400 "<name> is invalid". */
function field(body: Plain, name: keyof typeof DEFAULTS, parse: (v: unknown) => number | undefined, ok: (n: number) => boolean): number {
  if (!(name in body) || body[name] === undefined) return DEFAULTS[name];
  const n = parse(body[name]);
  // 1.9.3 answers a JSON null with a 500 (uncaught type error); it is a bad value like any other.
  if (n === undefined || !ok(n)) throw invalid(`${name} is invalid`);
  return n;
}

/**
 * A complete new config from a POST /api/timelapse body (JSON or form fields): fields not sent take their defaults,
 * they are not kept from before. Returns undefined when `type` is absent (nothing to change).
 */
export function configFromRequest(body: Plain): TimelapseConfig | undefined {
  if (!('type' in body) || body.type === undefined) return undefined;
  const type = body.type;
  if (type !== 'off' && type !== 'zchange' && type !== 'timed') throw invalid('type is invalid');
  const postRoll = field(body, 'postRoll', toInt, (n) => n >= 0);
  const fps = field(body, 'fps', toInt, (n) => n > 0);
  if (type === 'off') return OFF;
  if (type === 'timed') {
    const interval = field(body, 'interval', toInt, (n) => n > 0);
    return { type, postRoll, fps, interval };
  }
  const retractionZHop = field(body, 'retractionZHop', toFloat, (n) => n >= 0);
  const minDelay = field(body, 'minDelay', toFloat, (n) => n > 0);
  return { type, postRoll, fps, retractionZHop, minDelay };
}

/** The saved config as OctoPrint's configure step reads it: bad or missing values fall back, never fail. */
export function configFromSettings(tl: Config['webcam']['timelapse']): TimelapseConfig {
  const postRoll = tl.postRoll >= 0 ? tl.postRoll : 0;
  const fps = tl.fps > 0 ? tl.fps : DEFAULTS.fps;
  const o = tl.options;
  if (tl.type === 'timed') {
    const interval = typeof o.interval === 'number' && o.interval > 0 ? Math.max(1, Math.trunc(o.interval)) : DEFAULTS.interval;
    return { type: 'timed', postRoll, fps, interval };
  }
  if (tl.type === 'zchange') {
    const retractionZHop = typeof o.retractionZHop === 'number' && o.retractionZHop >= 0 ? o.retractionZHop : DEFAULTS.retractionZHop;
    const minDelay = typeof o.minDelay === 'number' && o.minDelay > 0 ? o.minDelay : DEFAULTS.minDelay;
    return { type: 'zchange', postRoll, fps, retractionZHop, minDelay };
  }
  return OFF;
}

/**
 * What `save` writes under webcam.timelapse. Options of the other type are written as null: config patches merge
 * objects key by key, and a stale `interval` must not survive a switch to zchange.
 */
export function settingsFromConfig(c: TimelapseConfig): Config['webcam']['timelapse'] {
  const none = { interval: null, retractionZHop: null, minDelay: null };
  if (c.type === 'off') return { type: 'off', fps: DEFAULTS.fps, postRoll: DEFAULTS.postRoll, options: none };
  if (c.type === 'timed') return { type: 'timed', fps: c.fps, postRoll: c.postRoll, options: { ...none, interval: c.interval } };
  return { type: 'zchange', fps: c.fps, postRoll: c.postRoll, options: { ...none, retractionZHop: c.retractionZHop, minDelay: c.minDelay } };
}

/** The `timelapse` push message: type and the one option, no fps/postRoll/minDelay (as 1.9.3 sends it). */
export function pushPayload(c: TimelapseConfig): Plain | null {
  if (c.type === 'off') return null;
  if (c.type === 'timed') return { type: 'timed', options: { interval: c.interval } };
  return { type: 'zchange', options: { retractionZHop: c.retractionZHop } };
}
