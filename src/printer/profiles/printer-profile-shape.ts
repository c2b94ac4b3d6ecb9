// A printer profile's shape: its types, OctoPrint's built-in default, and the validation that normalises any profile.
import { isPlain, type Plain } from '../../core/plain.ts';
import { DomainError, ErrorCodes } from '../../core/errors.ts';

export interface CustomBox { x_min: number; y_min: number; z_min: number; x_max: number; y_max: number; z_max: number }

export interface AxisProfile { speed: number; inverted: boolean }

type AxisValues = Partial<Record<'x' | 'y' | 'z' | 'e', number>>;

/**
 * Gantry's addition: the machine's motion limits as the user states them (mm/s, mm/s², mm), for the G-code
 * analyser's time estimate. Every field is optional; what is left out comes from the firmware's own report or
 * Marlin's defaults, and a file's own M201/M203/M204/M205 still win.
 */
export interface MachineLimitsProfile {
  maxFeedrate?: AxisValues;
  maxAcceleration?: AxisValues;
  printAcceleration?: number;
  retractAcceleration?: number;
  travelAcceleration?: number;
  jerk?: AxisValues;
  junctionDeviation?: number;
}

export interface PrinterProfile {
  id: string;
  name: string;
  model: string;
  color: string;
  volume: {
    width: number; depth: number; height: number;
    formFactor: 'rectangular' | 'circular';
    origin: 'lowerleft' | 'center';
    custom_box: false | CustomBox;
  };
  heatedBed: boolean;
  heatedChamber: boolean;
  extruder: {
    count: number;
    offsets: [number, number][];
    nozzleDiameter: number;
    sharedNozzle: boolean;
    defaultExtrusionLength: number;
    /** Gantry's addition: diameter of the filament loaded, mm (volumes in the analysis); absent = not stated. */
    filamentDiameter?: number;
  };
  axes: { x: AxisProfile; y: AxisProfile; z: AxisProfile; e: AxisProfile };
  /** Gantry's addition (see MachineLimitsProfile); absent when the user stated none. */
  machineLimits?: MachineLimitsProfile;
}

export const DEFAULT_PROFILE_ID = '_default';

/** OctoPrint's built-in default, field for field: clients compare against this shape. */
export function builtinDefaultProfile(): PrinterProfile {
  return {
    id: DEFAULT_PROFILE_ID,
    name: 'Default',
    model: 'Generic RepRap Printer',
    color: 'default',
    volume: { width: 200.0, depth: 200.0, height: 200.0, formFactor: 'rectangular', origin: 'lowerleft', custom_box: false },
    heatedBed: true,
    heatedChamber: false,
    extruder: { count: 1, offsets: [[0.0, 0.0]], nozzleDiameter: 0.4, sharedNozzle: false, defaultExtrusionLength: 5 },
    axes: {
      x: { speed: 6000, inverted: false },
      y: { speed: 6000, inverted: false },
      z: { speed: 200, inverted: false },
      e: { speed: 300, inverted: false },
    },
  };
}

/** Ids keep only ASCII letters, digits and `-_.() `, spaces turned into `_` ("My Prof!" → "My_Prof"). */
export function sanitizeProfileId(raw: string): string {
  return raw.replace(/ /g, '_').replace(/[^A-Za-z0-9\-_.()]/g, '');
}

class InvalidProfile extends Error {}
const bad = (what: string): never => { throw new InvalidProfile(what); };

function toInt(v: unknown, what: string): number {
  if (typeof v === 'number' && Number.isFinite(v)) return Math.trunc(v);
  if (typeof v === 'string' && /^\s*[-+]?\d+\s*$/.test(v)) return parseInt(v, 10);
  if (typeof v === 'boolean') return v ? 1 : 0;
  return bad(what);
}

function toFloat(v: unknown, what: string): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return bad(what);
}

function toBool(v: unknown, what: string): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (['true', 'yes', 'on', '1'].includes(s)) return true;
    if (['false', 'no', 'off', '0', ''].includes(s)) return false;
  }
  return bad(what);
}

function section(v: unknown, what: string): Plain {
  return isPlain(v) ? v : bad(what);
}

function customBox(raw: unknown, width: number, depth: number, height: number, origin: 'lowerleft' | 'center'): false | CustomBox {
  if (raw === false || raw === null || raw === undefined) return false;
  const box = section(raw, 'volume.custom_box');
  const def: CustomBox = origin === 'center'
    ? { x_min: -width / 2, y_min: -depth / 2, z_min: 0, x_max: width / 2, y_max: depth / 2, z_max: height }
    : { x_min: 0, y_min: 0, z_min: 0, x_max: width, y_max: depth, z_max: height };
  const out = { ...def };
  for (const k of Object.keys(def) as (keyof CustomBox)[]) {
    const v = box[k];
    if (v === undefined || v === null) continue;
    const n = toFloat(v, `volume.custom_box.${k}`);
    // A custom box may only extend the printable volume, never shrink it.
    out[k] = k.endsWith('_min') ? Math.min(n, def[k]) : Math.max(n, def[k]);
  }
  const same = (Object.keys(def) as (keyof CustomBox)[]).every((k) => out[k] === def[k]);
  return same ? false : out;
}

function axis(raw: unknown, name: string): AxisProfile {
  const a = section(raw, `axes.${name}`);
  return { speed: toInt(a.speed, `axes.${name}.speed`), inverted: toBool(a.inverted ?? false, `axes.${name}.inverted`) };
}

const AXES = ['x', 'y', 'z', 'e'] as const;

/** Limits the user left empty (null) are dropped; zero is a valid jerk or junction deviation, not a valid speed. */
function machineLimits(raw: unknown): MachineLimitsProfile | undefined {
  if (raw === undefined || raw === null) return undefined;
  const src = section(raw, 'machineLimits');
  const out: MachineLimitsProfile = {};
  const value = (v: unknown, what: string, zeroOk: boolean): number | undefined => {
    if (v === undefined || v === null || v === '') return undefined;
    const n = toFloat(v, what);
    return (zeroOk ? n >= 0 : n > 0) && n < 1e6 ? n : bad(what);
  };
  for (const key of ['maxFeedrate', 'maxAcceleration', 'jerk'] as const) {
    if (src[key] === undefined || src[key] === null) continue;
    const axes = section(src[key], `machineLimits.${key}`);
    const vals: AxisValues = {};
    for (const a of AXES) {
      const n = value(axes[a], `machineLimits.${key}.${a}`, key === 'jerk');
      if (n !== undefined) vals[a] = n;
    }
    if (Object.keys(vals).length) out[key] = vals;
  }
  for (const key of ['printAcceleration', 'retractAcceleration', 'travelAcceleration', 'junctionDeviation'] as const) {
    const n = value(src[key], `machineLimits.${key}`, key === 'junctionDeviation');
    if (n !== undefined) out[key] = n;
  }
  return Object.keys(out).length ? out : undefined;
}

function filamentDiameter(v: unknown): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const d = toFloat(v, 'extruder.filamentDiameter');
  return d > 0 && d < 10 ? d : bad('extruder.filamentDiameter');
}

/**
 * Validates and normalises a fully merged profile (coercions of the reference, circular beds centred, unknown keys
 * dropped). Throws INVALID_REQUEST "profile is invalid" with the reason kept as the cause.
 */
export function normalizeProfile(raw: unknown): PrinterProfile {
  try {
    const p = section(raw, 'profile');
    const def = builtinDefaultProfile() as unknown as Plain;
    for (const k of Object.keys(def)) if (p[k] === undefined || p[k] === null) bad(`${k} missing`);
    if (typeof p.id !== 'string' || !p.id) bad('id');
    const vol = section(p.volume, 'volume');
    const width = toFloat(vol.width, 'volume.width');
    let depth = toFloat(vol.depth, 'volume.depth');
    const height = toFloat(vol.height, 'volume.height');
    for (const v of [width, depth, height]) if (!(v > 0 && v < 10000)) bad('volume size');
    const formFactor = vol.formFactor === 'circular' ? 'circular' : vol.formFactor === 'rectangular' ? 'rectangular' : bad('volume.formFactor');
    let origin: 'lowerleft' | 'center' = vol.origin === 'center' ? 'center' : vol.origin === 'lowerleft' ? 'lowerleft' : bad('volume.origin');
    if (formFactor === 'circular') {
      origin = 'center';
      depth = width;
    }
    const ext = section(p.extruder, 'extruder');
    const count = toInt(ext.count, 'extruder.count');
    if (count < 1 || count > 99) bad('extruder.count');
    if (!Array.isArray(ext.offsets)) bad('extruder.offsets');
    const offsets = (ext.offsets as unknown[]).map((o, i): [number, number] => {
      if (!Array.isArray(o) || o.length !== 2) return bad(`extruder.offsets[${i}]`);
      return [toFloat(o[0], 'offset x'), toFloat(o[1], 'offset y')];
    });
    const axes = section(p.axes, 'axes');
    const diameter = filamentDiameter(ext.filamentDiameter);
    const limits = machineLimits(p.machineLimits);
    return {
      id: p.id as string,
      name: String(p.name),
      model: String(p.model),
      color: String(p.color),
      volume: { width, depth, height, formFactor, origin, custom_box: customBox(vol.custom_box, width, depth, height, origin) },
      heatedBed: toBool(p.heatedBed, 'heatedBed'),
      heatedChamber: toBool(p.heatedChamber, 'heatedChamber'),
      extruder: {
        count,
        offsets,
        nozzleDiameter: toFloat(ext.nozzleDiameter, 'extruder.nozzleDiameter'),
        sharedNozzle: toBool(ext.sharedNozzle ?? false, 'extruder.sharedNozzle'),
        defaultExtrusionLength: toInt(ext.defaultExtrusionLength ?? 5, 'extruder.defaultExtrusionLength'),
        ...(diameter !== undefined ? { filamentDiameter: diameter } : {}),
      },
      axes: { x: axis(axes.x, 'x'), y: axis(axes.y, 'y'), z: axis(axes.z, 'z'), e: axis(axes.e, 'e') },
      ...(limits ? { machineLimits: limits } : {}),
    };
  } catch (err) {
    if (err instanceof InvalidProfile) throw new DomainError(ErrorCodes.INVALID_REQUEST, 'profile is invalid', { cause: err });
    throw err;
  }
}
