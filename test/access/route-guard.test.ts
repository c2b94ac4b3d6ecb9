// Walks every registered route: anonymous callers, invalid keys and users lacking the declared permission get 403.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { registeredRoutes, type RouteInfo } from '../../src/http/auth.ts';
import { permissionByKey } from '../../src/access/permissions.ts';
import { addUser } from './helpers.ts';

const OPEN = new Set(['public', 'anonymous']);

/** A concrete path for a route pattern (parameters and wildcards filled with a harmless value). */
const concrete = (url: string) => url.replace(/:[^/]+/g, 'x').replace(/\*/g, 'x');

function guarded(s: TestServer): RouteInfo[] {
  return registeredRoutes(s.app).filter((r) => r.access !== undefined && !OPEN.has(String(r.access)) && r.method !== 'HEAD' && r.method !== 'OPTIONS');
}

const send = (s: TestServer, r: RouteInfo, key: string | null) =>
  s.api(concrete(r.url), { key, method: r.method, redirect: 'manual', ...(['POST', 'PUT', 'PATCH'].includes(r.method) ? { json: {} } : {}) });

test('every guarded route refuses anonymous callers with 403 JSON', async (t) => {
  const s = await startTestServer(t);
  const routes = guarded(s);
  assert.ok(routes.length >= 20, `found ${routes.length} guarded routes`);
  for (const r of routes) {
    const res = await send(s, r, null);
    assert.equal(res.status, 403, `${r.method} ${r.url}`);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/, `${r.method} ${r.url}`);
    assert.ok((await res.json() as { error?: string }).error, `${r.method} ${r.url}`);
  }
});

test('an invalid API key is refused on every /api route, open ones included', async (t) => {
  const s = await startTestServer(t);
  const apiRoutes = registeredRoutes(s.app).filter((r) => r.url.startsWith('/api') && r.access !== undefined && r.method !== 'HEAD' && r.method !== 'OPTIONS');
  for (const r of apiRoutes) {
    const res = await send(s, r, 'NOT-A-KEY');
    assert.equal(res.status, 403, `${r.method} ${r.url}`);
    assert.deepEqual(await res.json(), { error: 'Invalid API key' }, `${r.method} ${r.url}`);
  }
  // Public app endpoints ignore keys altogether.
  assert.equal((await s.api('/plugin/appkeys/probe', { key: 'NOT-A-KEY' })).status, 204);
});

test('a read-only user gets 403 on every route whose permission the group lacks', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'rita', 'pw-rita', ['readonly']);
  const key = await s.access.users.generateUserKey('rita');
  const rita = s.access.identityForApiKey(key);
  assert.ok(rita);
  let denied = 0;
  for (const r of guarded(s)) {
    const needed = Array.isArray(r.access) ? r.access : [String(r.access)];
    if (needed.includes('user') || needed.every((p) => rita.has(p))) continue;
    for (const p of needed) assert.ok(p === 'user' || permissionByKey(p), `${r.method} ${r.url} names an unknown permission ${p}`);
    const res = await send(s, r, key);
    assert.equal(res.status, 403, `${r.method} ${r.url} (${needed.join(',')})`);
    denied++;
  }
  assert.ok(denied >= 10, `checked ${denied} routes`);
  // Sanity: what read-only users may do still works.
  assert.equal((await s.api('/api/version', { key })).status, 200);
});

test('with access control off, anonymous callers and unknown keys act as admin', async (t) => {
  const s = await startTestServer(t, { settings: { accessControl: { enabled: false } } });
  assert.equal((await s.api('/api/access/users', { key: null })).status, 200);
  assert.equal((await s.api('/api/access/groups', { key: 'whatever' })).status, 200);
  const me = await (await s.api('/api/currentuser', { key: null })).json() as { permissions: string[] };
  assert.ok(me.permissions.includes('ADMIN'));
  // Push clients still get a name and a session to authenticate their socket with.
  const login = await (await s.api('/api/login', { key: null, method: 'POST', json: { passive: true } })).json() as { name: string; session: string };
  assert.equal(login.name, 'admin');
  assert.equal(s.access.identityForSession(login.session)?.has('ADMIN'), true);
});
