// Login, logout, remember-me, passive login, current user and the failed-login rate limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { addUser, browserLogin, asBrowser, CookieJar } from './helpers.ts';

const GENERIC_403 = "You don't have the permission to access the requested resource. It is either read-protected or not readable by the server.";

test('active login answers the full login response and sets the session cookie', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  const res = await s.api('/api/login', { key: null, method: 'POST', json: { user: 'bob', pass: 'hunter22' } });
  assert.equal(res.status, 200);
  const body = await res.json() as Record<string, unknown>;
  assert.equal(body.name, 'bob');
  assert.equal(body.active, true);
  assert.deepEqual(body.groups, ['users']);
  assert.deepEqual(body.permissions, []);
  assert.equal(body.admin, false);
  assert.equal(body.user, true);
  assert.deepEqual(body.roles, ['user']);
  assert.equal(body.apikey, null);
  assert.deepEqual(body.settings, {});
  assert.match(String(body.session), /^[0-9A-F]{32}$/);
  assert.equal(body._is_external_client, false);
  assert.equal(body._login_mechanism, 'http');
  const needs = body.needs as { role: string[]; group: string[] };
  assert.deepEqual(needs.group, ['users']);
  assert.ok(needs.role.includes('status') && !needs.role.includes('admin'));
  assert.match(res.headers.get('vary') ?? '', /Cookie/);
  const cookies = res.headers.getSetCookie();
  const session = cookies.find((c) => c.startsWith(`session_P${s.port}=`));
  assert.ok(session, 'session cookie set');
  assert.match(session, /HttpOnly/);
  assert.match(session, /SameSite=Lax/);
  assert.match(session, /Path=\//);
  assert.ok(!cookies.some((c) => c.startsWith(`remember_token_P${s.port}=`)), 'no remember cookie without remember');
  assert.ok(cookies.some((c) => /^active_logout_P\d+=;.*Max-Age=0/.test(c)));
  assert.ok(cookies.some((c) => /^active_logout=;.*Max-Age=0/.test(c)));
  assert.ok(!cookies.some((c) => c.startsWith('csrf_token')), 'login does not set the CSRF cookie');
  // The session resolves for the push channel's `auth` message.
  assert.equal(s.access.identityForSession(String(body.session))?.name, 'bob');

  const jar = new CookieJar().take(res);
  const me = await asBrowser(s, jar, '/api/currentuser');
  const current = await me.json() as { name: string; permissions: string[]; groups: string[] };
  assert.equal(current.name, 'bob');
  assert.ok(current.permissions.includes('STATUS') && current.permissions.includes('CONTROL'));
  assert.ok(!current.permissions.includes('ADMIN'));
  assert.deepEqual(current.groups, ['users']);
});

test('failed logins are 403 with the generic text; neither credentials nor passive is 400', async (t) => {
  const s = await startTestServer(t, { settings: { devel: { enableRateLimiter: false } } });
  await addUser(s, 'bob', 'hunter22');
  await addUser(s, 'carl', 'pw-carl');
  await s.access.users.updateUser('carl', { active: false });
  for (const creds of [{ user: 'bob', pass: 'wrong' }, { user: 'nobody', pass: 'x' }, { user: 'carl', pass: 'pw-carl' }]) {
    const res = await s.api('/api/login', { key: null, method: 'POST', json: creds });
    assert.equal(res.status, 403, JSON.stringify(creds));
    assert.deepEqual(await res.json(), { error: GENERIC_403 });
    assert.equal(res.headers.getSetCookie().filter((c) => c.startsWith('session_')).length, 0);
  }
  const empty = await s.api('/api/login', { key: null, method: 'POST', json: {} });
  assert.equal(empty.status, 400);
  assert.deepEqual(await empty.json(), { error: 'Neither user and pass attributes nor passive flag present' });
});

test('login accepts form-encoded credentials', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  const res = await fetch(`${s.url}/api/login`, {
    method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'user=bob&pass=hunter22&remember=true',
  });
  assert.equal(res.status, 200);
  assert.equal((await res.json() as { name: string }).name, 'bob');
  assert.ok(res.headers.getSetCookie().some((c) => c.startsWith(`remember_token_P${s.port}=`)));
});

test('logout ends the session, answers 204 and marks the browser as actively logged out', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  const { jar, body } = await browserLogin(s, 'bob', 'hunter22');
  // A cookie-authenticated logout needs the CSRF header like every other POST.
  const noCsrf = await asBrowser(s, jar, '/api/logout', { method: 'POST', csrf: null });
  assert.equal(noCsrf.status, 400);
  const out = await asBrowser(s, jar, '/api/logout', { method: 'POST' });
  assert.equal(out.status, 204);
  assert.equal(await out.text(), '');
  assert.ok(out.headers.getSetCookie().some((c) => c.startsWith(`active_logout_P${s.port}=true`)));
  assert.equal(s.access.identityForSession(String(body.session)), undefined);
  const me = await asBrowser(s, jar, '/api/currentuser');
  assert.deepEqual(await me.json(), { name: null, permissions: [], groups: ['guests'] });
  const anonymous = await s.api('/api/logout', { key: null, method: 'POST' });
  assert.equal(anonymous.status, 204);
});

test('remember-me logs a browser back in after its session is gone, until the password changes', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  const { jar } = await browserLogin(s, 'bob', 'hunter22', true);
  const remember = [...jar.cookies].find(([k]) => k.startsWith('remember_token_P'));
  assert.ok(remember, 'remember cookie set');
  const onlyRemember = new CookieJar();
  onlyRemember.cookies.set(remember[0], remember[1]);
  const me = await asBrowser(s, onlyRemember, '/api/currentuser');
  assert.equal((await me.json() as { name: string }).name, 'bob');
  const renewed = me.headers.getSetCookie().find((c) => c.startsWith(`session_P${s.port}=`));
  assert.ok(renewed, 'a new session cookie is issued');
  const forged = new CookieJar();
  forged.cookies.set(remember[0], remember[1].replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')));
  assert.equal((await (await asBrowser(s, forged, '/api/currentuser')).json() as { name: unknown }).name, null);
  await s.access.users.setPassword('bob', 'a-new-password');
  const after = await asBrowser(s, onlyRemember, '/api/currentuser');
  assert.equal((await after.json() as { name: unknown }).name, null);
});

test('passive login: guest record, key owner with a session, global key as _api', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  const anon = await s.api('/api/login', { key: null, method: 'POST', json: { passive: true } });
  assert.equal(anon.status, 200);
  assert.deepEqual(await anon.json(), { needs: { group: ['guests'] }, _is_external_client: false });

  const bobKey = await s.access.users.generateUserKey('bob');
  const res = await s.api('/api/login', { key: bobKey, method: 'POST', json: { passive: true } });
  const body = await res.json() as Record<string, unknown>;
  assert.equal(body.name, 'bob');
  assert.equal(body.apikey, bobKey);
  assert.equal(body._login_mechanism, 'apikey');
  assert.match(String(body.session), /^[0-9A-F]{32}$/);
  assert.equal(res.headers.getSetCookie().filter((c) => c.startsWith('session_')).length, 0, 'API-key logins set no cookie');
  assert.equal(s.access.identityForSession(String(body.session))?.name, 'bob');

  const global = await (await s.api('/api/login', { method: 'POST', json: { passive: true } })).json() as Record<string, unknown>;
  assert.equal(global.name, '_api');
  assert.deepEqual(global.groups, ['admins', 'users']);
  assert.equal(global.admin, true);
  assert.match(String(global.session), /^[0-9A-F]{32}$/);
  assert.equal(s.access.identityForSession(String(global.session))?.name, '_api');

  // A browser session answers passive logins with its own session.
  const { jar, body: login } = await browserLogin(s, 'bob', 'hunter22');
  const again = await (await asBrowser(s, jar, '/api/login', { method: 'POST', json: { passive: true } })).json() as Record<string, unknown>;
  assert.equal(again.name, 'bob');
  assert.equal(again.session, login.session);
});

test('passive login applies local autologin unless the browser logged out', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  await s.config.patch({ accessControl: { autologinLocal: true, autologinAs: 'bob' } });
  const res = await s.api('/api/login', { key: null, method: 'POST', json: { passive: true } });
  const body = await res.json() as Record<string, unknown>;
  assert.equal(body.name, 'bob');
  assert.equal(body._login_mechanism, 'autologin');
  const out = await s.api('/api/login', { key: null, method: 'POST', json: { passive: true }, headers: { Cookie: `active_logout_P${s.port}=true` } });
  assert.equal((await out.json() as { name?: string }).name, undefined);
});

test('repeated failed logins from one address are answered 429, even with correct credentials', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  for (let i = 0; i < 3; i++) {
    assert.equal((await s.api('/api/login', { key: null, method: 'POST', json: { user: 'bob', pass: 'nope' } })).status, 403);
  }
  const blocked = await s.api('/api/login', { key: null, method: 'POST', json: { user: 'bob', pass: 'hunter22' } });
  assert.equal(blocked.status, 429);
  assert.match(blocked.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(await blocked.json(), { error: 'You have made too many failed login attempts. Please try again later.' });
  // OctoPrint sends no Retry-After; Gantry adds the standard header (seconds) so a lockout can say how long it lasts.
  const wait = Number(blocked.headers.get('retry-after'));
  assert.ok(wait > 0 && wait <= 60, `Retry-After ${wait}`);
});

test('successful logins do not count towards the rate limit', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  for (let i = 0; i < 5; i++) {
    assert.equal((await s.api('/api/login', { key: null, method: 'POST', json: { user: 'bob', pass: 'hunter22' } })).status, 200);
  }
});

test('anonymous current user is the guest', async (t) => {
  const s = await startTestServer(t);
  const res = await s.api('/api/currentuser', { key: null });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { name: null, permissions: [], groups: ['guests'] });
  const api = await (await s.api('/api/currentuser')).json() as { name: string; permissions: string[] };
  assert.equal(api.name, '_api');
  assert.ok(api.permissions.includes('ADMIN') && api.permissions.includes('SETTINGS'));
});
