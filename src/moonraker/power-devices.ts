// Moonraker's power component (`machine.device_power.*`, `notify_power_changed`) over Gantry's power control
// (src/power/): the printer's supply is one device, `printer`. Switching needs PSU Control's permission, as Gantry's own
// /api/plugin/psucontrol; an off while printing or heating is refused (409), as there (locked_while_printing).
import type { OffReason } from '../power/power-service.ts';
import type { Plain } from '../core/plain.ts';
import { DomainError } from '../core/errors.ts';
import { RpcError, badParam } from './rpc-errors.ts';

export const POWER_DEVICE = 'printer';
/** PSU Control's permission (src/http/routes/psucontrol.ts checks the same one). */
export const POWER_PERMISSION = 'PLUGIN_PSUCONTROL_CONTROL';

/** What the edge uses of power control (PowerService satisfies it). */
export interface MoonrakerPower {
  isOn(): boolean;
  state(): Promise<boolean>;
  turnOn(): Promise<void>;
  turnOff(opts?: { force?: boolean; reason?: OffReason }): Promise<void>;
  /** Whether the user set power control up (else the component is not listed). */
  configured(): boolean;
}

/** The power settings the device's type is told from. */
export interface PowerKind { switchingMethod: string; gantry: { kind: string } }

/** Moonraker's device type for Gantry's way of switching. */
function deviceType(s: PowerKind): string {
  if (s.switchingMethod === 'GCODE') return 'klipper_device';
  if (s.switchingMethod === 'GPIO') return 'gpio';
  if (s.switchingMethod === 'SYSTEM') return 'shell';
  const kinds: Record<string, string> = { tasmota: 'tasmota', shelly1: 'shelly', shelly2: 'shelly', kasa: 'tplink_smartplug', homeassistant: 'homeassistant',
    mqtt: 'mqtt', http: 'http', system: 'shell' };
  return kinds[s.gantry.kind] ?? 'http';
}

type Add = (name: string, need: string | null, run: (params: Plain) => unknown) => void;

export class PowerDevices {
  constructor(private readonly power: MoonrakerPower, private readonly settings: () => PowerKind) {}

  device(on = this.power.isOn()): Record<string, unknown> {
    return { device: POWER_DEVICE, status: on ? 'on' : 'off', locked_while_printing: true, type: deviceType(this.settings()) };
  }

  private named(params: Plain): string[] {
    const names = Object.keys(params);
    if (names.length === 0) return [POWER_DEVICE];
    for (const n of names) if (n !== POWER_DEVICE) throw new RpcError(404, `Invalid device: ${n.slice(0, 100)}`);
    return names;
  }

  private async switchTo(action: unknown): Promise<Record<string, string>> {
    if (action !== 'on' && action !== 'off' && action !== 'toggle') throw badParam('action must be on, off or toggle');
    const on = action === 'toggle' ? !(await this.power.state()) : action === 'on';
    try {
      if (on) await this.power.turnOn();
      else await this.power.turnOff({ reason: 'api' });
    } catch (err) {
      // A device that does not answer: Gantry's own route's 502, in Moonraker's shape.
      if (err instanceof DomainError && err.name === 'DeviceError') throw new RpcError(502, err.message);
      throw err;
    }
    return { [POWER_DEVICE]: this.power.isOn() ? 'on' : 'off' };
  }

  register(add: Add): void {
    add('machine.device_power.devices', 'STATUS', async () => ({ devices: [this.device(await this.power.state())] }));
    add('machine.device_power.get_device', 'STATUS', async (p) => {
      if (p.device !== POWER_DEVICE) throw new RpcError(404, `Invalid device: ${String(p.device).slice(0, 100)}`);
      return { [POWER_DEVICE]: (await this.power.state()) ? 'on' : 'off' };
    });
    add('machine.device_power.post_device', POWER_PERMISSION, (p) => {
      if (p.device !== POWER_DEVICE) throw new RpcError(404, `Invalid device: ${String(p.device).slice(0, 100)}`);
      return this.switchTo(p.action);
    });
    add('machine.device_power.status', 'STATUS', async (p) => {
      this.named(p);
      return { [POWER_DEVICE]: (await this.power.state()) ? 'on' : 'off' };
    });
    add('machine.device_power.on', POWER_PERMISSION, (p) => { this.named(p); return this.switchTo('on'); });
    add('machine.device_power.off', POWER_PERMISSION, (p) => { this.named(p); return this.switchTo('off'); });
  }
}
