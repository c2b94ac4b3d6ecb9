// Stand-ins for the power devices (the true boundary): local servers that speak Tasmota's, Shelly's (Gen1, Gen2 RPC)
// and Home Assistant's HTTP APIs, and Kasa's legacy TCP protocol, each keeping a relay state and the requests made.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { kasaDecrypt, kasaEncrypt } from '../../src/power/providers/kasa.ts';

export interface FakeDevice {
  address: string;
  on: boolean;
  requests: string[];
  /** Stop answering (the device hangs). */
  silent: boolean;
  close(): Promise<void>;
}

async function listen(server: Server | TcpServer): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const body = (req: IncomingMessage) => new Promise<string>((resolve) => {
  let s = '';
  req.on('data', (d: Buffer) => { s += d.toString(); });
  req.on('end', () => resolve(s));
});

function httpDevice(handle: (dev: FakeDevice, url: URL, req: IncomingMessage, text: string) => { status?: number; json: unknown }): Promise<FakeDevice> {
  const dev: FakeDevice = { address: '', on: false, requests: [], silent: false, close: async () => {} };
  const server = createServer((req, res) => {
    void body(req).then((text) => {
      dev.requests.push(`${req.method} ${req.url}${text ? ` ${text}` : ''}`);
      if (dev.silent) return;
      const out = handle(dev, new URL(req.url ?? '/', 'http://x'), req, text);
      res.writeHead(out.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(out.json));
    });
  });
  return listen(server).then((address) => {
    dev.address = address;
    dev.close = () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); });
    return dev;
  });
}

/** Tasmota: `cm?cmnd=Power1 On`, `Status 0`; optional user/password in the query. */
export function fakeTasmota(auth?: { user: string; password: string }): Promise<FakeDevice> {
  return httpDevice((dev, url) => {
    if (url.pathname !== '/cm') return { status: 404, json: {} };
    if (auth && (url.searchParams.get('user') !== auth.user || url.searchParams.get('password') !== auth.password)) return { status: 401, json: {} };
    const cmnd = (url.searchParams.get('cmnd') ?? '').trim();
    const power = /^Power1?\s*(on|off)?$/i.exec(cmnd);
    if (power) {
      if (power[1]) dev.on = power[1].toLowerCase() === 'on';
      return { json: { POWER: dev.on ? 'ON' : 'OFF' } };
    }
    if (/^Status\s+0$/i.test(cmnd)) {
      return { json: { Status: { Module: 1, Power: dev.on ? '1' : '0' }, StatusFWR: { Version: '14.1.0' }, StatusSTS: { POWER: dev.on ? 'ON' : 'OFF' } } };
    }
    return { json: { Command: 'Unknown' } };
  });
}

export function fakeShellyGen1(auth?: { user: string; password: string }): Promise<FakeDevice> {
  return httpDevice((dev, url, req) => {
    if (auth && req.headers.authorization !== `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString('base64')}`) return { status: 401, json: {} };
    if (url.pathname !== '/relay/0') return { status: 404, json: {} };
    const turn = url.searchParams.get('turn');
    if (turn === 'on' || turn === 'off') dev.on = turn === 'on';
    return { json: { ison: dev.on, has_timer: false, timer_remaining: 0, source: 'http' } };
  });
}

export function fakeShellyGen2(): Promise<FakeDevice> {
  return httpDevice((dev, url) => {
    if (url.searchParams.get('id') !== '0') return { status: 500, json: { code: -105, message: 'Argument id, value 1 not found!' } };
    if (url.pathname === '/rpc/Switch.Set') {
      const was = dev.on;
      dev.on = url.searchParams.get('on') === 'true';
      return { json: { was_on: was } };
    }
    if (url.pathname === '/rpc/Switch.GetStatus') return { json: { id: 0, source: 'HTTP_in', output: dev.on, apower: 0, voltage: 230.1 } };
    return { status: 404, json: {} };
  });
}

export function fakeHomeAssistant(token: string, entity: string): Promise<FakeDevice> {
  return httpDevice((dev, url, req, text) => {
    if (req.headers.authorization !== `Bearer ${token}`) return { status: 401, json: { message: 'Unauthorized' } };
    const service = /^\/api\/services\/switch\/(turn_on|turn_off)$/.exec(url.pathname);
    if (service && req.method === 'POST') {
      if ((JSON.parse(text) as { entity_id: string }).entity_id !== entity) return { status: 400, json: {} };
      dev.on = service[1] === 'turn_on';
      return { json: [{ entity_id: entity, state: dev.on ? 'on' : 'off' }] };
    }
    if (url.pathname === `/api/states/${entity}`) return { json: { entity_id: entity, state: dev.on ? 'on' : 'off', attributes: {} } };
    return { status: 404, json: { message: 'Entity not found.' } };
  });
}

/** Kasa plug (or a strip with `children` outlets) on the legacy protocol. */
export async function fakeKasa(children = 0): Promise<FakeDevice & { outlets: boolean[] }> {
  const dev = { address: '', on: false, requests: [] as string[], silent: false, outlets: Array.from({ length: children }, () => false), close: async () => {} };
  const server = createTcpServer((sock) => {
    let buf = Buffer.alloc(0);
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length < 4 || buf.length < 4 + buf.readUInt32BE(0)) return;
      const req = JSON.parse(kasaDecrypt(buf.subarray(4, 4 + buf.readUInt32BE(0)))) as Record<string, Record<string, Record<string, number>>> & { context?: { child_ids: string[] } };
      dev.requests.push(JSON.stringify(req));
      if (dev.silent) return;
      let reply: unknown;
      if (req.system?.get_sysinfo) {
        reply = { system: { get_sysinfo: { alias: 'printer', relay_state: dev.on ? 1 : 0, ...(children ? { children: dev.outlets.map((s, i) => ({ id: `80060${i}`, state: s ? 1 : 0, alias: `o${i}` })) } : {}), err_code: 0 } } };
      } else if (req.system?.set_relay_state) {
        const state = req.system.set_relay_state.state === 1;
        const id = req.context?.child_ids[0];
        if (id !== undefined) dev.outlets[Number(id.slice(5))] = state;
        else dev.on = state;
        reply = { system: { set_relay_state: { err_code: 0 } } };
      }
      sock.end(kasaEncrypt(JSON.stringify(reply)));
    });
  });
  dev.address = await listen(server);
  dev.close = () => new Promise((r) => server.close(() => r()));
  return dev;
}
