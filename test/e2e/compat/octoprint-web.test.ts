// OctoPrint's own web client (static/js/app/client/*.js @1.9.3): cookie session + X-CSRF-Token, SockJS push with
// `name:session` auth, and the appkeys decision made from the push channel's request_access message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import SockJS from 'sockjs-client';
import { server, connectPrinter, json, waitFor, type Json } from './helpers.ts';
import { CookieJar } from '../../access/helpers.ts';
import type { TestServer } from '../../helpers/server.ts';

interface Browser { jar: CookieJar; csrf: () => string; call(path: string, init?: RequestInit & { json?: unknown; noCsrf?: boolean }): Promise<Response> }

/** The page load and login as the browser does them: GET / (redirect sets the CSRF cookie), then POST api/login. */
async function browserSession(s: TestServer, user: string, pass: string): Promise<Browser & { login: Json }> {
  const jar = new CookieJar();
  // OctoPrint redirects an anonymous `/` to its login page; Gantry's own UI serves its page at once. Either way the
  // page load is what hands out the CSRF cookie the client then echoes.
  const page = await fetch(`${s.url}/`, { redirect: 'manual' });
  assert.ok(page.status === 200 || page.status === 302, String(page.status));
  jar.take(page);
  const csrf = () => jar.get('csrf_token_P') ?? '';
  assert.ok(csrf(), 'the page load sets the CSRF cookie');
  const call: Browser['call'] = async (path, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set('Cookie', jar.header());
    if (!init.noCsrf) headers.set('X-CSRF-Token', csrf());
    let body = init.body;
    if (init.json !== undefined) { headers.set('Content-Type', 'application/json'); body = JSON.stringify(init.json); }
    const res = await fetch(s.url + path, { ...init, headers, body });
    jar.take(res);
    return res;
  };
  const res = await call('/api/login', { method: 'POST', json: { user, pass, remember: false } });
  assert.equal(res.status, 200);
  const login = await json<Json>(res);
  return { jar, csrf, call, login };
}

interface SockClient { messages: Json[]; send(m: unknown): void; next(type: string, pred?: (p: Json) => boolean, from?: number): Promise<Json>; close(): void }

async function sockjs(s: TestServer): Promise<SockClient> {
  const sock = new SockJS(`${s.url}/sockjs`);
  const messages: Json[] = [];
  sock.onmessage = (e: { data: unknown }) => { messages.push((typeof e.data === 'string' ? JSON.parse(e.data) : e.data) as Json); };
  await new Promise<void>((resolve, reject) => { sock.onopen = () => resolve(); sock.onerror = reject; });
  return {
    messages,
    send: (m) => sock.send(JSON.stringify(m)),
    close: () => sock.close(),
    next: (type, pred = () => true, from = 0) => waitFor(`${type} message`, () => {
      for (let i = from; i < messages.length; i++) if (type in messages[i] && pred(messages[i][type] as Json)) return messages[i][type] as Json;
      return undefined;
    }),
  };
}

test('login with the CSRF cookie, API calls with the session, CSRF enforced on writes, logout', async (t) => {
  const s = await server(t);
  await s.access.users.addUser({ name: 'operator', password: 'op-pass-123', groups: ['admins'] });
  const b = await browserSession(s, 'operator', 'op-pass-123');
  assert.equal(b.login.name, 'operator');
  assert.equal(typeof b.login.session, 'string');
  assert.ok(b.jar.get('session_P'), 'session cookie');

  const settings = await b.call('/api/settings');
  assert.equal(settings.status, 200);
  assert.equal(typeof (await json<Json>(settings)).api.key, 'string', 'admins see the API key');

  const noToken = await b.call('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL' }, noCsrf: true });
  assert.equal(noToken.status, 400);
  assert.equal((await json<Json>(noToken)).error, 'CSRF validation failed');
  const connect = await b.call('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL', baudrate: 115200, printerProfile: '_default', save: false, autoconnect: false } });
  assert.equal(connect.status, 204);
  await waitFor('Operational', async () => (await json<Json>(await b.call('/api/connection'))).current.state === 'Operational' || undefined);

  const custom = await json<Json>(await b.call('/api/printer/command/custom'));
  assert.ok(Array.isArray(custom.controls));
  assert.equal((await b.call('/api/printer/command', { method: 'POST', json: { commands: ['M105'] } })).status, 204);
  assert.equal((await b.call('/api/printer/printhead', { method: 'POST', json: { command: 'home', axes: ['x', 'y', 'z'] } })).status, 204);
  const exists = await b.call('/api/files/test', { method: 'POST', json: { command: 'exists', storage: 'local', path: '', filename: 'a b.gcode' } });
  assert.deepEqual(await json<Json>(exists), { exists: false });

  // A later login POST with the session cookie also needs the header.
  assert.equal((await b.call('/api/login', { method: 'POST', json: { passive: true }, noCsrf: true })).status, 400);
  const passive = await json<Json>(await b.call('/api/login', { method: 'POST', json: { passive: true } }));
  assert.equal(passive.name, 'operator');

  assert.equal((await b.call('/api/logout', { method: 'POST' })).status, 204);
  assert.equal((await b.call('/api/settings')).status, 403);
});

test('SockJS: /sockjs/info, connected before auth, history then current after auth with temps', async (t) => {
  const s = await server(t);
  await connectPrinter(s);
  await s.access.users.addUser({ name: 'viewer', password: 'viewer-pass-1', groups: ['users'] });
  const b = await browserSession(s, 'viewer', 'viewer-pass-1');

  const info = await fetch(`${s.url}/sockjs/info`);
  assert.equal(info.status, 200);
  const infoBody = await info.json() as Json;
  assert.equal(infoBody.websocket, true);

  const sock = await sockjs(s);
  t.after(() => sock.close());
  const connected = await sock.next('connected');
  for (const k of ['version', 'display_version', 'branch', 'python_version', 'plugin_hash', 'config_hash', 'debug', 'safe_mode', 'online', 'permissions']) {
    assert.ok(k in connected, `connected.${k}`);
  }

  sock.send({ auth: `${b.login.name}:${b.login.session}` });
  sock.send({ throttle: 1 });
  const history = await sock.next('history');
  // The socket is ordered: whatever came before the history came before the auth.
  assert.ok(!sock.messages.slice(0, sock.messages.findIndex((m) => 'history' in m)).some((m) => 'current' in m), 'nothing but connected before auth');
  assert.ok(Array.isArray(history.temps));
  const current = await sock.next('current', (c) => Array.isArray(c.temps));
  for (const k of ['state', 'job', 'progress', 'currentZ', 'offsets', 'serverTime', 'busyFiles', 'logs', 'messages']) assert.ok(k in current, `current.${k}`);
  assert.ok(sock.messages.findIndex((m) => 'history' in m) < sock.messages.findIndex((m) => 'current' in m), 'history before current');
});

test('appkeys decision from the push message: plugin{appkeys, request_access} → POST plugin/appkeys/decision/<user_token>', async (t) => {
  const s = await server(t);
  await s.access.users.addUser({ name: 'owner', password: 'owner-pass-1', groups: ['admins'] });
  const b = await browserSession(s, 'owner', 'owner-pass-1');
  const sock = await sockjs(s);
  t.after(() => sock.close());
  await sock.next('connected');
  sock.send({ auth: `${b.login.name}:${b.login.session}` });
  await sock.next('current');

  const req = await s.api('/plugin/appkeys/request', { key: null, method: 'POST', json: { app: 'Some App' } });
  assert.equal(req.status, 201);
  const poll = new URL(req.headers.get('location') ?? '', s.url).toString();
  const msg = await sock.next('plugin', (p) => p.plugin === 'appkeys' && (p.data as Json)?.type === 'request_access');
  const data = msg.data as Json;
  assert.equal(data.app_name, 'Some App');
  assert.equal(typeof data.user_token, 'string');

  const decided = await b.call(`/plugin/appkeys/decision/${data.user_token}`, { method: 'POST', json: { decision: true } });
  assert.equal(decided.status, 204);
  const granted = await fetch(poll);
  assert.equal(granted.status, 200);
  const key = (await json<Json>(granted)).api_key as string;
  const me = await json<Json>(await s.api('/api/currentuser', { key }));
  assert.equal(me.name, 'owner');
});
