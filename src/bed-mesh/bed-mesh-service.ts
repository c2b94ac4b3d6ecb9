// The bed mesh of one printer: probes on request, captures every mesh the firmware prints (a file's own G29, M420 V,
// a probe from the terminal), and keeps a bounded history on disk, each mesh with its probe points in mm.
import { readFile } from 'node:fs/promises';
import type { ConfigSlice } from '../config/config-slice.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Clock } from '../core/clock.ts';
import type { Logger } from '../core/logger.ts';
import type { Plain } from '../core/plain.ts';
import { writeFileAtomic } from '../core/atomic-file.ts';
import { conflict, notOperational } from '../core/errors.ts';
import { MeshCapture, type CapturedMesh, type MeshFormat } from './mesh-capture.ts';

export interface BedMesh {
  id: string;
  /** ms since the epoch. */
  time: number;
  printer: string;
  /** The printer profile in use (its id) and its bed. */
  profile: string;
  format: MeshFormat;
  /** Probe point coordinates in mm: x per column, y per row. */
  x: number[];
  y: number[];
  /** z[row][col] in mm, row 0 at the front. */
  z: number[][];
  probeCount: number;
  min: number;
  max: number;
  range: number;
  mean: number;
}

/** What the service needs of the printer (printer-service.ts). */
export interface MeshPrinter {
  watchReplies(watch: (line: string) => void): () => void;
  commands(lines: string[]): void;
  isOperational(): boolean;
  isPrinting(): boolean;
  firmwareName(): string;
}

export interface MeshBed { id: string; width: number; depth: number; height: number; circular: boolean }

export interface BedMeshDeps {
  /** Its slice: the bedmesh plugin's settings, and the printer's name a mesh is recorded under (appearance.name). */
  config: ConfigSlice<'plugins' | 'appearance'>;
  events: EventBus;
  clock: Clock;
  logger: Logger;
  printer: MeshPrinter;
  /** The bed of the printer profile in use. */
  bed: () => MeshBed;
  /** The history's file. */
  file: string;
}

interface Settings { command: string; historySize: number; timeout: number }

/** The probe script when none is set: home, probe, print the mesh, in the firmware's own commands. */
export function defaultProbeCommands(firmware: string): string[] {
  if (/prusa/i.test(firmware)) return ['G28', 'G80', 'G81'];
  if (/klipper/i.test(firmware)) return ['BED_MESH_CALIBRATE', 'BED_MESH_OUTPUT'];
  return ['G28', 'G29', 'M420 S1 V'];
}

const round = (v: number) => Math.round(v * 1e4) / 1e4;

export class BedMeshService {
  private meshes: BedMesh[] = [];
  private readonly capture = new MeshCapture();
  private unwatch: (() => void) | null = null;
  private probeTimer: ReturnType<typeof setTimeout> | null = null;
  private listeners = new Set<(m: BedMesh, bed: MeshBed) => void>();
  private saving: Promise<void> = Promise.resolve();

  constructor(private readonly deps: BedMeshDeps) {}

  private settings(): Settings {
    return (this.deps.config.get().plugins as Plain).bedmesh as Settings;
  }

  async start(): Promise<void> {
    try {
      const parsed = JSON.parse(await readFile(this.deps.file, 'utf8')) as { meshes?: BedMesh[] };
      if (Array.isArray(parsed.meshes)) this.meshes = parsed.meshes.filter((m) => Array.isArray(m?.z));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') this.deps.logger.warn({ error: String(e) }, 'bed mesh history unreadable; starting empty');
    }
    this.unwatch = this.deps.printer.watchReplies((line) => {
      // Cheap for every other line: a capture starts only at a report's first line.
      const mesh = this.capture.feed(line);
      if (mesh) this.captured(mesh);
    });
  }

  async stop(): Promise<void> {
    this.unwatch?.();
    this.unwatch = null;
    if (this.probeTimer) clearTimeout(this.probeTimer);
    await this.saving;
  }

  /** Called with every new mesh (the push channel's Bed Level Visualizer message); returns the unsubscribe. */
  onMesh(fn: (m: BedMesh, bed: MeshBed) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  latest(): BedMesh | null { return this.meshes.at(-1) ?? null; }
  history(): BedMesh[] { return [...this.meshes].reverse(); }
  probing(): boolean { return this.probeTimer !== null; }

  /** Sends the probe script; the mesh arrives through the replies. Refused while printing or not connected. */
  probe(): void {
    const p = this.deps.printer;
    if (!p.isOperational()) throw notOperational();
    if (p.isPrinting()) throw conflict('Printer is printing: probe the bed when the print is over');
    if (this.probeTimer) throw conflict('A probe is already running');
    const script = this.settings().command.split('\n').map((l) => l.trim()).filter(Boolean);
    p.commands(script.length > 0 ? script : defaultProbeCommands(p.firmwareName()));
    this.probeTimer = setTimeout(() => {
      this.probeTimer = null;
      this.deps.logger.warn({}, 'bed probe gave no mesh in time');
    }, this.settings().timeout * 1000);
    this.probeTimer.unref?.();
  }

  async remove(id: string): Promise<boolean> {
    const before = this.meshes.length;
    this.meshes = this.meshes.filter((m) => m.id !== id);
    if (this.meshes.length === before) return false;
    await this.save();
    return true;
  }

  private captured(c: CapturedMesh): void {
    if (this.probeTimer) { clearTimeout(this.probeTimer); this.probeTimer = null; }
    const bed = this.deps.bed();
    const rows = c.z.length;
    const cols = c.z[0].length;
    const ext = c.extents ?? { xMin: 0, xMax: bed.width, yMin: 0, yMax: bed.depth };
    const axis = (lo: number, hi: number, n: number) => Array.from({ length: n }, (_, i) => round(lo + (i * (hi - lo)) / (n - 1)));
    const flat = c.z.flat();
    const min = Math.min(...flat);
    const max = Math.max(...flat);
    const now = this.deps.clock.now();
    const last = this.latest();
    // A probe script that prints the mesh twice (G29's report, then M420 V) is one mesh.
    if (last && now - last.time < 60_000 && JSON.stringify(last.z) === JSON.stringify(c.z)) return;
    const mesh: BedMesh = {
      id: `${now.toString(36)}-${Math.random().toString(36).slice(2, 8)}`, time: now, printer: this.deps.config.get().appearance.name || 'Gantry', profile: bed.id,
      format: c.format, x: axis(ext.xMin, ext.xMax, cols), y: axis(ext.yMin, ext.yMax, rows), z: c.z, probeCount: rows * cols,
      min, max, range: round(max - min), mean: round(flat.reduce((a, b) => a + b, 0) / flat.length),
    };
    this.meshes.push(mesh);
    const bound = this.settings().historySize;
    if (this.meshes.length > bound) this.meshes.splice(0, this.meshes.length - bound);
    void this.save();
    for (const fn of this.listeners) fn(mesh, bed);
    this.deps.events.emit('plugin_bedlevelvisualizer_mesh_data_collected', { mesh: visualizerCells(mesh), bed: visualizerBed(bed) });
  }

  private save(): Promise<void> {
    const body = JSON.stringify({ meshes: this.meshes });
    this.saving = this.saving.then(() => writeFileAtomic(this.deps.file, body)).catch((e: unknown) =>
      this.deps.logger.error({ error: String(e) }, 'bed mesh history not saved'));
    return this.saving;
  }
}

/** Bed Level Visualizer's mesh: the cells as strings, rows front first (docs/reference/plugins.md §4.4). */
export function visualizerCells(m: BedMesh): string[][] {
  return m.z.map((row) => row.map((v) => `${v >= 0 ? '+' : ''}${v.toFixed(3)}`));
}

export function visualizerBed(bed: MeshBed): Record<string, unknown> {
  return { type: bed.circular ? 'circular' : 'rectangular', x_min: 0, x_max: bed.width, y_min: 0, y_max: bed.depth, z_min: 0, z_max: bed.height };
}
