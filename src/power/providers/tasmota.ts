// Tasmota over HTTP (docs/reference/plugins.md §1.5.1): `cm?cmnd=Power<n> On|Off`, state from `Status 0`'s StatusSTS.
import type { PowerDeviceSettings } from './settings.ts';
import { baseUrl, deviceError, json, request, type PowerProvider } from './provider.ts';

export function tasmota(s: PowerDeviceSettings): PowerProvider {
  const label = `Tasmota at ${s.address}`;
  const plug = Math.max(1, s.plug);
  const cmnd = async (command: string) => {
    const q = new URLSearchParams({ cmnd: command });
    if (s.username !== '') { q.set('user', s.username); q.set('password', s.password); }
    return json(label, await request(label, `${baseUrl(s.address)}/cm?${q.toString()}`, s.timeout));
  };
  const stateOf = (o: Record<string, unknown>): string | undefined => {
    const v = o[`POWER${plug}`] ?? (plug === 1 ? o.POWER : undefined);
    return typeof v === 'string' ? v.toUpperCase() : undefined;
  };
  return {
    label,
    async setPower(on) {
      const reply = await cmnd(`Power${plug} ${on ? 'On' : 'Off'}`);
      if (reply.Command === 'Unknown' || stateOf(reply) === undefined) throw deviceError(label, `has no relay ${plug}: ${JSON.stringify(reply).slice(0, 80)}`);
    },
    async readState() {
      const status = await cmnd('Status 0');
      const sts = status.StatusSTS;
      const v = sts !== null && typeof sts === 'object' ? stateOf(sts as Record<string, unknown>) : undefined;
      if (v === undefined) throw deviceError(label, `reported no state for relay ${plug}`);
      return v === 'ON';
    },
  };
}
