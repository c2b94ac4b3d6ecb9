// G-code for the printer controls (jog, home, extrude, temperatures, rates), built from the printer profile.
import type { LinkProfile } from './types.ts';
import { withoutTrailing } from '../core/text.ts';

/**
 * Moves and speeds a client may ask for: far beyond any printer (10 m, 100 m/min), near enough that a number always
 * prints as G-code's plain decimal. Past them `1e308` went out as `XInfinity` and `E-1e+300` (firmware reads C's strtod:
 * an endless move).
 */
export const MAX_MOVE_MM = 10_000;
export const MAX_FEED_MM_MIN = 100_000;

/** A plain decimal with at most 4 places: G-code has no exponents (`1e-7` → `0`). */
const fmt = (n: number): string => {
  const s = withoutTrailing(withoutTrailing(n.toFixed(4), '0'), '.');
  return s === '-0' ? '0' : s;
};

export function jogCommands(
  profile: LinkProfile,
  axes: { x?: number; y?: number; z?: number },
  opts: { relative?: boolean; speed?: number | false } = {},
): string[] {
  const parts: string[] = [];
  const speeds: number[] = [];
  for (const axis of ['x', 'y', 'z'] as const) {
    const v = axes[axis];
    if (v === undefined) continue;
    parts.push(`${axis.toUpperCase()}${fmt(v)}`);
    speeds.push(profile.axes[axis].speed);
  }
  if (parts.length === 0) return [];
  let move = `G1 ${parts.join(' ')}`;
  if (opts.speed !== false) {
    const speed = typeof opts.speed === 'number' ? opts.speed : Math.min(...speeds);
    move += ` F${fmt(speed)}`;
  }
  const relative = opts.relative ?? true;
  return relative ? ['G91', move, 'G90'] : ['G90', move];
}

export function homeCommands(axes: Array<'x' | 'y' | 'z'>): string[] {
  return ['G91', `G28 ${axes.map((a) => `${a.toUpperCase()}0`).join(' ')}`, 'G90'];
}

export function extrudeCommands(profile: LinkProfile, amount: number, speed?: number): string[] {
  const f = speed ?? profile.axes.e.speed;
  return ['G91', 'M83', `G1 E${fmt(amount)} F${fmt(f)}`, 'M82', 'G90'];
}

/** `tool0`/`bed`/`chamber` target → M104/M140/M141. */
export function targetCommand(heater: string, target: number): string {
  if (heater === 'bed') return `M140 S${fmt(target)}`;
  if (heater === 'chamber') return `M141 S${fmt(target)}`;
  const tool = Number(heater.slice(4));
  return `M104 T${tool} S${fmt(target)}`;
}

/**
 * Feed/flow factor in either form (1.2 or 120) to percent. JSON cannot tell 1.0 from 1, so anything up to the
 * largest fraction allowed (2.0 for feed, 1.25 for flow) is read as a fraction. Null when out of range.
 */
export function factorPercent(factor: number, min: number, max: number): number | null {
  if (!Number.isFinite(factor)) return null;
  const percent = factor <= max / 100 ? factor * 100 : factor;
  if (percent < min || percent > max) return null;
  return Math.round(percent);
}
