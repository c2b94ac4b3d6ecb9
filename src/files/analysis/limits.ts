// Machine limits for the planner: Marlin defaults, overlaid by the printer profile, overlaid by what the file's slicer config states.
import type { AnalysisOptions, MachineLimits } from './types.ts';

/** Marlin 2.x's stock Configuration.h values (junction deviation on, classic jerk off). */
export function marlinDefaults(): MachineLimits {
  return {
    maxFeedrate: { x: 300, y: 300, z: 5, e: 25 },
    maxAcceleration: { x: 3000, y: 3000, z: 100, e: 10000 },
    printAcceleration: 3000,
    retractAcceleration: 3000,
    travelAcceleration: 3000,
    jerk: { x: 10, y: 10, z: 0.3, e: 5 },
    junctionDeviation: 0.013,
    combinedXyJerk: false,
    squareCornerVelocity: 0,
    minimumFeedrate: 0,
    minimumTravelFeedrate: 0,
  };
}

const pos = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** Copies every valid number from `src` over `dst` (one level deep for the per-axis records). */
export function overlayLimits(dst: MachineLimits, src: AnalysisOptions['limits'] | undefined): boolean {
  if (!src) return false;
  let changed = false;
  for (const key of ['maxFeedrate', 'maxAcceleration', 'jerk'] as const) {
    const axes = src[key];
    if (!axes) continue;
    for (const axis of ['x', 'y', 'z', 'e'] as const) {
      const v = axes[axis];
      // A zero jerk is meaningful (stop at every corner); a zero speed or acceleration limit is not.
      if (pos(v) && (v > 0 || key === 'jerk')) { dst[key][axis] = v; changed = true; }
    }
  }
  for (const key of ['printAcceleration', 'retractAcceleration', 'travelAcceleration', 'junctionDeviation',
    'squareCornerVelocity', 'minimumFeedrate', 'minimumTravelFeedrate'] as const) {
    const v = src[key];
    if (pos(v)) { dst[key] = v; changed = true; }
  }
  if (typeof src.combinedXyJerk === 'boolean') { dst.combinedXyJerk = src.combinedXyJerk; changed = true; }
  return changed;
}

// First entry of a slicer list value ("1500,1250" = normal, silent mode), as a number.
function first(config: Map<string, string>, key: string): number | undefined {
  const raw = config.get(key);
  if (raw === undefined) return undefined;
  const v = Number.parseFloat(raw.split(/[,;|]/)[0]);
  return Number.isFinite(v) && v >= 0 ? v : undefined;
}

// Cura writes only the user's changes plus the machine definition's name; the limits Cura assumed come from the
// definition. Values as in Cura's fdmprinter (the base of every definition) and creality_base (Ender/CR printers).
const CURA_DEFINITIONS: { match: RegExp; limits: Record<string, string> }[] = [
  { match: /^creality/, limits: {
    machine_max_feedrate_x: '500', machine_max_feedrate_y: '500', machine_max_feedrate_z: '10', machine_max_feedrate_e: '50',
    machine_max_acceleration_x: '500', machine_max_acceleration_y: '500', machine_max_acceleration_z: '100',
    machine_max_acceleration_e: '5000', machine_acceleration: '500',
    machine_max_jerk_xy: '10', machine_max_jerk_z: '0.4', machine_max_jerk_e: '5' } },
  { match: /./, limits: {
    machine_max_feedrate_x: '299792458000', machine_max_feedrate_y: '299792458000',
    machine_max_feedrate_z: '299792458000', machine_max_feedrate_e: '299792458000',
    machine_max_acceleration_x: '9000', machine_max_acceleration_y: '9000', machine_max_acceleration_z: '100',
    machine_max_acceleration_e: '10000', machine_acceleration: '4000',
    machine_max_jerk_xy: '20', machine_max_jerk_z: '0.4', machine_max_jerk_e: '5' } },
];

/** Adds the limits implied by a Cura machine definition to a Cura file's settings (the file's own settings win). */
export function withCuraDefinition(config: Map<string, string>): Map<string, string> {
  const definition = config.get('definition');
  if (definition === undefined || !config.has('TIME')) return config;
  const entry = CURA_DEFINITIONS.find((d) => d.match.test(definition));
  if (!entry) return config;
  const merged = new Map(config);
  for (const [k, v] of Object.entries(entry.limits)) if (!merged.has(k)) merged.set(k, v);
  return merged;
}

/**
 * Limits stated by the slicer's config block (PrusaSlicer/SuperSlicer/Orca/Bambu `machine_max_*`, Cura
 * `machine_max_*` settings). Returns the partial limits plus whether cornering is classic jerk.
 */
export function limitsFromConfig(config: Map<string, string>): { limits: NonNullable<AnalysisOptions['limits']>; classicJerk: boolean } {
  const axes = (prefix: string, alt?: string, zeroOk = false) => {
    const out: Partial<Record<'x' | 'y' | 'z' | 'e', number>> = {};
    for (const a of ['x', 'y', 'z', 'e'] as const) {
      const v = first(config, `${prefix}${a}`) ?? (alt ? first(config, `${alt}${a}`) : undefined);
      if (v !== undefined && (v > 0 || zeroOk)) out[a] = v;
    }
    return out;
  };
  const limits: NonNullable<AnalysisOptions['limits']> = {
    maxFeedrate: axes('machine_max_feedrate_', 'machine_max_speed_'),
    maxAcceleration: axes('machine_max_acceleration_'),
    jerk: axes('machine_max_jerk_', undefined, true),
  };
  // Cura names one XY jerk.
  const curaJerk = first(config, 'machine_max_jerk_xy');
  const curaAccel = first(config, 'machine_acceleration');
  if (curaAccel !== undefined && curaAccel > 0) limits.retractAcceleration = curaAccel;
  if (curaJerk !== undefined) {
    limits.jerk = { ...limits.jerk, x: curaJerk, y: curaJerk };
    limits.combinedXyJerk = true;
  }
  const extruding = first(config, 'machine_max_acceleration_extruding') ?? first(config, 'machine_acceleration');
  if (extruding !== undefined && extruding > 0) limits.printAcceleration = extruding;
  const retracting = first(config, 'machine_max_acceleration_retracting');
  if (retracting !== undefined && retracting > 0) limits.retractAcceleration = retracting;
  // Older PrusaSlicer has no travel limit: Marlin 1's M204 S then drives travel too.
  const travel = first(config, 'machine_max_acceleration_travel') ?? extruding;
  if (travel !== undefined && travel > 0) limits.travelAcceleration = travel;
  const minExtruding = first(config, 'machine_min_extruding_rate');
  if (minExtruding !== undefined) limits.minimumFeedrate = minExtruding;
  const minTravel = first(config, 'machine_min_travel_rate');
  if (minTravel !== undefined) limits.minimumTravelFeedrate = minTravel;
  const classicJerk = Object.keys(limits.jerk ?? {}).length > 0;
  if (classicJerk) limits.junctionDeviation = 0;
  // Klipper ignores jerk settings and corners by its square_corner_velocity (default 5 mm/s).
  if (/^klipper$/i.test(config.get('gcode_flavor') ?? '')) limits.squareCornerVelocity = 5;
  return { limits, classicJerk };
}

/** Number of fields the config block stated (0 = nothing usable). */
export function countStated(l: NonNullable<AnalysisOptions['limits']>): number {
  let n = 0;
  for (const v of Object.values(l)) n += typeof v === 'object' ? Object.keys(v ?? {}).length : 1;
  return n;
}
