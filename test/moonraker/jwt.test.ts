// Login tokens: /access/login gives an HS256 JWT access token and a refresh token over a Gantry session; the access
// token works as `Authorization: Bearer` on HTTP, as `?access_token=` on the socket and in identify; a read-only user's
// token watches but cannot print; refresh gives a new access token; logout ends both; forged or swapped tokens fail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer } from '../helpers/connected-server.ts';
import { RpcClient } from './rpc-client.ts';

type RpcErr = Error & { code?: number };
const identify = { client_name: 'fluidd', version: '1.37.4', type: 'web', url: 'x' };
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString()) as Record<string, unknown>;

test('JWT login, Bearer on HTTP and the socket, refresh, logout; a read-only user watches, does not print', async (t) => {
  const server = await connectedServer(t);
  await server.access.users.addUser({ name: 'reader', password: 'pw-reader-123', groups: ['readonly'] });
  await server.access.users.addUser({ name: 'op', password: 'pw-op-123456', groups: ['users'] });
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });

  assert.equal((await post('/access/login', { username: 'reader', password: 'wrong' })).status, 401);
  const login = await post('/access/login', { username: 'reader', password: 'pw-reader-123' });
  assert.equal(login.status, 200);
  const { result } = (await login.json()) as { result: { username: string; token: string; refresh_token: string; action: string; source: string } };
  assert.equal(result.username, 'reader');
  assert.equal(result.action, 'user_logged_in');
  const header = JSON.parse(Buffer.from(result.token.split('.')[0], 'base64url').toString()) as Record<string, unknown>;
  assert.equal(header.alg, 'HS256');
  const claims = claimsOf(result.token);
  assert.equal(claims.username, 'reader');
  assert.equal(claims.token_type, 'access');
  assert.ok((claims.exp as number) > Date.now() / 1000 && (claims.exp as number) <= Date.now() / 1000 + 3700);
  assert.equal(claimsOf(result.refresh_token).token_type, 'refresh');

  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
  const user = await fetch(`${server.url}/access/user`, { headers: bearer(result.token) });
  assert.equal(((await user.json()) as { result: { username: string } }).result.username, 'reader');
  assert.equal((await fetch(`${server.url}/server/info`, { headers: bearer(result.token) })).status, 200);
  // Watching is allowed, printing is not.
  assert.equal((await post('/printer/gcode/script', { script: 'M104 S200' }, bearer(result.token))).status, 403);
  // The refresh token is not an access token; a forged signature or claim fails.
  assert.equal((await fetch(`${server.url}/server/info`, { headers: bearer(result.refresh_token) })).status, 401);
  const [h, , s] = result.token.split('.');
  const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, username: 'admin' })).toString('base64url')}.${s}`;
  assert.equal((await fetch(`${server.url}/server/info`, { headers: bearer(forged) })).status, 401);
  assert.equal((await fetch(`${server.url}/server/info`, { headers: bearer(`${h}.x.${s}`) })).status, 401);

  // The socket: ?access_token= on the upgrade, or identify's access_token.
  const a = await RpcClient.open(`${server.url}/websocket?access_token=${result.token}`);
  t.after(() => a.close());
  await a.call('server.connection.identify', identify);
  const sub = await a.call<{ status: { print_stats: { state: string } } }>('printer.objects.subscribe', { objects: { print_stats: null } });
  assert.equal(sub.status.print_stats.state, 'standby');
  await assert.rejects(a.call('printer.print.start', { filename: 'x.gcode' }), (e: RpcErr) => e.code === 403);
  await assert.rejects(a.call('printer.gcode.script', { script: 'G28' }), (e: RpcErr) => e.code === 403);
  const b = await RpcClient.open(`${server.url}/websocket`);
  t.after(() => b.close());
  await assert.rejects(b.call('server.info'), (e: RpcErr) => e.code === -32602, 'unauthenticated before identify');
  await b.call('server.connection.identify', { ...identify, access_token: result.token });
  assert.equal((await b.call<{ username: string }>('access.get_user')).username, 'reader');

  // Refresh: a new access token (a refresh token is refused as an access token and vice versa).
  const refreshed = await post('/access/refresh_jwt', { refresh_token: result.refresh_token });
  const fresh = ((await refreshed.json()) as { result: { token: string; action: string } }).result;
  assert.equal(fresh.action, 'user_jwt_refresh');
  assert.equal((await fetch(`${server.url}/server/info`, { headers: bearer(fresh.token) })).status, 200);
  assert.equal((await post('/access/refresh_jwt', { refresh_token: result.token })).status, 401);

  // Logout ends the session: both tokens and the refresh token stop working.
  assert.equal((await post('/access/logout', {}, bearer(result.token))).status, 200);
  for (const tok of [result.token, fresh.token]) assert.equal((await fetch(`${server.url}/server/info`, { headers: bearer(tok) })).status, 401);
  assert.equal((await post('/access/refresh_jwt', { refresh_token: result.refresh_token })).status, 401);

  // An operator's token (login over the socket) may send G-code.
  const o = await RpcClient.open(`${server.url}/websocket`);
  t.after(() => o.close());
  const opLogin = await o.call<{ token: string }>('access.login', { username: 'op', password: 'pw-op-123456' });
  assert.equal(claimsOf(opLogin.token).username, 'op');
  assert.equal(await o.call('printer.gcode.script', { script: 'M104 S42' }), 'ok');
  assert.equal(server.printer.temperatures().tool0?.target, 42);
  assert.equal((await post('/printer/gcode/script', { script: 'M104 S0' }, bearer(opLogin.token))).status, 200);
});
