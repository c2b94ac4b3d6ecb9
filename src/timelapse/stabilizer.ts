// Stabilised snapshots: follows a job's positioning through its lines and, at each layer change, parks the head at a
// fixed spot (retract, lift, travel, M400, hold for the frame) and brings it back before the line that starts the layer.
// A layer is the height of extrusion, not any Z move: travel lifts, z-hops and start-script moves make no frames.
import { commandCode, param, stripComment } from '../gcode/line.ts';
import type { LineInsertion } from '../printer/job/job-stream.ts';

export interface ParkSettings {
  x: number;
  y: number;
  retract: number;
  retractSpeed: number;
  lift: number;
  zSpeed: number;
  travelSpeed: number;
}

export interface StabilizerOptions {
  park: ParkSettings;
  /** Firmware semantics: G90/G91 also switch the extruder (serial feature.g90InfluencesExtruder). */
  g90InfluencesExtruder: boolean;
  /** A layer started: the frame to take while parked, or null to let the layer pass (minDelay, no job). */
  onLayer(): (() => Promise<void>) | null;
}

const fmt = (n: number): string => String(Math.round(n * 1000) / 1000);

export class Stabilizer {
  private absolute = true;
  private absoluteE = true;
  private x: number | null = null;
  private y: number | null = null;
  private z: number | null = null;
  private f: number | null = null;
  /** Filament position and the most ever pushed: a move extrudes when it goes past it (not an unretract). */
  private e = 0;
  private eMax = 0;
  /** Z of the last extruding move: extrusion at another Z starts a layer. */
  private layerZ: number | null = null;

  constructor(private readonly opts: StabilizerOptions) {}

  /** The LineInjector: lines to send before `line`, or null. */
  readonly inject = (line: string): LineInsertion | null => {
    // Cheap reject: only G and M words matter.
    let i = 0;
    while (i < line.length && (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9)) i++;
    const c = line.charCodeAt(i) | 32;
    if (c !== 103 /* g */ && c !== 109 /* m */) return null;
    const cmd = stripComment(line.slice(i)).trim();
    const code = commandCode(cmd);
    switch (code) {
      case 'G0': case 'G1': return this.move(cmd);
      case 'G90': this.absolute = true; if (this.opts.g90InfluencesExtruder) this.absoluteE = true; return null;
      case 'G91': this.absolute = false; if (this.opts.g90InfluencesExtruder) this.absoluteE = false; return null;
      case 'M82': this.absoluteE = true; return null;
      case 'M83': this.absoluteE = false; return null;
      case 'G28': this.x = this.y = this.z = null; return null;
      case 'G92': {
        const named = (['X', 'Y', 'Z', 'E'] as const).filter((a) => param(cmd, a) !== null);
        for (const a of named.length > 0 ? named : (['X', 'Y', 'Z', 'E'] as const)) {
          const v = param(cmd, a) ?? 0;
          if (a === 'E') {
            const ne = Number.isFinite(v) ? v : 0;
            this.eMax += ne - this.e;
            this.e = ne;
          } else {
            this.set(a, Number.isFinite(v) ? v : null);
          }
        }
        return null;
      }
      default: return null;
    }
  };

  private set(axis: 'X' | 'Y' | 'Z', v: number | null): void {
    if (axis === 'X') this.x = v;
    else if (axis === 'Y') this.y = v;
    else this.z = v;
  }

  private target(cmd: string, axis: 'X' | 'Y' | 'Z', now: number | null): number | null {
    const v = param(cmd, axis);
    if (v === null) return now;
    if (!Number.isFinite(v)) return now;
    if (this.absolute) return v;
    return now === null ? null : now + v;
  }

  private move(cmd: string): LineInsertion | null {
    const nz = this.target(cmd, 'Z', this.z);
    const ev = param(cmd, 'E');
    const ne = ev === null || !Number.isFinite(ev) ? this.e : this.absoluteE ? ev : this.e + ev;
    let out: LineInsertion | null = null;
    if (ne > this.eMax + 1e-6) {
      this.eMax = ne;
      if (nz !== null && nz !== this.layerZ) {
        this.layerZ = nz;
        const frame = this.opts.onLayer();
        if (frame !== null) out = this.park(frame);
      }
    }
    this.e = ne;
    // The position after this line (the park above uses the one before it).
    const nx = this.target(cmd, 'X', this.x);
    const ny = this.target(cmd, 'Y', this.y);
    this.x = nx;
    this.y = ny;
    this.z = nz;
    const f = param(cmd, 'F');
    if (f !== null && Number.isFinite(f) && f > 0) this.f = f;
    return out;
  }

  /** Park, wait, return; the modes and feedrate of the file are restored at the end. */
  private park(frame: () => Promise<void>): LineInsertion {
    const { x, y, z } = this;
    if (x === null || y === null || z === null) {
      // Nowhere known to come back to (before the first positioned move): the frame is taken where the head is.
      return { before: ['M400'], holdAt: 1, hold: frame };
    }
    const p = this.opts.park;
    const out: string[] = ['G90', 'M83'];
    if (p.retract > 0) out.push(`G1 E-${fmt(p.retract)} F${fmt(p.retractSpeed)}`);
    if (p.lift > 0) out.push(`G0 Z${fmt(z + p.lift)} F${fmt(p.zSpeed)}`);
    out.push(`G0 X${fmt(p.x)} Y${fmt(p.y)} F${fmt(p.travelSpeed)}`, 'M400');
    const holdAt = out.length;
    out.push(`G0 X${fmt(x)} Y${fmt(y)} F${fmt(p.travelSpeed)}`);
    if (p.lift > 0) out.push(`G0 Z${fmt(z)} F${fmt(p.zSpeed)}`);
    if (p.retract > 0) out.push(`G1 E${fmt(p.retract)} F${fmt(p.retractSpeed)}`);
    // XYZ mode first: on firmware where G90/G91 also set the extruder mode, M82/M83 after it has the last word.
    out.push(this.absolute ? 'G90' : 'G91', this.absoluteE ? 'M82' : 'M83');
    if (this.f !== null) out.push(`G1 F${fmt(this.f)}`);
    return { before: out, holdAt, hold: frame };
  }
}
