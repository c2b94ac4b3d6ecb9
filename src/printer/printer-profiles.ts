// Printer profiles: the built-in `_default` plus one YAML file per profile, validation, default and current selection.
import { readdir, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { writeFileAtomic } from '../core/atomic-file.ts';
import { deepMerge } from '../core/deep-merge.ts';
import { isPlain, type Plain } from '../core/plain.ts';
import { conflict, invalid, DomainError, ErrorCodes } from '../core/errors.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import type { ConfigStore } from '../config/config-store.ts';

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

const FILE_SUFFIX = '.profile';

/** Stored profiles are shared read-only (the printer service reads one on every request); no defensive copies. */
function deepFreeze<T>(o: T): T {
  if (typeof o === 'object' && o !== null && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

export interface SaveOptions {
  /** Make this the default profile. */
  makeDefault?: boolean;
  /** Replace an existing profile of that id (add refuses by default). */
  allowOverwrite?: boolean;
}

/**
 * Owns the profiles folder. Reads are synchronous from a cache filled at start (the engine asks for the current
 * profile on every jog); writes go to disk atomically before the cache changes.
 */
export class PrinterProfiles {
  private profiles = new Map<string, PrinterProfile>();
  private selected: string | null = null;
  private modifiedAt = Date.now();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly folder: string,
    private readonly config: ConfigStore,
    private readonly events: EventBus,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.profiles.clear();
    this.profiles.set(DEFAULT_PROFILE_ID, deepFreeze(builtinDefaultProfile()));
    let names: string[] = [];
    try {
      names = await readdir(this.folder);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    for (const name of names) {
      if (!name.endsWith(FILE_SUFFIX) || name.startsWith('.')) continue;
      const id = name.slice(0, -FILE_SUFFIX.length);
      try {
        const raw = parse(await readFile(join(this.folder, name), 'utf8')) as unknown;
        // Files written by hand (or by an older version) may lack keys: fill them from the built-in default.
        const merged = deepMerge(builtinDefaultProfile(), isPlain(raw) ? raw : {}) as Plain;
        merged.id = id;
        this.profiles.set(id, deepFreeze(normalizeProfile(merged)));
      } catch (err) {
        this.logger.warn({ err, file: name }, 'ignoring unreadable printer profile');
      }
    }
    this.modifiedAt = Date.now();
    // The default may also change through the settings API.
    this.unsubscribe = this.config.onChange((next, prev) => {
      if (next.printerProfiles.default !== prev.printerProfiles.default) this.modifiedAt = Date.now();
    });
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** All profiles (frozen), `_default` always included. */
  list(): PrinterProfile[] {
    return [...this.profiles.values()];
  }

  get(id: string): PrinterProfile | undefined {
    return this.profiles.get(id);
  }

  exists(id: string): boolean {
    return this.profiles.has(id);
  }

  /** Id of the default profile (`printerProfiles.default`, falling back to `_default` when that profile is gone). */
  get defaultId(): string {
    const configured = this.config.current.printerProfiles.default;
    return configured && this.profiles.has(configured) ? configured : DEFAULT_PROFILE_ID;
  }

  getDefault(): PrinterProfile {
    return this.get(this.defaultId) ?? builtinDefaultProfile();
  }

  /** The printer service selects the profile it connects with and deselects it on disconnect. */
  select(id: string | null): void {
    const next = id !== null && this.profiles.has(id) ? id : null;
    if (next !== this.selected) this.modifiedAt = Date.now();
    this.selected = next;
  }

  /** Id of the profile in use by the connection, or null when not connected. */
  get selectedId(): string | null {
    return this.selected !== null && this.profiles.has(this.selected) ? this.selected : null;
  }

  /** The profile the API reports as `current`: the connected one, else the default. */
  getCurrentOrDefault(): PrinterProfile {
    return this.get(this.selectedId ?? this.defaultId) ?? builtinDefaultProfile();
  }

  /** Milliseconds timestamp of the last change (Last-Modified of the list). */
  get lastModified(): number {
    return this.modifiedAt;
  }

  /** Saves a complete profile (`id` or `name` required); fills nothing in: callers merge their base first. */
  async save(profile: Plain, opts: SaveOptions = {}): Promise<PrinterProfile> {
    const rawId = typeof profile.id === 'string' && profile.id ? profile.id : typeof profile.name === 'string' ? profile.name : '';
    const id = sanitizeProfileId(rawId);
    // A leading dot would hide the file from the next start's scan.
    if (!id || id.startsWith('.')) throw invalid('profile is invalid');
    const normalized = normalizeProfile({ ...profile, id });
    const existed = this.profiles.has(id) && (id !== DEFAULT_PROFILE_ID || await this.hasFile(id));
    if (existed && !opts.allowOverwrite) throw invalid('Profile already exists and overwriting was not allowed');
    const { id: _id, ...stored } = normalized;
    void _id;
    await writeFileAtomic(this.fileOf(id), stringify(stored));
    this.profiles.set(id, deepFreeze(normalized));
    this.modifiedAt = Date.now();
    if (opts.makeDefault) await this.setDefault(id);
    this.events.emit(existed ? 'PrinterProfileModified' : 'PrinterProfileAdded', { identifier: id });
    return this.profiles.get(id)!;
  }

  /** A new profile: `patch` merged onto `basedOn` (or the default profile). */
  async add(patch: Plain, opts: { basedOn?: string; makeDefault?: boolean } = {}): Promise<PrinterProfile> {
    const base = (opts.basedOn ? this.get(opts.basedOn) : undefined) ?? this.getDefault();
    const { id: _i, name: _n, ...rest } = base;
    void _i; void _n;
    return this.save(deepMerge(rest, patch) as Plain, { makeDefault: opts.makeDefault, allowOverwrite: false });
  }

  /** Deep-merges `patch` into an existing profile; the id cannot change. */
  async update(id: string, patch: Plain, opts: { makeDefault?: boolean } = {}): Promise<PrinterProfile> {
    const current = this.profiles.get(id);
    if (!current) throw invalid(`Unknown printer profile ${id}`);
    const merged = deepMerge(current, patch) as Plain;
    merged.id = id;
    return this.save(merged, { makeDefault: opts.makeDefault, allowOverwrite: true });
  }

  /** Deletes a profile; unknown ids are a no-op. The selected and the default profile cannot be deleted. */
  async remove(id: string): Promise<void> {
    if (id === this.selectedId) throw conflict('Cannot delete currently selected profile');
    if (id === this.defaultId) throw conflict('Cannot delete default profile');
    if (!this.profiles.has(id)) return;
    await unlink(this.fileOf(id)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    // `_default` is built in: deleting its file restores the original.
    if (id === DEFAULT_PROFILE_ID) this.profiles.set(id, deepFreeze(builtinDefaultProfile()));
    else this.profiles.delete(id);
    this.modifiedAt = Date.now();
    this.events.emit('PrinterProfileDeleted', { identifier: id });
  }

  async setDefault(id: string): Promise<void> {
    if (!this.profiles.has(id)) throw invalid(`Unknown printer profile ${id}`);
    if (this.config.current.printerProfiles.default === id) return;
    await this.config.patch({ printerProfiles: { default: id } });
    this.modifiedAt = Date.now();
  }

  private fileOf(id: string): string {
    return join(this.folder, id + FILE_SUFFIX);
  }

  private async hasFile(id: string): Promise<boolean> {
    return stat(this.fileOf(id)).then(() => true, () => false);
  }
}
