// Who may use the Moonraker API: nobody without a key, a token or a trusted network; a read-only user watches but
// cannot print or send G-code; oneshot tokens are single-use; login gives an access token; trusted clients (CIDR) may.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { connectedServer } from '../helpers/connected-server.ts';
import { startTestServer } from '../helpers/server.ts';
import { SMALL_GCODE } from '../helpers/shared-data.ts';
import { RpcClient } from './rpc-client.ts';

const identify = { client_name: 'test', version: '1', type: 'other', url: 'x' };
type RpcErr = Error & { code?: number };

test('without credentials: only the auth-free methods, no notifications; HTTP answers 401', async (t) => {
  const server = await startTestServer(t);
  const r = await fetch(`${server.url}/server/info`);
  assert.equal(r.status, 401);
  assert.deepEqual(await r.json(), { error: { code: 401, message: 'Unauthorized' } });
  const c = await RpcClient.open(`${server.url}/websocket`);
  t.after(() => c.close());
  const info = await c.call<{ login_required: boolean }>('access.info');
  assert.equal(info.login_required, true);
  await assert.rejects(c.call('server.info'), (e: RpcErr) => e.code === -32602 && e.message === 'Unauthorized');
  await assert.rejects(c.call('server.connection.identify', identify), (e: RpcErr) => e.code === -32602);
  // A keyed socket gets the once-a-second notifications meanwhile; the unauthenticated one none.
  const keyed = await RpcClient.open(`${server.url}/websocket`, { 'X-Api-Key': server.apiKey });
  t.after(() => keyed.close());
  await keyed.next('notify_proc_stat_update');
  await keyed.next('notify_proc_stat_update', () => true, 1);
  assert.deepEqual(c.notifications, []);
  // A wrong key does not help; the right one, given to identify, authenticates the socket.
  await assert.rejects(c.call('server.connection.identify', { ...identify, api_key: 'nope' }), (e: RpcErr) => e.code === -32602);
  await c.call('server.connection.identify', { ...identify, api_key: server.apiKey });
  assert.equal((await c.call<{ klippy_state: string }>('server.info')).klippy_state, 'error');
});

test('a read-only user watches (status, files, subscribe) but cannot print, send G-code or delete', async (t) => {
  const server = await connectedServer(t);
  await server.access.users.addUser({ name: 'reader', password: 'pw-reader-123', groups: ['readonly'] });
  const key = await server.access.users.generateUserKey('reader');
  const form = new FormData();
  form.append('file', new Blob([await readFile(SMALL_GCODE)]), 'small.gcode');
  assert.equal((await server.api('/server/files/upload', { method: 'POST', body: form })).status, 201);

  const c = await RpcClient.open(`${server.url}/websocket`, { 'X-Api-Key': key });
  t.after(() => c.close());
  await c.call('server.connection.identify', identify);
  const sub = await c.call<{ status: { print_stats: { state: string } } }>('printer.objects.subscribe', { objects: { print_stats: null } });
  assert.equal(sub.status.print_stats.state, 'standby');
  const files = await c.call<Array<{ path: string }>>('server.files.list');
  assert.deepEqual(files.map((f) => f.path), ['small.gcode']);
  for (const [method, params] of [['printer.print.start', { filename: 'small.gcode' }], ['printer.gcode.script', { script: 'M104 S200' }],
    ['printer.gcode.script', { script: 'PAUSE' }], ['server.files.delete_file', { path: 'gcodes/small.gcode' }], ['printer.emergency_stop', {}],
    ['printer.firmware_restart', {}]] as const) {
    await assert.rejects(c.call(method, params), (e: RpcErr) => e.code === 403, `${method} refused`);
  }
  assert.equal(server.printer.state().flags.printing, false);
  assert.equal(server.printer.temperatures().tool0?.target, 0);
  // Over HTTP too: the same check.
  const r = await fetch(`${server.url}/printer/print/start?filename=small.gcode`, { method: 'POST', headers: { 'X-Api-Key': key } });
  assert.equal(r.status, 403);
  const up = new FormData();
  up.append('file', new Blob(['G28\n']), 'evil.gcode');
  assert.equal((await fetch(`${server.url}/server/files/upload`, { method: 'POST', body: up, headers: { 'X-Api-Key': key } })).status, 403);
  // An operator may.
  await server.access.users.addUser({ name: 'op', password: 'pw-op-123456', groups: ['users'] });
  const opKey = await server.access.users.generateUserKey('op');
  const op = await fetch(`${server.url}/printer/gcode/script`, { method: 'POST', headers: { 'X-Api-Key': opKey, 'Content-Type': 'application/json' }, body: JSON.stringify({ script: 'M104 S42' }) });
  assert.equal(op.status, 200);
  assert.deepEqual(await op.json(), { result: 'ok' });
});

test('oneshot tokens are single-use and bound to the address; login gives a token the socket accepts', async (t) => {
  const server = await startTestServer(t);
  const token = ((await (await server.api('/access/oneshot_token')).json()) as { result: string }).result;
  const a = await RpcClient.open(`${server.url}/websocket?token=${token}`);
  t.after(() => a.close());
  await a.call('server.connection.identify', identify);
  // Used once: a second socket with it is not authenticated.
  const b = await RpcClient.open(`${server.url}/websocket?token=${token}`);
  t.after(() => b.close());
  await assert.rejects(b.call('server.info'), (e: RpcErr) => e.code === -32602);
  // Login over the socket authenticates it; the token works for HTTP as a bearer token.
  await server.access.users.addUser({ name: 'lu', password: 'pw-lu-1234567', groups: ['users'] });
  await assert.rejects(b.call('access.login', { username: 'lu', password: 'wrong' }), (e: RpcErr) => e.code === -32602);
  const login = await b.call<{ token: string; username: string }>('access.login', { username: 'lu', password: 'pw-lu-1234567' });
  assert.equal(login.username, 'lu');
  await b.call('server.info');
  const r = await fetch(`${server.url}/access/user`, { headers: { Authorization: `Bearer ${login.token}` } });
  assert.equal(((await r.json()) as { result: { username: string } }).result.username, 'lu');
});

test('trusted clients (moonraker.trustedClients) need no key; others still do', async (t) => {
  const server = await startTestServer(t, { settings: { moonraker: { trustedClients: ['127.0.0.0/8'] } } });
  const r = await fetch(`${server.url}/server/info`);
  assert.equal(r.status, 200);
  const user = (await (await fetch(`${server.url}/access/user`)).json()) as { result: { username: string } };
  assert.equal(user.result.username, '_TRUSTED_USER_');
  const trusted = async () => ((await (await fetch(`${server.url}/access/info`)).json()) as { result: { trusted: boolean } }).result.trusted;
  assert.equal(await trusted(), true);
  await server.config.patch({ moonraker: { trustedClients: ['10.9.8.0/24'] } });
  assert.equal((await fetch(`${server.url}/server/info`)).status, 401);
  assert.equal(await trusted(), false);
});

test('CORS: an allowed origin is echoed (moonraker.corsDomains), another gets nothing, and its socket is refused', async (t) => {
  const server = await startTestServer(t, { settings: { moonraker: { corsDomains: ['http://*.fluidd.test'] } } });
  const ok = await fetch(`${server.url}/server/info`, { method: 'OPTIONS', headers: { Origin: 'http://app.fluidd.test', 'Access-Control-Request-Method': 'GET' } });
  assert.equal(ok.status, 204);
  assert.equal(ok.headers.get('access-control-allow-origin'), 'http://app.fluidd.test');
  const no = await fetch(`${server.url}/server/info`, { headers: { Origin: 'http://evil.test', 'X-Api-Key': server.apiKey } });
  assert.equal(no.headers.get('access-control-allow-origin'), null);
  await assert.rejects(RpcClient.open(`${server.url}/websocket`, { Origin: 'http://evil.test' }), /403/);
  const c = await RpcClient.open(`${server.url}/websocket`, { Origin: 'http://app.fluidd.test', 'X-Api-Key': server.apiKey });
  c.close();
});
