// Permission matrix: every route × {no key, wrong key, read-only user, operator user, admin}, checked against the
// route's declared config.access and the roles' permissions from the catalogue. Only the auth outcome is asserted
// (403 or not): the bodies sent are empty, so allowed calls may well be 400 or 404.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { registeredRoutes, type RouteInfo } from '../../src/http/auth.ts';
import { PERMISSIONS } from '../../src/access/permissions.ts';

interface Role { name: string; user?: string; groups?: string[]; key?: () => string | null; perms: Set<string> }

/** What a role may do according to the catalogue alone (ADMIN implies every permission). */
/** Moonraker's API (src/moonraker/): its own wire and access rules, tested in test/moonraker/. */
const MOONRAKER_ROUTE = /^\/(?:printer|server|machine|access)\//;
const permsOf = (group: string) => new Set(PERMISSIONS.filter((p) => p.defaultGroups.includes(group)).map((p) => p.key));
const ALL = new Set(PERMISSIONS.map((p) => p.key));

/** Routes that answer 403 for reasons other than the caller's permissions, each with the reason. */
const NOT_AUTH_403: Record<string, string> = {
  'POST /api/login': 'a wrong or missing user/password is 403 by design',
};

function expectedDenied(r: RouteInfo, role: Role): boolean {
  const rule = r.access;
  if (rule === 'public') return false;
  if (role.name === 'wrong key') return true; // an invalid key is refused on every route that is not public
  if (rule === 'anonymous') return false;
  if (role.name === 'none') return true; // guests hold no permissions by default
  if (rule === 'user') return false;
  const needed = Array.isArray(rule) ? rule : [String(rule)];
  return !needed.every((p) => role.perms.has(p));
}

test('every route × every role gets 403 exactly when its declared permission says so', { timeout: 120_000 }, async (t) => {
  const s: TestServer = await startTestServer(t);
  const roles: Role[] = [
    { name: 'none', key: () => null, perms: new Set() },
    { name: 'wrong key', key: () => 'NOT-A-VALID-KEY', perms: new Set() },
    { name: 'read-only', user: 'reader', groups: ['readonly'], perms: permsOf('readonly') },
    { name: 'operator', user: 'operator', groups: ['users'], perms: permsOf('users') },
    // The global key: an admin user could delete itself halfway through (that is allowed).
    { name: 'admin', key: () => s.config.current.api.key, perms: ALL },
  ];
  for (const role of roles.filter((r) => r.user)) {
    await s.access.users.addUser({ name: role.user!, password: `pw-${role.user}`, groups: role.groups });
    // A route may delete or replace the caller's own key (that is allowed); make one whenever it is gone.
    role.key = () => {
      const u = s.access.users.getUser(role.user!);
      return u?.apikey ?? null;
    };
    await s.access.users.generateUserKey(role.user!);
  }
  // The Moonraker edge's routes are `public` to this layer and check access themselves (test/moonraker/access.test.ts).
  const routes = registeredRoutes(s.app).filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS' && r.access !== undefined && !MOONRAKER_ROUTE.test(r.url));
  assert.ok(routes.length >= 60, `only ${routes.length} routes`);
  const wrong: string[] = [];
  let checked = 0;
  for (const role of roles) {
    for (const r of routes) {
      if (NOT_AUTH_403[`${r.method} ${r.url}`]) continue;
      if (role.user && !s.access.users.getUser(role.user)?.apikey) await s.access.users.generateUserKey(role.user);
      if (role.name === 'admin' && !s.config.current.api.key) await s.access.regenerateGlobalKey();
      // `:name` is the caller itself, so self-or-admin routes judge the permission, not the name (admin, last, uses the
      // read-only user's name).
      const path = r.url.replace(/:name\b/, role.user ?? 'reader').replace(/:[^/]+/g, 'x').replace(/\*/g, 'x');
      const body = ['POST', 'PUT', 'PATCH'].includes(r.method);
      const res = await s.api(path, { method: r.method, key: role.key!(), redirect: 'manual', ...(body ? { json: {} } : {}) });
      await res.arrayBuffer();
      const denied = res.status === 403;
      if (denied !== expectedDenied(r, role)) wrong.push(`${role.name}: ${r.method} ${r.url} (${JSON.stringify(r.access)}) → ${res.status}`);
      checked++;
    }
  }
  t.diagnostic(`${checked} route × role checks`);
  assert.deepEqual(wrong, []);
});
