// Response schemas: every route declares one, and on a real server each JSON answer equals what its handler built.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer } from '../helpers/connected-server.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { checkedRoutes, routeTable } from '../helpers/wire-check.ts';
import { waitFor } from '../helpers/wait.ts';

test('every route declares what it answers', async (t) => {
  const s = await startTestServer(t);
  const table = routeTable(s.app);
  assert.ok(table.size > 80, `only ${table.size} routes seen`);
  // `OPTIONS *` is the CORS plugin's preflight answer, `/static/` the web UI's files (plugin routes, not the API's);
  // Moonraker's mirror (`/printer/…`, `/server/…`, …) answers in its own {result} wire, tested in test/moonraker/.
  const moonraker = /^[A-Z]+ \/(?:printer|server|machine|access)\//;
  const missing = [...table].filter(([route, statuses]) => statuses.length === 0 && !route.includes('/static/') && route !== 'OPTIONS *' && !moonraker.test(route)).map(([route]) => route);
  assert.deepEqual(missing, []);
});

/** Answers the route with a JSON body it checked; fails naming the route when the answer was not the one expected. */
async function call(s: TestServer, path: string, init: Parameters<TestServer['api']>[1] & { expect?: number } = {}): Promise<unknown> {
  const res = await s.api(path, init);
  const text = await res.text();
  const expect = init.expect ?? 200;
  assert.equal(res.status, expect, `${init.method ?? 'GET'} ${path}: ${res.status} ${text}`);
  return text === '' ? undefined : JSON.parse(text);
}

function upload(name: string, content: string, fields: Record<string, string> = {}): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.append(k, v);
  f.append('file', new Blob([content], { type: 'application/octet-stream' }), name);
  return f;
}

test('each JSON answer with a schema is exactly what the handler built (nothing dropped, nothing coerced)', async (t) => {
  const s = await connectedServer(t);
  const post = (json: unknown) => ({ method: 'POST', json });
  const gcode = 'G28\nG1 X10 Y10 Z0.2 E1 F1200\nG1 X20 Y20 E2\nM104 S0\n';

  // Printer and job.
  await call(s, '/api/printer?history=true&limit=5');
  await call(s, '/api/printer/tool?history=true');
  await call(s, '/api/printer/bed?history=true');
  await call(s, '/api/printer/sd');
  await call(s, '/api/printer/command/custom');
  await call(s, '/api/connection');
  await call(s, '/api/job');

  // Files: upload, folder, listings, entry, commands, test helper.
  await call(s, '/api/files/local', { method: 'POST', body: upload('part.gcode', gcode), expect: 201 });
  await call(s, '/api/files/local', { method: 'POST', body: (() => { const f = new FormData(); f.append('foldername', 'box'); return f; })(), expect: 201 });
  await call(s, '/api/files/local/part.gcode', { ...post({ command: 'copy', destination: 'box/copy.gcode' }), expect: 201 });
  await call(s, '/api/files?recursive=true');
  await call(s, '/api/files/local?recursive=true');
  await call(s, '/api/files/local/part.gcode');
  await call(s, '/api/files/local/box');
  await call(s, '/api/files/test', post({ command: 'sanitize', storage: 'local', path: '', filename: 'a b.gcode' }));
  await call(s, '/api/files/test', post({ command: 'exists', storage: 'local', path: '', filename: 'part.gcode' }));
  await call(s, '/api/files/local/part.gcode', { ...post({ command: 'select' }), expect: 204 });
  await call(s, '/api/job');

  // Settings, access, login.
  await call(s, '/api/settings');
  await call(s, '/api/settings', post({ appearance: { name: 'Schema test' } }));
  await call(s, '/api/settings/templates');
  await call(s, '/api/login', post({ passive: true }));
  await call(s, '/api/currentuser');
  await call(s, '/api/access/permissions');
  await call(s, '/api/access/groups');
  await call(s, '/api/access/groups/users');
  await call(s, '/api/access/groups', post({ key: 'crew', name: 'Crew', permissions: ['STATUS'] }));
  await call(s, '/api/access/groups/crew', { method: 'PUT', json: { description: 'the crew' } });
  await call(s, '/api/access/groups/crew', { method: 'DELETE' });
  await call(s, '/api/access/users');
  await call(s, '/api/access/users', post({ name: 'ada', password: 'correct horse', active: true, groups: ['users'] }));
  await call(s, '/api/access/users/ada');
  await call(s, '/api/access/users/ada', { method: 'PUT', json: { active: true } });
  await call(s, '/api/access/users/ada/settings', { method: 'PATCH', json: { interface: { color: 'blue' } } });
  await call(s, '/api/access/users/ada/settings');
  await call(s, '/api/access/users/ada/apikey', { method: 'POST' });
  await call(s, '/api/access/users/ada/apikey', { method: 'DELETE' });
  await call(s, '/api/access/users/ada/password', { method: 'PUT', json: { password: 'battery staple' } });
  await call(s, '/api/login', post({ user: 'ada', pass: 'battery staple' }));
  await call(s, '/api/access/users/ada', { method: 'DELETE' });

  // App keys and app sessions.
  const request = await call(s, '/plugin/appkeys/request', { ...post({ app: 'Schema test' }), key: null, expect: 201 }) as { app_token: string };
  await call(s, `/plugin/appkeys/request/${request.app_token}`, { key: null, expect: 202 });
  await call(s, '/api/plugin/appkeys');
  await call(s, '/api/plugin/appkeys', post({ command: 'generate', app: 'Schema test' }));
  await call(s, '/apps/auth', { key: null });

  // Profiles, slicing, system, logs, languages, timelapse, Gantry additions.
  await call(s, '/api/printerprofiles');
  await call(s, '/api/printerprofiles/_default');
  await call(s, '/api/printerprofiles', post({ profile: { id: 'box', name: 'Box', heatedChamber: true }, basedOn: '_default' }));
  await call(s, '/api/printerprofiles/box', { method: 'PATCH', json: { profile: { model: 'Boxed' } } });
  await call(s, '/api/slicing');
  await call(s, '/api/system/commands');
  await call(s, '/api/system/commands/core');
  await call(s, '/api/system/info');
  await call(s, '/api/logs');
  await call(s, '/plugin/logging/logs');
  await call(s, '/api/languages');
  await call(s, '/api/timelapse?unrendered=true');
  await call(s, '/api/timelapse', post({ type: 'off' }));
  await call(s, '/api/plugin/recovery');
  await call(s, '/plugin/gantry/history');
  await call(s, '/api/util/test', post({ command: 'path', path: s.baseDir, check_type: 'dir' }));
  await call(s, '/api/version');
  await call(s, '/api/server');

  // The chamber needs a profile with one.
  await call(s, '/api/connection', { ...post({ command: 'disconnect' }), expect: 204 });
  await call(s, '/api/connection', { ...post({ command: 'connect', port: 'VIRTUAL', baudrate: 115200, printerProfile: 'box' }), expect: 204 });
  await waitFor('Operational', async () => ((await call(s, '/api/connection')) as { current: { state: string } }).current.state === 'Operational');
  await call(s, '/api/printer/chamber?history=true');
  // Regenerating the global key is last: every call above uses it.
  await call(s, '/api/settings/apikey', { method: 'POST' });

  const expected = [
    'GET /api/printer', 'GET /api/printer/tool', 'GET /api/printer/bed', 'GET /api/printer/chamber', 'GET /api/printer/sd',
    'GET /api/printer/command/custom', 'GET /api/connection', 'GET /api/job',
    'POST /api/files/:location', 'POST /api/files/:location/*', 'GET /api/files', 'GET /api/files/:location', 'GET /api/files/:location/*',
    'POST /api/files/test',
    'GET /api/settings', 'POST /api/settings', 'GET /api/settings/templates', 'POST /api/login', 'GET /api/currentuser',
    'GET /api/access/permissions', 'GET /api/access/groups', 'GET /api/access/groups/:key', 'POST /api/access/groups',
    'PUT /api/access/groups/:key', 'DELETE /api/access/groups/:key', 'GET /api/access/users', 'POST /api/access/users',
    'GET /api/access/users/:name', 'PUT /api/access/users/:name', 'PATCH /api/access/users/:name/settings',
    'GET /api/access/users/:name/settings', 'POST /api/access/users/:name/apikey', 'DELETE /api/access/users/:name/apikey',
    'PUT /api/access/users/:name/password', 'DELETE /api/access/users/:name',
    'POST /plugin/appkeys/request', 'GET /plugin/appkeys/request/:token', 'GET /api/plugin/appkeys', 'POST /api/plugin/appkeys',
    'GET /apps/auth',
    'GET /api/printerprofiles', 'GET /api/printerprofiles/:id', 'POST /api/printerprofiles', 'PATCH /api/printerprofiles/:id',
    'GET /api/slicing', 'GET /api/system/commands', 'GET /api/system/commands/:source', 'GET /api/system/info',
    'GET /api/logs', 'GET /plugin/logging/logs', 'GET /api/languages', 'GET /api/timelapse', 'POST /api/timelapse',
    'GET /api/plugin/recovery', 'GET /plugin/gantry/history', 'POST /api/util/test', 'GET /api/version', 'GET /api/server',
    'POST /api/settings/apikey',
  ];
  assert.deepEqual(expected.filter((r) => !checkedRoutes.has(r)), [], 'routes whose answer was not checked against their schema');
});
