// Whether any heater has a target, decided where the firmware's replies are parsed and the commands written: idle
// temperature polls come faster while one has (timeout.temperatureTargetSet), with no round trip through the owner.
import { param } from '../gcode/line.ts';
import type { CanonicalTemperatures } from './replies/temperature.ts';

/** Below this a target is "off" (OctoPrint's threshold: a cold nozzle's 0 or a stray 20 is not heating). */
const ACTIVE_ABOVE = 25;

export class HeaterTargets {
  private readonly targets = new Map<string, number>();

  /** A temperature report (`T:20 /210 B:20 /60`): the targets it carries. */
  report(t: CanonicalTemperatures): void {
    for (const [tool, r] of t.tools) if (r.target !== null) this.targets.set(`tool${tool}`, r.target);
    if (t.bed?.target != null) this.targets.set('bed', t.bed.target);
    if (t.chamber?.target != null) this.targets.set('chamber', t.chamber.target);
  }

  /** Repetier's `TargetExtr0:200` / `TargetBed:60`. */
  reported(heater: number | 'bed', target: number): void {
    this.targets.set(heater === 'bed' ? 'bed' : `tool${heater}`, target);
  }

  /** A target command written (M104/M109/M140/M190/M141/M191 with S or R). */
  commandWritten(cmd: string, code: string, tool: number): void {
    let key: string;
    if (code === 'M104' || code === 'M109') {
      const t = param(cmd, 'T');
      key = `tool${t !== null && Number.isFinite(t) ? t : tool}`;
    } else if (code === 'M140' || code === 'M190') key = 'bed';
    else if (code === 'M141' || code === 'M191') key = 'chamber';
    else return;
    let v = param(cmd, 'S');
    if (v === null || !Number.isFinite(v)) v = param(cmd, 'R');
    if (v !== null && Number.isFinite(v)) this.targets.set(key, v);
  }

  get active(): boolean {
    for (const v of this.targets.values()) if (v > ACTIVE_ABOVE) return true;
    return false;
  }

  clear(): void { this.targets.clear(); }
}
