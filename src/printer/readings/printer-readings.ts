// What the host knows about the printer from replies and sent commands: heaters, offsets, position, SD card.
import type { CanonicalTemperatures, RawReading } from '../../protocol/replies/temperature.ts';
import type { SdListEntry } from '../../protocol/replies/sd-card.ts';
import { param } from '../../gcode/line.ts';
import { TemperatureHistory } from './temperature-history.ts';
import type { HeaterReading, LinkProfile, Position, SdFileEntry, TemperatureHistoryEntry, TemperatureSnapshot } from '../types.ts';

/** Heaters and sensors kept per connection (tools, bed, chamber and the firmware's own: P, A, W …). */
export const MAX_HEATERS = 32;

interface Heater {
  actual: number | null;
  target: number | null;
}

export class PrinterReadings {
  private heaters = new Map<string, Heater>();
  private offsetMap: Record<string, number> = {};
  /** Targets asked for whose command is not written yet: reports (made before it) do not take them back. */
  private asked = new Map<string, number>();
  readonly history: TemperatureHistory;
  position: Position = { x: null, y: null, z: null, e: null, t: null, f: null };
  sdReady = false;
  sdFiles: SdFileEntry[] = [];
  chamberCapability = false;
  /** The firmware reported LFN_WRITE: M28 may create files with long names. */
  lfnWrite = false;

  constructor(cutoffMinutes: number) {
    this.history = new TemperatureHistory(cutoffMinutes);
  }

  reset(): void {
    this.heaters.clear();
    this.asked.clear();
    this.sdReady = false;
    this.sdFiles = [];
    this.chamberCapability = false;
    this.lfnWrite = false;
    this.position = { x: null, y: null, z: null, e: null, t: null, f: null };
  }

  /** Merges a report field by field (a report without a target keeps the previous target); returns the history point. */
  applyReport(t: CanonicalTemperatures, profile: LinkProfile, nowMs: number): TemperatureHistoryEntry {
    const set = (key: string, r: RawReading) => {
      // Every `word:number` on a report line is a sensor; a noisy line or debug output could name new ones for ever.
      if (!this.heaters.has(key) && this.heaters.size >= MAX_HEATERS) return;
      const h = this.heaters.get(key) ?? { actual: null, target: null };
      h.actual = r.actual;
      if (r.target !== null && (this.asked.size === 0 || !this.asked.has(key))) h.target = r.target;
      this.heaters.set(key, h);
    };
    for (const [tool, r] of t.tools) set(`tool${tool}`, r);
    if (profile.extruder.sharedNozzle && t.tools.size > 0) {
      const first = t.tools.values().next().value as RawReading;
      for (let i = 0; i < profile.extruder.count; i++) if (!t.tools.has(i)) set(`tool${i}`, first);
    }
    if (t.bed) set('bed', t.bed);
    if (t.chamber && (profile.heatedChamber || this.chamberCapability)) set('chamber', t.chamber);
    for (const [key, r] of t.custom) set(key, r);
    const entry: TemperatureHistoryEntry = { time: Math.floor(nowMs / 1000) };
    for (const [key, h] of this.heaters) entry[key] = { actual: h.actual, target: h.target };
    this.history.add(entry);
    return entry;
  }

  /** Targets follow the commands we send (M104/M109/M140/M190/M141/M191). */
  commandSent(cmd: string, code: string, currentTool: number): void {
    let key: string | null = null;
    if (code === 'M104' || code === 'M109') {
      const t = param(cmd, 'T');
      key = `tool${t !== null && Number.isFinite(t) ? t : currentTool}`;
    } else if (code === 'M140' || code === 'M190') key = 'bed';
    else if (code === 'M141' || code === 'M191') key = 'chamber';
    if (key === null) return;
    let v = param(cmd, 'S');
    if (v === null || !Number.isFinite(v)) v = param(cmd, 'R');
    if (v === null || !Number.isFinite(v)) return;
    // The link tells of a written command after the fact (from its thread): an older command's news that arrives after
    // a newer ask must not take the newer target back, so only the asked command itself settles the ask.
    const asked = this.asked.get(key);
    if (asked !== undefined && asked !== v) return;
    this.asked.delete(key);
    this.setTarget(key, v);
  }

  /** A target asked for (the API's heater controls): it reads back at once, while its command waits its turn. */
  askTarget(key: string, target: number): void {
    this.asked.set(key, target);
    this.setTarget(key, target);
  }

  setTarget(key: string, target: number): void {
    const h = this.heaters.get(key) ?? { actual: null, target: null };
    h.target = target;
    this.heaters.set(key, h);
  }

  anyTargetActive(): boolean {
    for (const h of this.heaters.values()) if (h.target !== null && h.target > 25) return true;
    return false;
  }

  snapshot(profile: LinkProfile): TemperatureSnapshot {
    const out: TemperatureSnapshot = {};
    for (const [key, h] of this.heaters) {
      if (key === 'bed' && !profile.heatedBed) continue;
      if (key === 'chamber' && !profile.heatedChamber) continue;
      const r: HeaterReading = { actual: h.actual, target: h.target, offset: this.offsetMap[key] ?? 0 };
      out[key] = r;
    }
    return out;
  }

  offsets(): Record<string, number> {
    return { ...this.offsetMap };
  }

  setOffsets(offsets: Record<string, number>): void {
    for (const [k, v] of Object.entries(offsets)) {
      if (v === 0) delete this.offsetMap[k];
      else this.offsetMap[k] = v;
    }
  }

  /** Stores a fresh card listing; true when it differs from the one held before. */
  sdList(entries: SdListEntry[], lowerCase: boolean): boolean {
    const before = JSON.stringify(this.sdFiles);
    this.sdFiles = entries.map((e) => {
      const name = lowerCase ? e.name.toLowerCase() : e.name;
      return { name, display: e.longName ?? name, size: e.size, date: null };
    });
    return JSON.stringify(this.sdFiles) !== before;
  }
}
