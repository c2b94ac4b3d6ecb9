// Moonraker's host actions over Gantry's system commands (src/system/): `machine.reboot`, `machine.shutdown` and
// `server.restart` are the core commands (Settings → Server → Commands), `machine.services.*` the custom actions named
// `<verb>_<service>` (e.g. `restart_webcamd`), `gantry`/`moonraker` restart is the server restart and `klipper` restart
// reconnects the printer. Nothing is run that the user did not configure: the rest is refused with a clear message.
import type { Plain } from '../core/plain.ts';
import { RpcError, badParam } from './rpc-errors.ts';

/** What the edge uses of the system commands (SystemCommands satisfies it). */
export interface MoonrakerSystem {
  list(source: 'core' | 'custom'): Array<{ action: string }>;
  execute(source: string, action: string): Promise<void>;
}

/** Gantry's permission for system commands (/api/system/commands checks the same). */
export const SYSTEM_PERMISSION = 'SYSTEM';
const VERBS = ['start', 'stop', 'restart'] as const;
type Verb = typeof VERBS[number];
/** The names this server answers to as a service. */
const SELF = ['gantry', 'moonraker'];

type Add = (name: string, need: string | null, run: (params: Plain) => unknown) => void;

export class MachineMethods {
  constructor(private readonly system: MoonrakerSystem, private readonly reconnectPrinter: () => Promise<void>) {}

  private hasCore(action: string): boolean {
    return this.system.list('core').some((c) => c.action === action);
  }

  private async core(action: 'reboot' | 'shutdown' | 'restart'): Promise<string> {
    if (!this.hasCore(action)) {
      throw new RpcError(400, `No ${action} command is configured (Gantry: Settings → Server → Commands)`);
    }
    await this.system.execute('core', action);
    return 'ok';
  }

  /** The services Mainsail lists (machine.system_info's `available_services`): this server when it can restart, the printer, the custom ones. */
  services(): string[] {
    const out = new Set<string>(['klipper']);
    if (this.hasCore('restart')) out.add('gantry');
    for (const a of this.system.list('custom')) {
      const m = /^(start|stop|restart)_(.+)$/.exec(a.action);
      if (m) out.add(m[2]);
    }
    return [...out];
  }

  /**
   * Moonraker's `service_state`: Gantry answering is `gantry` active, the printer connected is `klipper` active; of a
   * custom service Gantry knows only the actions, not systemd's state, so it says `unknown`.
   */
  serviceState(printerConnected: boolean): Record<string, { active_state: string; sub_state: string }> {
    return Object.fromEntries(this.services().map((s) => [s, s === 'gantry' ? { active_state: 'active', sub_state: 'running' }
      : s === 'klipper' ? (printerConnected ? { active_state: 'active', sub_state: 'running' } : { active_state: 'inactive', sub_state: 'dead' })
        : { active_state: 'unknown', sub_state: 'unknown' }]));
  }

  private async service(verb: Verb, p: Plain): Promise<string> {
    const name = p.service;
    if (typeof name !== 'string' || !name || name.length > 100) throw badParam('service is needed');
    if (SELF.includes(name)) {
      if (verb !== 'restart') throw new RpcError(400, `Gantry cannot ${verb} itself from here; only restart`);
      return this.core('restart');
    }
    if (name === 'klipper') {
      if (verb !== 'restart') throw new RpcError(400, `The printer's firmware cannot be ${verb === 'stop' ? 'stopped' : 'started'}; restart reconnects it`);
      await this.reconnectPrinter();
      return 'ok';
    }
    const action = `${verb}_${name}`;
    if (!this.system.list('custom').some((a) => a.action === action)) {
      throw new RpcError(400, `Service ${name} cannot be ${verb === 'stop' ? 'stopped' : `${verb}ed`}: no system action ${action} is configured`);
    }
    await this.system.execute('custom', action);
    return 'ok';
  }

  register(add: Add): void {
    add('machine.reboot', SYSTEM_PERMISSION, () => this.core('reboot'));
    add('machine.shutdown', SYSTEM_PERMISSION, () => this.core('shutdown'));
    add('server.restart', SYSTEM_PERMISSION, () => this.core('restart'));
    for (const verb of VERBS) add(`machine.services.${verb}`, SYSTEM_PERMISSION, (p) => this.service(verb, p));
  }
}

/** Klipper's `query_endstops` answer from Marlin's M119 lines (`x_min: open`, `z_min: TRIGGERED`): one per axis stepper. */
export function endstopsOf(lines: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines) {
    const m = /^\s*([xyz])(\d?)_(min|max)\s*:\s*(open|TRIGGERED)\s*$/i.exec(line);
    if (!m) continue;
    // Klipper's stepper names: z, z1, z2 … (Marlin's Z2 is Klipper's stepper_z1).
    const n = m[2] ? Number(m[2]) - 1 : 0;
    const key = `${m[1].toLowerCase()}${n > 0 ? n : ''}`;
    out[key] ??= m[4].toUpperCase() === 'TRIGGERED' ? 'TRIGGERED' : 'open';
  }
  return out;
}
