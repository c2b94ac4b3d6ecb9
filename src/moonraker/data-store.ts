// server.temperature_store and server.gcode_store (docs/reference/moonraker.md §5.3–5.4): per-sensor rings sampled
// once a second, and the last console lines (responses and the scripts received).

export const TEMPERATURE_STORE_SIZE = 1200;
export const GCODE_STORE_SIZE = 1000;

class Ring {
  private readonly values: Array<number | null>;
  private head = 0;
  private count = 0;
  constructor(private readonly size: number) { this.values = new Array<number | null>(size).fill(null); }
  push(v: number | null): void {
    this.values[(this.head + this.count) % this.size] = v;
    if (this.count < this.size) this.count++;
    else this.head = (this.head + 1) % this.size;
  }
  list(): Array<number | null> {
    const out: Array<number | null> = [];
    for (let i = 0; i < this.count; i++) out.push(this.values[(this.head + i) % this.size]);
    return out;
  }
}

const round2 = (v: number | null | undefined): number | null => (v === null || v === undefined || !Number.isFinite(v) ? null : Math.round(v * 100) / 100);

export class TemperatureStore {
  private readonly sensors = new Map<string, { temperatures: Ring; targets: Ring; powers: Ring }>();

  constructor(private readonly size = TEMPERATURE_STORE_SIZE) {}

  /** One sample per sensor (called once a second). */
  sample(readings: Record<string, { temperature: number | null; target: number | null; power: number | null }>): void {
    for (const [name, r] of Object.entries(readings)) {
      let s = this.sensors.get(name);
      if (!s) this.sensors.set(name, (s = { temperatures: new Ring(this.size), targets: new Ring(this.size), powers: new Ring(this.size) }));
      s.temperatures.push(round2(r.temperature));
      s.targets.push(round2(r.target));
      s.powers.push(round2(r.power));
    }
  }

  reply(): Record<string, { temperatures: Array<number | null>; targets: Array<number | null>; powers: Array<number | null> }> {
    const out: Record<string, { temperatures: Array<number | null>; targets: Array<number | null>; powers: Array<number | null> }> = {};
    for (const [name, s] of this.sensors) out[name] = { temperatures: s.temperatures.list(), targets: s.targets.list(), powers: s.powers.list() };
    return out;
  }
}

export interface GcodeEntry { message: string; time: number; type: 'command' | 'response' }

export class GcodeStore {
  private readonly entries: GcodeEntry[] = [];
  constructor(private readonly size = GCODE_STORE_SIZE) {}

  add(entry: GcodeEntry): void {
    this.entries.push(entry);
    if (this.entries.length > this.size) this.entries.splice(0, this.entries.length - this.size);
  }

  list(count?: number): GcodeEntry[] {
    const n = count === undefined ? this.entries.length : Math.max(0, Math.min(count, this.entries.length));
    return this.entries.slice(this.entries.length - n);
  }
}
