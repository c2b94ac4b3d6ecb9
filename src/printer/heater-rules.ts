// Rules for heater and extruder commands from clients: which tool keys exist, target/offset ranges, extrusion amount
// and speed, flow rate factor, and which heaters a profile has. Each rule returns the checked value or throws
// INVALID_REQUEST with the text clients show.
import { invalid } from '../core/errors.ts';
import { shown } from '../core/text.ts';
import { MAX_FEED_MM_MIN, MAX_MOVE_MM, factorPercent } from './printer-commands.ts';

export const TOOL_KEY = /^tool(\d+)$/;
/** Highest target a client may set, in °C. */
export const TARGET_MAX = 1500;
/** Offsets are applied to every later target: kept within ±50 °C. */
export const OFFSET_LIMIT = 50;

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

function mapOf(v: unknown, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalid(`${what} is invalid`);
  return v as Record<string, unknown>;
}

/** `toolN` → N, for a tool the profile has. */
export function toolIndex(key: unknown, toolCount: number): number {
  const m = typeof key === 'string' ? TOOL_KEY.exec(key) : null;
  const n = m ? Number(m[1]) : NaN;
  if (!m || n >= toolCount) throw invalid(`Invalid tool: ${shown(key)}`);
  return n;
}

/** `{toolN: °C}`, all checked before any is applied. */
export function toolTargets(targets: unknown, toolCount: number): Array<[string, number]> {
  const valid: Array<[string, number]> = [];
  for (const [k, v] of Object.entries(mapOf(targets, 'targets'))) {
    toolIndex(k, toolCount);
    if (!isNumber(v) || v < 0 || v > TARGET_MAX) throw invalid(`Not a number or out of range for ${k}: ${shown(v)}`);
    valid.push([k, v]);
  }
  return valid;
}

export function toolOffsets(offsets: unknown, toolCount: number): Record<string, number> {
  const valid: Record<string, number> = {};
  for (const [k, v] of Object.entries(mapOf(offsets, 'offsets'))) {
    toolIndex(k, toolCount);
    if (!isNumber(v) || v < -OFFSET_LIMIT || v > OFFSET_LIMIT) throw invalid(`Offset not in range [-${OFFSET_LIMIT}, ${OFFSET_LIMIT}] for ${k}: ${shown(v)}`);
    valid[k] = v;
  }
  return valid;
}

/** Target of the bed or chamber. */
export function heaterTarget(v: unknown): number {
  if (!isNumber(v) || v < 0 || v > TARGET_MAX) throw invalid('target is invalid');
  return v;
}

export function heaterOffset(v: unknown): number {
  if (!isNumber(v) || v < -OFFSET_LIMIT || v > OFFSET_LIMIT) throw invalid('offset is invalid');
  return v;
}

export function extrusion(amount: unknown, speed: unknown): { amount: number; speed?: number } {
  if (!isNumber(amount)) throw invalid(`Not a number for extrusion amount: ${shown(amount)}`);
  if (Math.abs(amount) > MAX_MOVE_MM) throw invalid(`Extrusion amount out of range [-${MAX_MOVE_MM}, ${MAX_MOVE_MM}]: ${amount}`);
  if (speed === undefined) return { amount };
  if (!isNumber(speed) || speed <= 0 || speed > MAX_FEED_MM_MIN) throw invalid(`speed is invalid: ${shown(speed)}`);
  return { amount, speed };
}

/** Flow rate factor (0.75–1.25 or 75–125) as a percentage. */
export function flowPercent(factor: unknown): number {
  const percent = isNumber(factor) ? factorPercent(factor, 75, 125) : null;
  if (percent === null) throw invalid(`factor is invalid: ${shown(factor)}`);
  return percent;
}

export type ChamberOrBed = 'bed' | 'chamber';

export function hasHeater(profile: { heatedBed: boolean; heatedChamber: boolean }, heater: ChamberOrBed): boolean {
  return heater === 'bed' ? profile.heatedBed : profile.heatedChamber;
}

export const MISSING_HEATER: Record<ChamberOrBed, string> = {
  bed: 'Printer does not have a heated bed',
  chamber: 'Printer does not have a heated chamber',
};
