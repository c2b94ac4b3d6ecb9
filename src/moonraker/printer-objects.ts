// Klipper's printer objects (docs/reference/moonraker.md §3.3) computed from Gantry's state: the link's state and
// temperatures, the job runner's snapshot, the printer profile (a synthetic configfile) and the G-code state followed
// from the sent lines. `snapshot()` builds every object once; subscribers share it (status-hub.ts).
import { loadavg, freemem } from 'node:os';
import type { MoonrakerDeps, MachineProfile } from './moonraker-deps.ts';
import type { GcodeState } from './gcode-state.ts';
import { klippyState } from './klippy-state.ts';
import { MACROS } from './klipper-commands.ts';
import type { BedMeshObject } from './bed-mesh-object.ts';

export type ObjectStatus = Record<string, unknown>;
export type Status = Record<string, ObjectStatus>;

/** The job as print_stats tells it, kept across the job's end until the next start or SDCARD_RESET_FILE. */
export interface JobRecord {
  state: 'standby' | 'printing' | 'paused' | 'complete' | 'cancelled' | 'error';
  filename: string;
  message: string;
  /** monotonic ms */
  startedAt: number | null;
  endedAt: number | null;
  /** E extruded at the job's start (GcodeState.extruded). */
  extrudedAtStart: number;
  printDuration: number;
  fileSize: number | null;
  filePosition: number;
  progress: number;
}

export const freshJob = (): JobRecord => ({ state: 'standby', filename: '', message: '', startedAt: null, endedAt: null, extrudedAtStart: 0,
  printDuration: 0, fileSize: null, filePosition: 0, progress: 0 });

/** Gantry's heater keys → Klipper's object names. */
export function heaterName(key: string): string | undefined {
  if (key === 'bed') return 'heater_bed';
  if (key === 'chamber') return 'heater_generic chamber';
  const m = /^tool(\d+)$/.exec(key);
  if (!m) return undefined;
  return m[1] === '0' ? 'extruder' : `extruder${m[1]}`;
}

/** Klipper's heater names → Gantry's keys (SET_HEATER_TEMPERATURE). */
export function heaterKey(name: string): string | undefined {
  const n = name.trim().toLowerCase();
  if (n === 'heater_bed') return 'bed';
  if (n === 'chamber' || n === 'heater_generic chamber') return 'chamber';
  const m = /^extruder(\d*)$/.exec(n);
  if (!m) return undefined;
  return `tool${m[1] === '' ? 0 : Number(m[1])}`;
}

const MIN_EXTRUDE_TEMP = 170;
const str = (v: unknown): string => String(v);

/** Axis limits of the profile: [x, y, z, e] minimum and maximum. */
function limits(p: MachineProfile): { min: number[]; max: number[] } {
  const { width, depth, height, origin } = p.volume;
  if (origin === 'center') return { min: [-width / 2, -depth / 2, 0, 0], max: [width / 2, depth / 2, height, 0] };
  return { min: [0, 0, 0, 0], max: [width, depth, height, 0] };
}

/** The synthetic Klipper config (`configfile.config` as strings, `settings` typed) from the printer profile. */
export function configFile(p: MachineProfile, bedMesh?: Record<string, unknown>): ObjectStatus {
  const { min, max } = limits(p);
  const maxVelocity = Math.round(Math.max(p.axes.x.speed, p.axes.y.speed) / 60);
  const maxAccel = p.machineLimits?.printAcceleration ?? p.machineLimits?.maxAcceleration?.x ?? 1000;
  const settings: Record<string, Record<string, unknown>> = {
    printer: { kinematics: p.volume.formFactor === 'circular' ? 'delta' : 'cartesian', max_velocity: maxVelocity, max_accel: maxAccel,
      max_z_velocity: Math.round(p.axes.z.speed / 60), square_corner_velocity: 5, minimum_cruise_ratio: 0.5 },
    virtual_sdcard: { path: 'gcodes', on_error_gcode: '' },
    pause_resume: { recover_velocity: 50 },
    display_status: {},
  };
  ['x', 'y', 'z'].forEach((a, i) => { settings[`stepper_${a}`] = { position_min: min[i], position_max: max[i], position_endstop: 0 }; });
  for (let i = 0; i < p.extruder.count; i++) {
    settings[i === 0 ? 'extruder' : `extruder${i}`] = {
      min_temp: 0, max_temp: 300, min_extrude_temp: MIN_EXTRUDE_TEMP, nozzle_diameter: p.extruder.nozzleDiameter,
      filament_diameter: p.extruder.filamentDiameter ?? 1.75, max_extrude_only_distance: 50, max_extrude_only_velocity: Math.round(p.axes.e.speed / 60),
      max_extrude_cross_section: 4 * p.extruder.nozzleDiameter ** 2, pressure_advance: 0, pressure_advance_smooth_time: 0.04,
    };
  }
  if (p.heatedBed) settings.heater_bed = { min_temp: 0, max_temp: 130 };
  if (p.heatedChamber) settings['heater_generic chamber'] = { min_temp: 0, max_temp: 80 };
  settings.fan = { max_power: 1 };
  if (bedMesh) settings.bed_mesh = bedMesh;
  for (const m of MACROS) settings[`gcode_macro ${m.name.toLowerCase()}`] = { gcode: '', description: m.help };
  const config: Record<string, Record<string, string>> = {};
  for (const [section, options] of Object.entries(settings)) {
    // `config` keeps the user's case of section names (gcode_macro CANCEL_PRINT), `settings` is lower-case.
    const name = section.startsWith('gcode_macro ') ? `gcode_macro ${section.slice(12).toUpperCase()}` : section;
    config[name] = Object.fromEntries(Object.entries(options).map(([k, v]) => [k, str(v)]));
  }
  return { config, settings, warnings: [], save_config_pending: false, save_config_pending_items: {} };
}

function layerInfo(l: { total: number | null; current: number | null }): { total_layer: number | null; current_layer: number | null } {
  return { total_layer: l.total, current_layer: l.current };
}

export class PrinterObjects {
  private profileKey = '';
  private profileConfig: ObjectStatus = {};

  constructor(private readonly deps: MoonrakerDeps, private readonly gcode: GcodeState, private readonly job: () => JobRecord,
    private readonly started: number, private readonly bedMesh?: BedMeshObject) {}

  /** Names of the objects this printer has (printer.objects.list). */
  names(): string[] {
    const p = this.deps.profile();
    const out = ['webhooks', 'configfile', 'heaters', 'gcode', 'gcode_move', 'toolhead', 'motion_report', 'fan', 'print_stats',
      'virtual_sdcard', 'display_status', 'pause_resume', 'idle_timeout', 'system_stats'];
    for (let i = 0; i < p.extruder.count; i++) out.push(i === 0 ? 'extruder' : `extruder${i}`);
    if (p.heatedBed) out.push('heater_bed');
    if (p.heatedChamber) out.push('heater_generic chamber');
    if (this.bedMesh) out.push('bed_mesh');
    for (const m of MACROS) out.push(`gcode_macro ${m.name}`);
    if (this.deps.objects) out.push('exclude_object');
    return out;
  }

  /** Seconds since the edge started (Klipper's eventtime is a monotonic clock in seconds). */
  eventtime(): number {
    return (this.deps.clock.monotonic() - this.started) / 1000;
  }

  private config(p: MachineProfile): ObjectStatus {
    const mesh = this.bedMesh?.settings();
    const key = JSON.stringify([p, mesh]);
    if (key !== this.profileKey) {
      this.profileKey = key;
      this.profileConfig = configFile(p, mesh);
    }
    return this.profileConfig;
  }

  /** Every object with every field, computed once. */
  snapshot(): Status {
    const { printer } = this.deps;
    const p = this.deps.profile();
    const st = printer.state();
    const k = klippyState(st);
    const temps = printer.temperatures();
    const g = this.gcode;
    const job = this.job();
    const now = this.deps.clock.monotonic();
    const eventtime = this.eventtime();
    const { min, max } = limits(p);
    const snap = this.deps.jobs.snapshot();
    const active = job.state === 'printing' || job.state === 'paused';
    const totalDuration = job.startedAt === null ? 0 : ((job.endedAt ?? now) - job.startedAt) / 1000;
    const printDuration = active ? snap.progress?.printTime ?? totalDuration : job.printDuration;
    const completion = active && snap.progress?.completion != null ? snap.progress.completion / 100 : job.progress;
    const pos = [g.position.x, g.position.y, g.position.z, g.position.e];
    const tool = printer.lastPosition().t;
    const maxVelocity = Math.round(Math.max(p.axes.x.speed, p.axes.y.speed) / 60);
    const maxAccel = p.machineLimits?.printAcceleration ?? p.machineLimits?.maxAcceleration?.x ?? 1000;
    const status: Status = {
      webhooks: { state: k.state, state_message: k.message },
      configfile: this.config(p),
      gcode: { commands: Object.fromEntries(MACROS.map((m) => [m.name, { help: m.help }])) },
      gcode_move: {
        speed_factor: g.speedFactor, speed: g.speed, extrude_factor: g.extrudeFactor, absolute_coordinates: g.absoluteCoordinates,
        absolute_extrude: g.absoluteExtrude, homing_origin: [0, 0, 0, 0], position: pos, gcode_position: pos,
      },
      toolhead: {
        homed_axes: g.homedAxes(), position: pos, axis_minimum: min, axis_maximum: max,
        extruder: tool && tool > 0 && tool < p.extruder.count ? `extruder${tool}` : 'extruder', max_velocity: maxVelocity, max_accel: maxAccel,
        minimum_cruise_ratio: 0.5, square_corner_velocity: 5, print_time: eventtime, estimated_print_time: eventtime, stalls: 0,
      },
      motion_report: { live_position: pos, live_velocity: active && job.state === 'printing' ? (g.speed * g.speedFactor) / 60 : 0, live_extruder_velocity: 0 },
      fan: { speed: g.fanSpeed, rpm: null },
      print_stats: {
        filename: job.filename, total_duration: totalDuration, print_duration: printDuration,
        filament_used: Math.max(0, g.extruded - job.extrudedAtStart), state: job.state, message: job.message,
        info: active && this.deps.layers ? layerInfo(this.deps.layers()) : { total_layer: null, current_layer: null },
      },
      virtual_sdcard: {
        file_path: job.filename ? job.filename : null, progress: completion,
        is_active: job.state === 'printing', file_position: active ? snap.progress?.filepos ?? 0 : job.filePosition,
        file_size: (active ? snap.file?.size : job.fileSize) ?? 0,
      },
      display_status: { message: g.message, progress: g.m73 ?? completion },
      pause_resume: { is_paused: job.state === 'paused' },
      idle_timeout: { state: active || st.flags.printing ? 'Printing' : st.flags.operational ? 'Ready' : 'Idle', printing_time: active ? printDuration : 0 },
      system_stats: { sysload: loadavg()[0], cputime: process.cpuUsage().user / 1e6, memavail: Math.round(freemem() / 1024) },
    };
    const available: string[] = [];
    for (let i = 0; i < p.extruder.count; i++) {
      const name = i === 0 ? 'extruder' : `extruder${i}`;
      const t = temps[`tool${i}`];
      const temperature = t?.actual ?? 0;
      status[name] = { temperature, target: t?.target ?? 0, power: t?.target ? 1 : 0, can_extrude: temperature >= MIN_EXTRUDE_TEMP,
        pressure_advance: 0, smooth_time: 0.04, motion_queue: null };
      available.push(name);
    }
    if (p.heatedBed) {
      const t = temps.bed;
      status.heater_bed = { temperature: t?.actual ?? 0, target: t?.target ?? 0, power: t?.target ? 1 : 0 };
      available.push('heater_bed');
    }
    if (p.heatedChamber) {
      const t = temps.chamber;
      status['heater_generic chamber'] = { temperature: t?.actual ?? 0, target: t?.target ?? 0, power: t?.target ? 1 : 0 };
      available.push('heater_generic chamber');
    }
    status.heaters = { available_heaters: available, available_sensors: available, available_monitors: [] };
    for (const m of MACROS) status[`gcode_macro ${m.name}`] = {};
    if (this.bedMesh) status.bed_mesh = this.bedMesh.status();
    if (this.deps.objects) status.exclude_object = excludeObject(this.deps.objects);
    return status;
  }
}

/** `{name: null | [fields]}` applied to a snapshot: unknown objects and fields are left out (printer.objects.query). */
export function select(status: Status, wanted: Record<string, string[] | null>): Status {
  const out: Status = {};
  for (const [name, fields] of Object.entries(wanted)) {
    if (!Object.hasOwn(status, name)) continue;
    const obj = status[name];
    if (fields === null) {
      out[name] = obj;
      continue;
    }
    const part: ObjectStatus = {};
    for (const f of fields) if (Object.hasOwn(obj, f)) part[f] = obj[f];
    out[name] = part;
  }
  return out;
}

/** Klipper's `exclude_object` status from the selected file's objects: names upper-cased, lists sorted by name. */
function excludeObject(objects: NonNullable<MoonrakerDeps['objects']>): ObjectStatus {
  const list = objects.outlines();
  const name = (n: string) => n.toUpperCase();
  const sorted = [...list].sort((a, b) => (name(a.object) < name(b.object) ? -1 : name(a.object) > name(b.object) ? 1 : 0));
  const active = list.find((o) => o.id === objects.activeId);
  return {
    objects: sorted.map((o) => ({
      name: name(o.object),
      center: [(o.min_x + o.max_x) / 2, (o.min_y + o.max_y) / 2],
      polygon: o.polygon,
    })),
    excluded_objects: sorted.filter((o) => o.cancelled).map((o) => name(o.object)),
    current_object: active ? name(active.object) : null,
  };
}
