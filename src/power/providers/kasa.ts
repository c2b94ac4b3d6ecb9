// TP-Link Kasa plugs and strips over the legacy local protocol (docs/reference/plugins.md §1.5.3): JSON on TCP 9999,
// XOR "autokey" cipher starting at 171, each frame led by its 32-bit big-endian length.
import { connect } from 'node:net';
import type { PowerDeviceSettings } from './settings.ts';
import { deviceError, type PowerProvider } from './provider.ts';

export function kasaEncrypt(text: string): Buffer {
  const plain = Buffer.from(text, 'utf8');
  const out = Buffer.alloc(4 + plain.length);
  out.writeUInt32BE(plain.length, 0);
  let key = 171;
  for (let i = 0; i < plain.length; i++) {
    key ^= plain[i];
    out[4 + i] = key;
  }
  return out;
}

/** The payload of one frame (without its length prefix). */
export function kasaDecrypt(cipher: Buffer): string {
  const out = Buffer.alloc(cipher.length);
  let key = 171;
  for (let i = 0; i < cipher.length; i++) {
    out[i] = cipher[i] ^ key;
    key = cipher[i];
  }
  return out.toString('utf8');
}

const MAX_REPLY = 1 << 20;

function exchange(host: string, port: number, timeoutS: number, label: string, message: object): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    let got = 0;
    const fail = (what: string, cause?: unknown) => { socket.destroy(); reject(deviceError(label, what, cause)); };
    socket.setTimeout(Math.round(timeoutS * 1000), () => fail('did not answer in time'));
    socket.on('error', (err) => fail('did not answer', err));
    socket.on('connect', () => socket.write(kasaEncrypt(JSON.stringify(message))));
    socket.on('data', (d) => {
      chunks.push(d);
      got += d.length;
      if (got < 4) return;
      const all = Buffer.concat(chunks);
      const length = all.readUInt32BE(0);
      if (length > MAX_REPLY) return fail(`sent a frame of ${length} bytes`);
      if (all.length < 4 + length) return;
      socket.end();
      try {
        resolve(JSON.parse(kasaDecrypt(all.subarray(4, 4 + length))) as Record<string, unknown>);
      } catch (err) {
        reject(deviceError(label, 'answered something that is not JSON', err));
      }
    });
    socket.on('end', () => { if (got < 4) fail('closed the connection without an answer'); });
  });
}

interface SysInfo { relay_state?: number; children?: Array<{ id: string; state: number }> }

export function kasa(s: PowerDeviceSettings): PowerProvider {
  const [host, portText] = s.address.trim().split(':');
  const port = portText ? Number(portText) : 9999;
  const label = `Kasa at ${s.address}`;
  const send = (m: object) => exchange(host, port, s.timeout, label, m);
  const sysinfo = async (): Promise<SysInfo> => {
    const r = await send({ system: { get_sysinfo: {} } });
    const info = (r.system as { get_sysinfo?: SysInfo } | undefined)?.get_sysinfo;
    if (!info) throw deviceError(label, 'answered without system info');
    return info;
  };
  const child = (info: SysInfo) => {
    const c = info.children?.[s.plug - 1];
    if (!c) throw deviceError(label, `has no outlet ${s.plug}`);
    return c;
  };
  return {
    label,
    async setPower(on) {
      const msg: Record<string, unknown> = { system: { set_relay_state: { state: on ? 1 : 0 } } };
      if (s.plug > 0) msg.context = { child_ids: [child(await sysinfo()).id] };
      const r = await send(msg);
      const code = (r.system as { set_relay_state?: { err_code?: number } } | undefined)?.set_relay_state?.err_code;
      if (code !== 0) throw deviceError(label, `refused the switch (err_code ${String(code)})`);
    },
    async readState() {
      const info = await sysinfo();
      const state = s.plug > 0 ? child(info).state : info.relay_state;
      if (state !== 0 && state !== 1) throw deviceError(label, 'reported no relay state');
      return state === 1;
    },
  };
}
