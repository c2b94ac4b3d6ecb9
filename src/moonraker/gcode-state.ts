// What Klipper's gcode_move/toolhead/fan/display_status objects report, followed from the commands Gantry sends to
// the firmware (the terminal's `Send:` lines): coordinate modes, factors, feed rate, fan, M117/M73, homed axes and
// the commanded position. Marlin reports none of these by itself; the last M114 answer corrects the position.
import { commandCode, param } from '../gcode/line.ts';
import type { Position } from '../printer/types.ts';

const AXES = ['x', 'y', 'z', 'e'] as const;
type Axis = (typeof AXES)[number];

/** `N12 G1 X10*93` → `G1 X10` (line number and checksum are the link's framing, not the command). */
export function bareCommand(sent: string): string {
  let s = sent;
  if (s.charCodeAt(0) === 78 /* N */) {
    const sp = s.indexOf(' ');
    s = sp < 0 ? '' : s.slice(sp + 1);
  }
  const star = s.lastIndexOf('*');
  if (star >= 0) s = s.slice(0, star);
  const semi = s.indexOf(';');
  return (semi >= 0 ? s.slice(0, semi) : s).trim();
}

export class GcodeState {
  absoluteCoordinates = true;
  absoluteExtrude = true;
  /** Last F, mm/min (Klipper's gcode_move.speed is in these units, docs/reference/moonraker.md §3.3). */
  speed = 1500;
  speedFactor = 1;
  extrudeFactor = 1;
  /** 0..1 */
  fanSpeed = 0;
  message = '';
  /** M73 progress 0..1, or null when the file sends none. */
  m73: number | null = null;
  homed = new Set<'x' | 'y' | 'z'>();
  /** The commanded position in G-code coordinates. */
  readonly position: Record<Axis, number> = { x: 0, y: 0, z: 0, e: 0 };
  /** E extruded since the job's start (mm, positive moves only, before the flow factor): print_stats.filament_used. */
  extruded = 0;

  /** A line the host sent to the firmware. */
  sent(raw: string): void {
    const cmd = bareCommand(raw);
    const code = commandCode(cmd);
    if (code === null) return;
    switch (code) {
      case 'G0': case 'G1': case 'G2': case 'G3': this.move(cmd); break;
      case 'G28': this.home(cmd); break;
      case 'G90': this.absoluteCoordinates = true; this.absoluteExtrude = true; break;
      case 'G91': this.absoluteCoordinates = false; this.absoluteExtrude = false; break;
      case 'M82': this.absoluteExtrude = true; break;
      case 'M83': this.absoluteExtrude = false; break;
      case 'G92': for (const a of AXES) { const v = param(cmd, a.toUpperCase()); if (v !== null && Number.isFinite(v)) this.position[a] = v; } break;
      case 'M220': { const s = param(cmd, 'S'); if (s !== null && s > 0) this.speedFactor = s / 100; break; }
      case 'M221': { const s = param(cmd, 'S'); if (s !== null && s > 0) this.extrudeFactor = s / 100; break; }
      case 'M106': { const s = param(cmd, 'S'); this.fanSpeed = s === null || !Number.isFinite(s) ? 1 : Math.min(1, Math.max(0, s / 255)); break; }
      case 'M107': this.fanSpeed = 0; break;
      case 'M117': this.message = cmd.slice(cmd.indexOf('M117') + 4).trim(); break;
      case 'M73': { const p = param(cmd, 'P'); if (p !== null && Number.isFinite(p)) this.m73 = Math.min(1, Math.max(0, p / 100)); break; }
      case 'M84': case 'M18': this.homed.clear(); break;
      default: break;
    }
  }

  private move(cmd: string): void {
    const f = param(cmd, 'F');
    if (f !== null && f > 0) this.speed = f;
    for (const a of AXES) {
      const v = param(cmd, a.toUpperCase());
      if (v === null || !Number.isFinite(v)) continue;
      const absolute = a === 'e' ? this.absoluteExtrude : this.absoluteCoordinates;
      const before = this.position[a];
      this.position[a] = absolute ? v : before + v;
      if (a === 'e' && this.position[a] > before) this.extruded += this.position[a] - before;
    }
  }

  private home(cmd: string): void {
    const named = (['x', 'y', 'z'] as const).filter((a) => param(cmd, a.toUpperCase()) !== null);
    for (const a of named.length ? named : (['x', 'y', 'z'] as const)) {
      this.homed.add(a);
      this.position[a] = 0;
    }
  }

  /** The firmware's own report (M114) wins over what was counted. */
  reported(p: Position): void {
    for (const a of AXES) if (p[a] !== null && Number.isFinite(p[a])) this.position[a] = p[a] as number;
  }

  /** A new connection: the firmware starts from its defaults. */
  reset(): void {
    this.absoluteCoordinates = true;
    this.absoluteExtrude = true;
    this.speedFactor = 1;
    this.extrudeFactor = 1;
    this.fanSpeed = 0;
    this.message = '';
    this.m73 = null;
    this.homed.clear();
  }

  homedAxes(): string {
    return (['x', 'y', 'z'] as const).filter((a) => this.homed.has(a)).join('');
  }
}
