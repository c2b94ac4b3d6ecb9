// Motion planner model: trapezoidal velocity profiles with junction limits and a look-ahead window, summing move times like firmware would run them.
import type { MachineLimits } from './types.ts';

/**
 * Planning window: when it is full the oldest COMMIT blocks are timed, so every committed block had at least 64 blocks
 * of look-ahead (PrusaSlicer's estimator keeps 64; Marlin buffers 16–64) while each block is planned ~1.1 times.
 */
const WINDOW = 512;
const COMMIT = 448;
/** Speed the planner may always enter or leave a junction at (Marlin's MINIMUM_PLANNER_SPEED, mm/s). */
export const MIN_PLANNER_SPEED = 0.05;

/** Time of one move with the given entry/exit/nominal speeds (trapezoid, or triangle when it cannot reach nominal). */
export function trapezoidTime(length: number, entry: number, exit: number, nominal: number, accel: number): number {
  if (length <= 0) return 0;
  if (nominal <= 0) return 0;
  if (!(accel > 0) || !Number.isFinite(accel)) return length / nominal;
  const accelDist = (nominal * nominal - entry * entry) / (2 * accel);
  const decelDist = (nominal * nominal - exit * exit) / (2 * accel);
  if (accelDist + decelDist <= length) {
    return (nominal - entry) / accel + (nominal - exit) / accel + (length - accelDist - decelDist) / nominal;
  }
  // Triangle: the peak speed where acceleration from entry meets deceleration to exit.
  const peak = Math.sqrt(Math.max(0, (2 * accel * length + entry * entry + exit * exit) / 2));
  return Math.max(0, peak - entry) / accel + Math.max(0, peak - exit) / accel;
}

/** Junction speed by junction deviation (Marlin 2): the speed at which the centripetal acceleration of a virtual arc stays at `accel`. */
export function junctionDeviationSpeed(cosTheta: number, accel: number, deviation: number): number {
  if (cosTheta > 0.999999) return MIN_PLANNER_SPEED; // full reversal
  if (cosTheta < -0.999999) return Infinity; // straight on
  const sinHalf = Math.sqrt(0.5 * (1 - cosTheta));
  return Math.sqrt((accel * deviation * sinHalf) / (1 - sinHalf));
}

// Per-axis velocity change across a junction, as Marlin 1.1 / PrusaSlicer's classic-jerk planner counts it.
function axisJerk(vExit: number, vEntry: number): number {
  if (vExit > vEntry) return vEntry > 0 || vExit < 0 ? vExit - vEntry : Math.max(vExit, -vEntry);
  return vEntry < 0 || vExit > 0 ? vEntry - vExit : Math.max(-vExit, vEntry);
}

// Slots of Planner's limit snapshot (see limitsChanged).
const FX = 0, FY = 1, FZ = 2, FE = 3, AX = 4, AY = 5, AZ = 6, AE = 7, JX = 8, JY = 9, JZ = 10, JE = 11;
const PRINT_ACC = 12, RETRACT_ACC = 13, TRAVEL_ACC = 14, JD = 15, SCV = 16, COMBINED = 17, MIN_FEED = 18, MIN_TRAVEL = 19;

/**
 * Accepts moves in file order and accumulates their planned time. Units: mm, mm/s, mm/s².
 * Each move gives its length, the unit direction of each axis (XYZE, relative to `length`), the requested speed
 * and the acceleration class; the planner clamps speed and acceleration to the axis limits.
 */
export class Planner {
  /** The machine's limits; whoever changes them mid-file (M201..M205) calls limitsChanged(). */
  limits: MachineLimits;
  /**
   * The limits as one typed array, read on every move. Why: the limit objects' fields start as small integers
   * (defaults) and become fractions when a file sets e.g. M205 Z0.4; each such change gives the objects a new hidden
   * class, and the hot path reading them turned polymorphic and slow (the same file analysed 2× slower after others).
   */
  private readonly k = new Float64Array(20);
  /** Seconds of fully committed moves plus dwells. */
  private committed = 0;
  private n = 0;
  // Ring-free window: on commit the WINDOW - COMMIT blocks left are moved to the front of the typed arrays.
  private readonly len = new Float64Array(WINDOW);
  private readonly nominal = new Float64Array(WINDOW);
  private readonly accel = new Float64Array(WINDOW);
  private readonly maxEntry = new Float64Array(WINDOW);
  private readonly entry = new Float64Array(WINDOW);
  /** First block's entry speed is fixed once an earlier block was committed against it. */
  private fixedEntry = -1;
  // Previous block's axis velocities / unit vector / speed, for the next junction.
  private prevValid = false;
  private prevNominal = 0;
  private prevLength = 0;
  private prevAccel = 0;
  private prevSafe = 0;
  private readonly prevV = new Float64Array(4);
  private readonly prevU = new Float64Array(3);
  private prevXyz = false;
  /** Scratch for the junction helpers: v, vx, vy, vz, ve, safe in; junction speed out at [6]. */
  private readonly cur = new Float64Array(7);
  /** Input register of addMove(): length, ux, uy, uz, ue, feed. */
  readonly move = new Float64Array(6);

  constructor(limits: MachineLimits) {
    this.limits = limits;
    this.limitsChanged();
  }

  /** Re-reads `limits` after it was changed in place. */
  limitsChanged(): void {
    const L = this.limits, k = this.k;
    k[FX] = L.maxFeedrate.x; k[FY] = L.maxFeedrate.y; k[FZ] = L.maxFeedrate.z; k[FE] = L.maxFeedrate.e;
    k[AX] = L.maxAcceleration.x; k[AY] = L.maxAcceleration.y; k[AZ] = L.maxAcceleration.z; k[AE] = L.maxAcceleration.e;
    k[JX] = L.jerk.x; k[JY] = L.jerk.y; k[JZ] = L.jerk.z; k[JE] = L.jerk.e;
    k[PRINT_ACC] = L.printAcceleration; k[RETRACT_ACC] = L.retractAcceleration; k[TRAVEL_ACC] = L.travelAcceleration;
    k[JD] = L.junctionDeviation; k[SCV] = L.squareCornerVelocity; k[COMBINED] = L.combinedXyJerk ? 1 : 0;
    k[MIN_FEED] = L.minimumFeedrate; k[MIN_TRAVEL] = L.minimumTravelFeedrate;
  }

  /**
   * Adds one move. `ux..ue` are axis displacements divided by `length` (for an E-only move `length` = |ΔE| and
   * ue = ±1). `kind`: 0 = printing, 1 = travel, 2 = retract/prime (E only).
   */
  add(length: number, ux: number, uy: number, uz: number, ue: number, feed: number, kind: 0 | 1 | 2): void {
    const m = this.move;
    m[0] = length; m[1] = ux; m[2] = uy; m[3] = uz; m[4] = ue; m[5] = feed;
    this.addMove(kind);
  }

  /**
   * add() for the hot path: the move is read from `move` ([length, ux, uy, uz, ue, feed]), because doubles passed
   * to (or returned from) a call that is not inlined are boxed, one allocation each, millions per file.
   */
  addMove(kind: 0 | 1 | 2): void {
    const m = this.move;
    const length = m[0], ux = m[1], uy = m[2], uz = m[3], ue = m[4], feed = m[5];
    if (!(length > 0) || !Number.isFinite(length)) return;
    const k = this.k;
    const ax = Math.abs(ux), ay = Math.abs(uy), az = Math.abs(uz), ae = Math.abs(ue);
    let v = Math.max(feed, kind === 1 ? k[MIN_TRAVEL] : k[MIN_FEED]);
    if (ax * v > k[FX]) v = k[FX] / ax;
    if (ay * v > k[FY]) v = k[FY] / ay;
    if (az * v > k[FZ]) v = k[FZ] / az;
    if (ae * v > k[FE]) v = k[FE] / ae;
    if (!(v > 0)) return;
    let a = kind === 0 ? k[PRINT_ACC] : kind === 1 ? k[TRAVEL_ACC] : k[RETRACT_ACC];
    if (ax * a > k[AX]) a = k[AX] / ax;
    if (ay * a > k[AY]) a = k[AY] / ay;
    if (az * a > k[AZ]) a = k[AZ] / az;
    if (ae * a > k[AE]) a = k[AE] / ae;

    const vx = ux * v, vy = uy * v, vz = uz * v, ve = ue * v;
    // Speed reachable from (or down to) standstill within the jerk limits.
    let safe = v;
    if (Math.abs(vx) > k[JX]) safe = Math.min(safe, (v * k[JX]) / Math.abs(vx));
    if (Math.abs(vy) > k[JY]) safe = Math.min(safe, (v * k[JY]) / Math.abs(vy));
    if (Math.abs(vz) > k[JZ]) safe = Math.min(safe, (v * k[JZ]) / Math.abs(vz));
    if (Math.abs(ve) > k[JE]) safe = Math.min(safe, (v * k[JE]) / Math.abs(ve));

    const xyz = ax + ay + az > 0;
    const c = this.cur;
    c[0] = v; c[1] = vx; c[2] = vy; c[3] = vz; c[4] = ve; c[5] = safe;
    const combined = k[COMBINED] !== 0;
    if (combined) { this.combinedSafeSpeed(); safe = c[6]; c[5] = safe; }
    // Marlin 2 with junction deviation, and Klipper, start every move after a stop from (almost) zero.
    else if ((k[JD] > 0 || k[SCV] > 0) && xyz) { safe = Math.min(v, MIN_PLANNER_SPEED); c[5] = safe; }
    let vJunction = safe;
    if (this.prevValid) {
      if (combined) {
        this.combinedJunction();
        vJunction = c[6];
      } else if (k[SCV] > 0 && xyz && this.prevXyz) {
        const cos = -(this.prevU[0] * ux + this.prevU[1] * uy + this.prevU[2] * uz) / Math.max(1e-12, Math.sqrt(ux * ux + uy * uy + uz * uz));
        c[0] = cos; c[1] = a; c[2] = length;
        this.klipperJunction();
        vJunction = Math.min(v, this.prevNominal, c[6]);
      } else if (k[JD] > 0 && xyz && this.prevXyz) {
        const cos = -(this.prevU[0] * ux + this.prevU[1] * uy + this.prevU[2] * uz) / Math.max(1e-12, Math.sqrt(ux * ux + uy * uy + uz * uz));
        vJunction = Math.min(v, this.prevNominal, junctionDeviationSpeed(cos, a, k[JD]));
      } else {
        this.classicJunction();
        vJunction = c[6];
      }
    }
    this.push(length, v, a, Math.max(Math.min(vJunction, v), 0));

    this.prevValid = true;
    this.prevLength = length;
    this.prevAccel = a;
    this.prevNominal = v;
    this.prevSafe = safe;
    this.prevV[0] = vx; this.prevV[1] = vy; this.prevV[2] = vz; this.prevV[3] = ve;
    const norm = Math.sqrt(ux * ux + uy * uy + uz * uz);
    this.prevXyz = xyz;
    if (norm > 0) { this.prevU[0] = ux / norm; this.prevU[1] = uy / norm; this.prevU[2] = uz / norm; }
  }

  // Marlin 1.1's classic-jerk junction: scale the slower side down until every axis' velocity jump is within its jerk.
  // Reads [v, vx, vy, vz, ve, safe] from `cur`, writes the junction speed to cur[6].
  private classicJunction(): void {
    const c = this.cur;
    const v = c[0], safe = c[5];
    const k = this.k;
    let vmax = Math.min(v, this.prevNominal);
    const prevFactor = vmax / this.prevNominal;
    const curFactor = vmax / v;
    let factor = 1;
    let limited = false;
    for (let i = 0; i < 4; i++) {
      let vExit = this.prevV[i] * prevFactor;
      let vEntry = c[i + 1] * curFactor;
      if (limited) { vExit *= factor; vEntry *= factor; }
      const j = axisJerk(vExit, vEntry);
      if (j > k[JX + i]) { factor *= k[JX + i] / j; limited = true; }
    }
    if (limited) vmax *= factor;
    const threshold = vmax * 0.99;
    if (this.prevSafe > threshold && safe > threshold) vmax = safe;
    c[6] = vmax;
  }

  // Klipper: junction deviation derived from square_corner_velocity (so v² = R·scv²·(√2−1), the same for any
  // acceleration), further limited so a short move can round the corner as a virtual arc. Reads cos θ, the move's
  // acceleration and length from cur[0..2], writes the junction speed to cur[6].
  private klipperJunction(): void {
    const c = this.cur;
    const cos = c[0], a = c[1], length = c[2];
    if (cos > 0.999999) { c[6] = MIN_PLANNER_SPEED; return; }
    if (cos < -0.999999) { c[6] = Infinity; return; }
    const sinHalf = Math.sqrt(0.5 * (1 - cos));
    const tanHalf = sinHalf / Math.sqrt(0.5 * (1 + cos));
    const scv = this.k[SCV];
    const jd = ((sinHalf / (1 - sinHalf)) * scv * scv * (Math.SQRT2 - 1) * a) / this.k[PRINT_ACC];
    const v2 = Math.min(jd, 0.5 * length * tanHalf * a, 0.5 * this.prevLength * tanHalf * this.prevAccel);
    c[6] = Math.sqrt(v2);
  }

  // Marlin 1.0 (and Cura's estimator): from standstill only half the XY jerk, less if Z or E would jump too much.
  private combinedSafeSpeed(): void {
    const c = this.cur;
    const k = this.k;
    let safe = k[JX] / 2;
    if (Math.abs(c[3]) > k[JZ] / 2) safe = Math.min(safe, k[JZ] / 2);
    if (Math.abs(c[4]) > k[JE] / 2) safe = Math.min(safe, k[JE] / 2);
    c[6] = Math.min(safe, c[0]);
  }

  // Marlin 1.0: the XY velocity vector may change by the XY jerk at full speed on both sides, else both are scaled down.
  private combinedJunction(): void {
    const c = this.cur;
    const k = this.k;
    const p = this.prevV;
    const dx = c[1] - p[0], dy = c[2] - p[1];
    const xy = Math.sqrt(dx * dx + dy * dy);
    let factor = xy > k[JX] ? k[JX] / xy : 1;
    const dz = Math.abs(c[3] - p[2]);
    if (dz > k[JZ]) factor = Math.min(factor, k[JZ] / dz);
    const de = Math.abs(c[4] - p[3]);
    if (de > k[JE]) factor = Math.min(factor, k[JE] / de);
    c[6] = Math.min(this.prevNominal, c[0] * factor);
  }

  /** Adds a pause (G4, firmware retract time): the machine stops, so planning restarts from standstill. */
  dwell(seconds: number): void {
    this.flush();
    if (seconds > 0 && Number.isFinite(seconds)) this.committed += seconds;
  }

  /** Forces a stop (homing, unknown motion): plans everything buffered down to standstill. */
  flush(): void {
    if (this.n > 0) {
      this.plan();
      this.commit(this.n);
    }
    this.prevValid = false;
    this.fixedEntry = -1;
  }

  /** Seconds of the moves already out of the look-ahead window (plus dwells). */
  get committedSeconds(): number {
    return this.committed;
  }

  /** Total planned seconds so far, including buffered moves planned to a stop. */
  totalSeconds(): number {
    this.flush();
    return this.committed;
  }

  private push(length: number, v: number, a: number, maxEntry: number): void {
    if (this.n === WINDOW) {
      this.plan();
      this.commit(COMMIT);
    }
    const i = this.n++;
    this.len[i] = length;
    this.nominal[i] = v;
    this.accel[i] = a;
    this.maxEntry[i] = maxEntry;
    this.entry[i] = maxEntry;
  }

  // Backward pass (every block must be able to stop by the end of the window), then forward pass (acceleration limits).
  private plan(): void {
    const n = this.n;
    const len = this.len, acc = this.accel, maxEntry = this.maxEntry, entry = this.entry;
    let next = 0;
    for (let i = n - 1; i >= 0; i--) {
      const reach = Math.sqrt(next * next + 2 * acc[i] * len[i]);
      entry[i] = Math.min(maxEntry[i], reach);
      next = entry[i];
    }
    if (this.fixedEntry >= 0) entry[0] = Math.min(entry[0], this.fixedEntry);
    for (let i = 0; i < n - 1; i++) {
      const reach = Math.sqrt(entry[i] * entry[i] + 2 * acc[i] * len[i]);
      if (entry[i + 1] > reach) entry[i + 1] = reach;
    }
  }

  private commit(count: number): void {
    const n = this.n;
    let t = 0;
    for (let i = 0; i < count; i++) {
      const exit = i + 1 < n ? this.entry[i + 1] : 0;
      t += trapezoidTime(this.len[i], this.entry[i], exit, this.nominal[i], this.accel[i]);
    }
    this.committed += t;
    const rest = n - count;
    if (rest > 0) {
      this.len.copyWithin(0, count, n);
      this.nominal.copyWithin(0, count, n);
      this.accel.copyWithin(0, count, n);
      this.maxEntry.copyWithin(0, count, n);
      this.entry.copyWithin(0, count, n);
      this.fixedEntry = this.entry[0];
    } else {
      this.fixedEntry = -1;
    }
    this.n = rest;
  }
}
