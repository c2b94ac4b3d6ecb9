// Shelly relays over local HTTP (docs/reference/plugins.md §1.5.2): Gen1 `/relay/<n>?turn=on|off` reading `ison`,
// Gen2+ RPC `/rpc/Switch.Set?id=<n>&on=…` and `/rpc/Switch.GetStatus?id=<n>` reading `output`.
import type { PowerDeviceSettings } from './settings.ts';
import { baseUrl, deviceError, json, request, type PowerProvider } from './provider.ts';

function auth(s: PowerDeviceSettings): RequestInit {
  return s.username === '' ? {} : { headers: { authorization: `Basic ${Buffer.from(`${s.username}:${s.password}`).toString('base64')}` } };
}

export function shellyGen1(s: PowerDeviceSettings): PowerProvider {
  const label = `Shelly (Gen1) at ${s.address}`;
  const relay = async (query: string) => {
    const reply = json(label, await request(label, `${baseUrl(s.address)}/relay/${s.plug}${query}`, s.timeout, auth(s)));
    if (typeof reply.ison !== 'boolean') throw deviceError(label, `reported no relay state: ${JSON.stringify(reply).slice(0, 80)}`);
    return reply.ison;
  };
  return {
    label,
    async setPower(on) {
      if (await relay(`?turn=${on ? 'on' : 'off'}`) !== on) throw deviceError(label, `did not switch ${on ? 'on' : 'off'}`);
    },
    readState: () => relay(''),
  };
}

export function shellyGen2(s: PowerDeviceSettings): PowerProvider {
  const label = `Shelly (Gen2) at ${s.address}`;
  const rpc = async (method: string, params: string) => json(label, await request(label, `${baseUrl(s.address)}/rpc/${method}?${params}`, s.timeout, auth(s)));
  return {
    label,
    async setPower(on) {
      const reply = await rpc('Switch.Set', `id=${s.plug}&on=${on}`);
      if (typeof reply.was_on !== 'boolean') throw deviceError(label, `refused Switch.Set: ${JSON.stringify(reply).slice(0, 120)}`);
    },
    async readState() {
      const reply = await rpc('Switch.GetStatus', `id=${s.plug}`);
      if (typeof reply.output !== 'boolean') throw deviceError(label, `reported no output state: ${JSON.stringify(reply).slice(0, 120)}`);
      return reply.output;
    },
  };
}
