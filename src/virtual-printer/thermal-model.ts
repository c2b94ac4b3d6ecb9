// Heating curves of the simulated heaters: fast linear heating that eases into the target, Newton cooling to ambient.

export interface HeaterCurve {
  /** Fastest heating in °C per simulated second (heater at full power). */
  maxRate: number;
  /** Time constant (s) of the approach once close to the target: the rate is (target − actual) / tau, capped by maxRate. */
  tau: number;
  /** Time constant (s) of passive cooling towards ambient. */
  coolTau: number;
}

export const HOTEND_CURVE: HeaterCurve = { maxRate: 3, tau: 4, coolTau: 60 };
export const BED_CURVE: HeaterCurve = { maxRate: 1, tau: 8, coolTau: 240 };
export const CHAMBER_CURVE: HeaterCurve = { maxRate: 0.25, tau: 30, coolTau: 600 };

export class Heater {
  actual: number;
  target = 0;

  constructor(readonly curve: HeaterCurve, private readonly ambient: number) {
    this.actual = ambient;
  }

  /** Advances the simulation by `dt` simulated seconds (Infinity: settle at once). */
  advance(dt: number): void {
    const goal = this.target > 0 ? this.target : this.ambient;
    if (!Number.isFinite(dt)) {
      this.actual = goal;
      return;
    }
    let left = dt;
    // Small steps keep the explicit integration stable for any dt.
    while (left > 0 && this.actual !== goal) {
      const step = Math.min(left, 0.25);
      left -= step;
      const diff = goal - this.actual;
      let delta: number;
      if (this.target > 0 && diff > 0) delta = Math.min(this.curve.maxRate, diff / this.curve.tau) * step;
      else if (this.target > 0) delta = Math.max(-this.curve.maxRate, diff / this.curve.tau) * step;
      else delta = diff / this.curve.coolTau * step;
      // Never overshoot, and snap when the remaining gap is below display resolution.
      if (Math.abs(delta) >= Math.abs(diff) || Math.abs(diff - delta) < 0.005) this.actual = goal;
      else this.actual += delta;
    }
  }

  /** Within ±1 °C of the target (Marlin's TEMP_WINDOW); with `heatingOnly`, also anything above it. */
  reached(heatingOnly: boolean): boolean {
    if (heatingOnly && this.actual >= this.target - 1) return true;
    return Math.abs(this.actual - this.target) <= 1;
  }
}

/** All heaters of the printer, advanced together from the real clock scaled to simulated time. */
export class ThermalModel {
  readonly tools: Heater[];
  readonly bed: Heater | null;
  readonly chamber: Heater | null;
  private last = performance.now();

  constructor(opts: { tools: number; bed: boolean; chamber: boolean; ambient: number }, private readonly timeScale: number) {
    this.tools = Array.from({ length: Math.max(1, opts.tools) }, () => new Heater(HOTEND_CURVE, opts.ambient));
    this.bed = opts.bed ? new Heater(BED_CURVE, opts.ambient) : null;
    this.chamber = opts.chamber ? new Heater(CHAMBER_CURVE, opts.ambient) : null;
  }

  /** Brings every heater up to now. */
  update(): void {
    const now = performance.now();
    const realDt = (now - this.last) / 1000;
    this.last = now;
    const dt = this.timeScale > 0 ? realDt / this.timeScale : Infinity;
    for (const h of this.tools) h.advance(dt);
    this.bed?.advance(dt);
    this.chamber?.advance(dt);
  }

  all(): Heater[] {
    return [...this.tools, ...(this.bed ? [this.bed] : []), ...(this.chamber ? [this.chamber] : [])];
  }
}
