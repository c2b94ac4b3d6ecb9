// G-code interpreter for analysis: machine state (position, units, modes, tools), filament, bounds, and the moves it feeds the planner.
import { Box } from './box.ts';
import { Planner } from './planner.ts';
import * as scanner from './line-scanner.ts';
import { ScannedLine } from './line-scanner.ts';
import type { MachineLimits } from './types.ts';
import { LineBreaks } from '../../gcode/line-breaks.ts';
import { ObjectOutlines } from '../../objects/object-outlines.ts';

// Bound once: if this module is ever loaded through a CommonJS transform, each use of an imported binding becomes
// a getter call, which costs more than the scanning itself on a per-line path.
const { scanCommand, scanParams } = scanner;
// Parameter slots (letter − 'A') of ScannedLine.
const PE = 4, PF = 5, PI = 8, PJ = 9, PP = 15, PR = 17, PS = 18, PT = 19, PX = 23, PY = 24, PZ = 25;
const XYZ = (1 << PX) | (1 << PY) | (1 << PZ);

const TWO_PI = Math.PI * 2;
/** Marlin's MM_PER_ARC_SEGMENT: G2/G3 become chords of about this length. */
const ARC_SEGMENT_MM = 1;
const MAX_ARC_SEGMENTS = 4096;

const LAYER_MARKER = Buffer.from(';LAYER:');

function text(buf: Uint8Array, start: number, end: number): string {
  return Buffer.from(buf.buffer, buf.byteOffset + start, end - start).toString('latin1');
}

function isLayerMarker(buf: Uint8Array, start: number, end: number): boolean {
  if (end - start < LAYER_MARKER.length) return false;
  for (let i = 0; i < LAYER_MARKER.length; i++) if (buf[start + i] !== LAYER_MARKER[i]) return false;
  return true;
}

export interface InterpreterOptions {
  limits: MachineLimits;
  /** mm/min, before the file sets F. */
  defaultFeedrate: number;
  g90InfluencesExtruder: boolean;
  maxTools: number;
  /** RepRapFirmware takes M203/M566 in mm/min. */
  reprapFirmware: boolean;
  /** File size in bytes, when known, to space the timeline's samples. */
  fileSize?: number;
}

export class Interpreter {
  readonly planner: Planner;
  readonly printBox = new Box();
  readonly travelBox = new Box();
  /** Duration-only time (Σ distance/F + dwells), OctoPrint's model. */
  naiveSeconds = 0;
  lines = 0;
  moves = 0;
  hasM73 = false;
  /** The file set limits itself (M201/M203/M204/M205/M566). */
  limitsFromFile = false;
  readonly toolsUsed: number[] = [];
  /** The file's objects (cancel-object labels) and the outlines of what each extrudes. */
  readonly objects = new ObjectOutlines();
  /** Highest net extrusion reached per tool (OctoPrint's length semantics: retract+prime cancel out). */
  readonly maxExtrusion: number[] = [0];
  /** maxExtrusion when the first `;LAYER:` comment (Cura's layer marker) was seen: where Cura starts counting. */
  extrusionAtFirstLayer: number[] | null = null;
  /** [file position, planned seconds] pairs every `sampleEvery` bytes. */
  readonly timeline: [number, number][] = [];
  sampleEvery = Infinity;
  /** File size, set when the whole file was read (the timeline's last point). */
  fileEnd = 0;
  private nextSample = Infinity;

  private readonly opts: InterpreterOptions;
  private readonly line = new ScannedLine();
  private readonly breaks = new LineBreaks();
  private x = 0; private y = 0; private z = 0;
  private relative = false;
  private relativeE = false;
  private scale = 1;
  /** mm/s */
  private feed: number;
  private speedFactor = 1;
  private tool = 0;
  private readonly currentE: number[] = [0];
  private readonly totalExtrusion: number[] = [0];

  constructor(opts: InterpreterOptions) {
    this.opts = opts;
    this.planner = new Planner(opts.limits);
    this.feed = (opts.defaultFeedrate > 0 ? opts.defaultFeedrate : 2000) / 60;
    if (opts.fileSize !== undefined && opts.fileSize > 0) {
      // About a hundred points, whatever the file's size.
      this.sampleEvery = Math.max(4096, Math.ceil(opts.fileSize / 100));
      this.nextSample = this.sampleEvery;
    }
  }

  /**
   * Interprets every complete line in buf[start, end) (ended by LF, CR LF or a lone CR); returns the index after the
   * last line break consumed. `offset` is the file position of buf[0], for the timeline; `last`: no bytes follow.
   */
  feedBytes(buf: Uint8Array, start: number, end: number, offset = 0, last = false): number {
    // indexOf (memchr) finds newlines about twice as fast as a JS byte loop, even at one native call per line
    // (measured on the corpus: 45 vs 79 ms for the 36 MB file).
    const breaks = this.breaks;
    breaks.reset();
    let lineStart = start;
    while (breaks.find(buf, lineStart, end, last)) {
      this.interpretLine(buf, lineStart, breaks.end);
      lineStart = breaks.next;
      if (offset + lineStart >= this.nextSample) this.sample(offset + lineStart);
    }
    return lineStart;
  }

  /** Records [file position, planned seconds so far]; moves still in the look-ahead window (≤ 512) are not counted yet. */
  sample(position: number): void {
    this.timeline.push([position, this.planner.committedSeconds]);
    this.nextSample = position + this.sampleEvery;
  }

  /** Interprets one line without its line break (a trailing CR is harmless: it ends parameter scanning). */
  interpretLine(buf: Uint8Array, start: number, end: number): void {
    this.lines++;
    const l = this.line;
    if (!scanCommand(buf, start, end, l)) {
      const c = buf[start];
      if (c === 83 || c === 115) this.klipperCommand(buf, start, end); // S / s
      else if (c === 59) {
        if (this.extrusionAtFirstLayer === null && isLayerMarker(buf, start, end)) this.extrusionAtFirstLayer = this.maxExtrusion.slice();
        // Object labels begin `; printing`, `; stop`, `;MESH:`: only those comments are decoded.
        let i = start + 1;
        while (i < end && buf[i] === 32) i++;
        const d = buf[i];
        if (d === 112 || d === 115 || d === 77) this.objects.line(text(buf, start, end));
      } else if (c === 69 || c === 101) this.objects.line(text(buf, start, end)); // EXCLUDE_OBJECT_*
      return;
    }
    if (l.letter === 71) this.gcode(buf, end, l);
    else if (l.letter === 77) this.mcode(buf, end, l);
    else if (l.sub < 0) this.selectTool(l.code);
  }

  private gcode(buf: Uint8Array, end: number, l: ScannedLine): void {
    if (l.sub >= 0) {
      this.planner.flush(); // G29.x and friends: motion we cannot model
      return;
    }
    switch (l.code) {
      case 0: case 1: scanParams(buf, end, l); this.linear(l); return;
      case 2: case 3: scanParams(buf, end, l); this.arc(l, l.code === 2); return;
      case 4: {
        scanParams(buf, end, l);
        const s = l.has(PS) ? l.get(PS) : l.has(PP) ? l.get(PP) / 1000 : 0;
        this.planner.dwell(s);
        if (s > 0) this.naiveSeconds += s;
        return;
      }
      case 20: this.scale = 25.4; return;
      case 21: this.scale = 1; return;
      case 28: {
        scanParams(buf, end, l);
        // "G28 X" names the axis without a number, so look at the words seen, not the values.
        const named = l.seen;
        const all = (named & XYZ) === 0;
        if (all || (named & (1 << PX)) !== 0) this.x = 0;
        if (all || (named & (1 << PY)) !== 0) this.y = 0;
        if (all || (named & (1 << PZ)) !== 0) this.z = 0;
        this.planner.flush();
        return;
      }
      case 90: this.relative = false; if (this.opts.g90InfluencesExtruder) this.relativeE = false; return;
      case 91: this.relative = true; if (this.opts.g90InfluencesExtruder) this.relativeE = true; return;
      case 92: {
        scanParams(buf, end, l);
        if (l.mask === 0) { this.x = this.y = this.z = 0; this.currentE[this.tool] = 0; return; }
        if (l.has(PX)) this.x = l.get(PX) * this.scale;
        if (l.has(PY)) this.y = l.get(PY) * this.scale;
        if (l.has(PZ)) this.z = l.get(PZ) * this.scale;
        if (l.has(PE)) this.currentE[this.tool] = l.get(PE) * this.scale;
        return;
      }
      case 29: case 30: case 32: case 34: this.planner.flush(); return;
      default: return;
    }
  }

  private mcode(buf: Uint8Array, end: number, l: ScannedLine): void {
    if (l.sub >= 0) return;
    const lim = this.planner.limits;
    switch (l.code) {
      case 82: this.relativeE = false; return;
      case 83: this.relativeE = true; return;
      case 73: this.hasM73 = true; return;
      case 486: this.objects.line(text(buf, l.paramStart - 4, end).trim()); return;
      case 220: scanParams(buf, end, l); if (l.has(PS) && l.get(PS) > 0) this.speedFactor = l.get(PS) / 100; return;
      case 201: scanParams(buf, end, l); this.axes(l, lim.maxAcceleration, 1); this.limitsSet(); return;
      case 203:
        scanParams(buf, end, l);
        this.axes(l, lim.maxFeedrate, this.opts.reprapFirmware ? 1 / 60 : 1);
        this.limitsSet();
        return;
      case 566: scanParams(buf, end, l); this.axes(l, lim.jerk, 1 / 60, true); this.useJerk(); return;
      case 204: {
        scanParams(buf, end, l);
        if (l.has(PS) && l.get(PS) > 0) lim.printAcceleration = lim.travelAcceleration = l.get(PS);
        if (l.has(PP) && l.get(PP) > 0) lim.printAcceleration = l.get(PP);
        if (l.has(PR) && l.get(PR) > 0) lim.retractAcceleration = l.get(PR);
        if (l.has(PT) && l.get(PT) > 0) lim.travelAcceleration = l.get(PT);
        if (lim.squareCornerVelocity > 0) {
          // Klipper: one acceleration for all moves, the smaller of P and T when S is absent.
          const acc = l.has(PS) && l.get(PS) > 0 ? l.get(PS) : Math.min(lim.printAcceleration, lim.travelAcceleration);
          lim.printAcceleration = lim.travelAcceleration = lim.retractAcceleration = acc;
          lim.maxAcceleration.x = lim.maxAcceleration.y = acc;
        }
        this.limitsSet();
        return;
      }
      case 205: {
        scanParams(buf, end, l);
        if (l.has(PX) || l.has(PY) || l.has(PZ) || l.has(PE)) { this.axes(l, lim.jerk, 1, true); this.useJerk(); }
        if (l.has(PJ) && l.get(PJ) > 0) { lim.junctionDeviation = l.get(PJ); this.limitsFromFile = true; }
        if (l.has(PS) && l.get(PS) >= 0) lim.minimumFeedrate = l.get(PS);
        if (l.has(PT) && l.get(PT) >= 0) lim.minimumTravelFeedrate = l.get(PT);
        this.planner.limitsChanged();
        return;
      }
      default: return;
    }
  }

  // Klipper's extended command for limits: SET_VELOCITY_LIMIT [VELOCITY=] [ACCEL=] [SQUARE_CORNER_VELOCITY=].
  private klipperCommand(buf: Uint8Array, start: number, end: number): void {
    const text = Buffer.from(buf.buffer, buf.byteOffset + start, end - start).toString('latin1');
    if (!/^SET_VELOCITY_LIMIT\b/i.test(text)) return;
    const lim = this.planner.limits;
    for (const m of text.split(';')[0].matchAll(/\b([A-Z_]+)=([\d.]+)/gi)) {
      const key = m[1].toUpperCase(), v = Number(m[2]);
      if (!(v > 0) && !(key === 'SQUARE_CORNER_VELOCITY' && v === 0)) continue;
      if (key === 'VELOCITY') lim.maxFeedrate.x = lim.maxFeedrate.y = v;
      else if (key === 'ACCEL') {
        // Klipper has one acceleration for every move, also the X/Y limit.
        lim.printAcceleration = lim.travelAcceleration = lim.retractAcceleration = v;
        lim.maxAcceleration.x = lim.maxAcceleration.y = v;
      } else if (key === 'SQUARE_CORNER_VELOCITY') lim.squareCornerVelocity = Math.max(v, 1e-3);
    }
    if (lim.squareCornerVelocity === 0) lim.squareCornerVelocity = 5;
    this.limitsSet();
  }

  private useJerk(): void {
    this.planner.limits.junctionDeviation = 0;
    this.limitsSet();
  }

  private limitsSet(): void {
    this.limitsFromFile = true;
    this.planner.limitsChanged();
  }

  // Jerk may be 0 (stop at every corner); a zero speed or acceleration limit is a typo and ignored.
  private axes(l: ScannedLine, target: { x: number; y: number; z: number; e: number }, unit: number, zeroOk = false): void {
    const ok = (slot: number): boolean => l.has(slot) && (l.get(slot) > 0 || (zeroOk && l.get(slot) === 0));
    if (ok(PX)) target.x = l.get(PX) * unit;
    if (ok(PY)) target.y = l.get(PY) * unit;
    if (ok(PZ)) target.z = l.get(PZ) * unit;
    if (ok(PE)) target.e = l.get(PE) * unit;
  }

  private selectTool(n: number): void {
    if (n > this.opts.maxTools) return; // Bambu's T255/T1000 and the like are not tools
    if (!this.toolsUsed.includes(n)) this.toolsUsed.push(n);
    if (n === this.tool) return;
    while (this.currentE.length <= n) { this.currentE.push(0); this.totalExtrusion.push(0); this.maxExtrusion.push(0); }
    this.tool = n;
  }

  // Applies F and E words; returns the E delta in mm.
  private extrude(l: ScannedLine): number {
    if (l.has(PF) && l.get(PF) > 0) this.feed = (l.get(PF) * this.scale) / 60;
    if (!l.has(PE)) return 0;
    const t = this.tool;
    const e = l.get(PE) * this.scale;
    const delta = this.relative || this.relativeE ? e : e - this.currentE[t];
    this.currentE[t] += delta;
    const total = (this.totalExtrusion[t] += delta);
    if (total > this.maxExtrusion[t]) this.maxExtrusion[t] = total;
    return delta;
  }

  private target(l: ScannedLine, axis: number, current: number): number {
    if (!l.has(axis)) return current;
    const v = l.get(axis) * this.scale;
    return this.relative ? current + v : v;
  }

  private linear(l: ScannedLine): void {
    const tx = this.target(l, PX, this.x), ty = this.target(l, PY, this.y), tz = this.target(l, PZ, this.z);
    const de = this.extrude(l);
    const dx = tx - this.x, dy = ty - this.y, dz = tz - this.z;
    if ((l.mask & XYZ) !== 0) {
      this.travelBox.add(this.x, this.y, this.z);
      this.travelBox.add(tx, ty, tz);
      if (de > 0) {
        this.printBox.add(this.x, this.y, this.z); this.printBox.add(tx, ty, tz);
        this.objects.extruded(this.x, this.y, tx, ty);
      }
    }
    const len = Math.sqrt(dx * dx + dy * dy + dz * dz);
    const feed = this.feed;
    const m = this.planner.move;
    if (len > 0) {
      this.moves++;
      this.naiveSeconds += Math.max(len, Math.abs(de)) / feed;
      m[0] = len; m[1] = dx / len; m[2] = dy / len; m[3] = dz / len; m[4] = de / len; m[5] = feed * this.speedFactor;
      this.planner.addMove(de !== 0 ? 0 : 1);
    } else if (de !== 0) {
      this.moves++;
      this.naiveSeconds += Math.abs(de) / feed;
      m[0] = Math.abs(de); m[1] = 0; m[2] = 0; m[3] = 0; m[4] = de > 0 ? 1 : -1; m[5] = feed * this.speedFactor;
      this.planner.addMove(2);
    }
    this.x = tx; this.y = ty; this.z = tz;
  }

  private arc(l: ScannedLine, clockwise: boolean): void {
    const sx = this.x, sy = this.y, sz = this.z;
    const tx = this.target(l, PX, sx), ty = this.target(l, PY, sy), tz = this.target(l, PZ, sz);
    let cx: number, cy: number;
    if (l.has(PR)) {
      // Centre on the perpendicular bisector of the chord; R < 0 asks for the longer of the two arcs.
      const r = l.get(PR) * this.scale;
      const mx = (tx - sx) / 2, my = (ty - sy) / 2;
      const half = Math.sqrt(mx * mx + my * my);
      if (half === 0) { this.linear(l); return; }
      const h = Math.sqrt(Math.max(0, r * r - half * half));
      const sign = (clockwise ? -1 : 1) * (r < 0 ? -1 : 1);
      cx = sx + mx - (sign * h * my) / half;
      cy = sy + my + (sign * h * mx) / half;
    } else {
      cx = sx + (l.has(PI) ? l.get(PI) * this.scale : 0);
      cy = sy + (l.has(PJ) ? l.get(PJ) * this.scale : 0);
    }
    const r = Math.sqrt((sx - cx) * (sx - cx) + (sy - cy) * (sy - cy));
    if (!(r > 0)) { this.linear(l); return; } // no circle: firmware moves straight
    const de = this.extrude(l);
    const a0 = Math.atan2(sy - cy, sx - cx);
    const a1 = Math.atan2(ty - cy, tx - cx);
    let sweep = clockwise ? a0 - a1 : a1 - a0;
    if (sweep < 0) sweep += TWO_PI;
    // Same start and end point means a full circle, as firmware draws it.
    if (sweep < 1e-9 && Math.abs(tx - sx) < 1e-6 && Math.abs(ty - sy) < 1e-6) sweep = TWO_PI;
    const planar = sweep * r;
    const dz = tz - sz;
    const len = Math.sqrt(planar * planar + dz * dz);

    this.arcBounds(cx, cy, r, a0, sweep, clockwise, sx, sy, sz, tx, ty, tz, de > 0);
    this.x = tx; this.y = ty; this.z = tz;
    if (!(len > 0)) return;
    this.moves++;
    const feed = this.feed;
    this.naiveSeconds += Math.max(len, Math.abs(de)) / feed;
    // Firmware draws arcs as short chords, each a planner move whose corners with the next are jerk/JD limited,
    // which is what slows tight arcs down; model it the same way.
    // Capped so a malformed giant arc cannot stall the analysis; real arcs are far below the cap.
    const n = Math.min(MAX_ARC_SEGMENTS, Math.max(1, Math.round(planar / ARC_SEGMENT_MM)));
    const step = (clockwise ? -sweep : sweep) / n;
    const chord = 2 * r * Math.sin(Math.abs(step) / 2);
    const dzs = dz / n, des = de / n;
    const segLen = Math.sqrt(chord * chord + dzs * dzs);
    if (!(segLen > 0)) return;
    const dir = clockwise ? -1 : 1;
    const speed = feed * this.speedFactor;
    const kind = de !== 0 ? 0 : 1;
    // A chord runs along the tangent at its middle. The tangent is turned by one step per chord with a rotation
    // (one sin/cos per arc, not per chord; the rounding drift over ≤ 4096 steps is far below a micrometre).
    const k = (dir * chord) / segLen;
    const mid0 = a0 + step / 2;
    let cos = Math.cos(mid0), sin = Math.sin(mid0);
    const cosStep = Math.cos(step), sinStep = Math.sin(step);
    const m = this.planner.move;
    for (let i = 0; i < n; i++) {
      m[0] = segLen; m[1] = -sin * k; m[2] = cos * k; m[3] = dzs / segLen; m[4] = des / segLen; m[5] = speed;
      this.planner.addMove(kind);
      const c = cos * cosStep - sin * sinStep;
      sin = sin * cosStep + cos * sinStep;
      cos = c;
    }
  }

  // Exact bounds of an arc: its ends plus every axis extreme (0°, 90°, 180°, 270°) the sweep passes.
  private arcBounds(cx: number, cy: number, r: number, a0: number, sweep: number, clockwise: boolean,
    sx: number, sy: number, sz: number, tx: number, ty: number, tz: number, printing: boolean): void {
    // No closure here: under tsx (keepNames) every closure creation also costs a defineProperty, once per arc.
    const travel = this.travelBox, print = this.printBox;
    travel.add(sx, sy, sz);
    travel.add(tx, ty, tz);
    if (printing) { print.add(sx, sy, sz); print.add(tx, ty, tz); }
    for (let q = 0; q < 4; q++) {
      const angle = (q * Math.PI) / 2;
      let d = clockwise ? a0 - angle : angle - a0;
      if (d < 0) d += TWO_PI;
      if (d < 0) d += TWO_PI;
      if (d >= TWO_PI) d -= TWO_PI;
      if (d > sweep) continue;
      const x = q === 0 ? cx + r : q === 2 ? cx - r : cx;
      const y = q === 1 ? cy + r : q === 3 ? cy - r : cy;
      const z = sz + ((tz - sz) * d) / sweep;
      travel.add(x, y, z);
      if (printing) print.add(x, y, z);
    }
  }
}
