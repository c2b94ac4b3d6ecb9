// FDM Monster (farm manager): passive login with a user key, raw /sockjs/websocket with name:session, REST polling,
// file management and ranged downloads, as its axios client and websocket adapter do them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { server, connectPrinter, form, json, smallGcode, waitFor, RawPush, type Json } from './helpers.ts';
import type { TestServer } from '../../helpers/server.ts';

async function farmUser(s: TestServer): Promise<string> {
  await s.access.users.addUser({ name: 'farm', password: 'farm-pass-123', groups: ['admins'] });
  return s.access.users.generateUserKey('farm');
}

/** The adapter's login: passive login, then currentuser; refuses `_api` and guests. */
async function socketCredentials(s: TestServer, key: string): Promise<{ user: string; session: string }> {
  const login = await s.api('/api/login', { method: 'POST', json: { passive: true }, key });
  assert.equal(login.status, 200);
  const body = await json<{ name: string; session: string; needs?: { group?: string[] } }>(login);
  assert.notEqual(body.name, '_api', 'a user key must not look like the global key');
  assert.notEqual(body.needs?.group?.[0], 'guests');
  assert.equal(typeof body.session, 'string');
  assert.ok(body.session.length > 0);
  const me = await json<{ name: string }>(await s.api('/api/currentuser', { key }));
  assert.equal(me.name, body.name);
  return { user: me.name, session: body.session };
}

test('test connection: /api/version `server`; passive login with the global key is recognisable as `_api`', async (t) => {
  const s = await server(t);
  const v = await json<{ server: string }>(await s.api('/api/version'));
  assert.equal(typeof v.server, 'string');
  const login = await json<{ name: string }>(await s.api('/api/login', { method: 'POST', json: { passive: true } }));
  assert.equal(login.name, '_api', 'FDM Monster warns "Global API Key detected" on this name');
});

test('websocket: connected first, auth name:session + throttle, then history and current with a non-empty temps array', async (t) => {
  const s = await server(t);
  const key = await farmUser(s);
  await connectPrinter(s, key);
  const { user, session } = await socketCredentials(s, key);

  const ws = await RawPush.open(s);
  t.after(() => ws.close());
  await ws.next('connected');
  assert.equal(ws.types()[0], 'connected');
  ws.send({ auth: `${user}:${session}` });
  ws.send({ throttle: 1 });
  const from = ws.messages.length;
  await ws.next('history', () => true, from);
  const current = await ws.next<Json>('current', (c) => Array.isArray(c.temps) && c.temps.length > 0, from);
  for (const k of ['state', 'job', 'progress', 'currentZ', 'offsets']) assert.ok(k in current, `current.${k}`);
  for (const f of ['printing', 'finishing', 'error', 'cancelling']) assert.equal(typeof current.state.flags[f], 'boolean', f);
  assert.ok('path' in current.job.file);
  assert.ok('estimatedPrintTime' in current.job);
  const temp = current.temps[0];
  assert.equal(typeof temp.time, 'number');
  assert.ok('tool0' in temp && 'actual' in temp.tool0 && 'target' in temp.tool0);
  // Every message is an object whose first key is its type.
  for (const m of ws.messages) assert.ok(['connected', 'reauthRequired', 'current', 'history', 'event', 'plugin', 'timelapse', 'slicingProgress'].includes(Object.keys(m)[0]), Object.keys(m)[0]);

  // A print shows up in current with a numeric completion and the file path.
  assert.equal((await s.api('/api/files/local', { method: 'POST', body: form([['print', 'true']], { name: 'farm.gcode', content: smallGcode(400) }), key })).status, 201);
  const printing = await ws.next<Json>('current', (c) => c.job?.file?.path === 'farm.gcode' && typeof c.progress?.completion === 'number', from, 20_000);
  assert.equal(printing.job.file.path, 'farm.gcode');
});

test('websocket: a stale session gets reauthRequired', async (t) => {
  const s = await server(t);
  const key = await farmUser(s);
  const ws = await RawPush.open(s);
  t.after(() => ws.close());
  await ws.next('connected');
  ws.send({ auth: 'farm:0123456789abcdef0123456789abcdef' });
  const reauth = await ws.next<{ reason: string }>('reauthRequired');
  assert.equal(typeof reauth.reason, 'string');
  // Re-login and re-auth works on the same socket.
  const { user, session } = await socketCredentials(s, key);
  const from = ws.messages.length;
  ws.send({ auth: `${user}:${session}` });
  await ws.next('current', () => true, from);
});

test('printer polling: 409 offline body has `error`; operational with history=true&limit', async (t) => {
  const s = await server(t);
  const key = await farmUser(s);
  const offline = await s.api('/api/printer?history=true&limit=5', { key });
  assert.equal(offline.status, 409);
  const err = await json<{ error: string }>(offline);
  assert.equal(typeof err.error, 'string');

  await connectPrinter(s, key);
  const conn = await json<{ current: { state: string } }>(await s.api('/api/connection', { key }));
  assert.equal(conn.current.state, 'Operational');
  const p = await json<Json>(await s.api('/api/printer?history=true&limit=5', { key }));
  assert.equal(p.state.flags.operational, true);
  assert.ok(Array.isArray(p.temperature.history));
  assert.ok(p.temperature.history.length <= 5);

  for (const [path, body] of [
    ['/api/printer/printhead', { command: 'jog', x: 1, y: 1, z: 0.2 }],
    ['/api/printer/printhead', { command: 'home', axes: ['x', 'y'] }],
    ['/api/printer/command', { command: 'M105' }],
    ['/api/printer/bed', { command: 'target', target: 0 }],
  ] as const) {
    const r = await s.api(path, { method: 'POST', json: body, key });
    assert.equal(r.status, 204, `${path} ${JSON.stringify(body)} → ${r.status}`);
  }
  const job = await json<Json>(await s.api('/api/job', { key }));
  assert.ok('progress' in job && 'job' in job);

  assert.equal((await s.api('/api/connection', { method: 'POST', json: { command: 'disconnect' }, key })).status, 204);
  await waitFor('offline', async () => (await s.api('/api/printer', { key })).status === 409 || undefined);
});

test('file management: folders, recursive listing, info, move, select, ranged download, delete', async (t) => {
  const s = await server(t);
  const key = await farmUser(s);
  const mk = await s.api('/api/files/local', { method: 'POST', body: form([['path', ''], ['foldername', 'batch']]), key });
  assert.equal(mk.status, 201);
  const content = smallGcode(50);
  assert.equal((await s.api('/api/files/local', { method: 'POST', body: form([], { name: 'part.gcode', content }), key })).status, 201);
  assert.equal((await s.api('/api/files/local', { method: 'POST', body: form([['path', 'batch']], { name: 'inner.gcode', content }), key })).status, 201);

  const tree = await json<{ files: Json[] }>(await s.api('/api/files/local?recursive=true', { key }));
  const folder = tree.files.find((f) => f.name === 'batch');
  assert.equal(folder?.type, 'folder');
  assert.ok(Array.isArray(folder.children));
  const inner = folder.children.find((f: Json) => f.name === 'inner.gcode');
  for (const k of ['name', 'path', 'size', 'date', 'type']) assert.ok(k in inner, `item.${k}`);
  assert.equal(inner.path, 'batch/inner.gcode');
  const flat = await json<{ files: Json[] }>(await s.api('/api/files/local?recursive=false', { key }));
  assert.equal(flat.files.find((f) => f.name === 'batch')?.type, 'folder');
  const dir = await json<{ children: Json[] }>(await s.api('/api/files/local/batch?recursive=false', { key }));
  assert.ok(dir.children.some((f) => f.name === 'inner.gcode'));

  const info = await json<Json>(await s.api('/api/files/local/part.gcode', { key }));
  assert.equal(info.path, 'part.gcode');
  assert.equal(info.size, Buffer.byteLength(content));
  assert.equal(typeof info.date, 'number');
  assert.equal(info.type, 'machinecode');

  const moved = await s.api('/api/files/local/part.gcode', { method: 'POST', json: { command: 'move', destination: 'batch' }, key });
  assert.equal(moved.status, 201);

  const ranged = await s.api('/downloads/files/local/batch/part.gcode', { headers: { Range: 'bytes=0-9' }, key });
  assert.equal(ranged.status, 206);
  assert.equal(await ranged.text(), content.slice(0, 10));
  const rest = await s.api('/downloads/files/local/batch/part.gcode', { headers: { Range: 'bytes=10-' }, key });
  assert.equal(rest.status, 206);
  assert.equal(await rest.text(), content.slice(10));

  // Selecting needs a ready printer (409 while disconnected, as OctoPrint does); the farm's printers are connected.
  assert.equal((await s.api('/api/files/local/batch/part.gcode', { method: 'POST', json: { command: 'select', print: false }, key })).status, 409);
  await connectPrinter(s, key);
  const sel = await s.api('/api/files/local/batch/part.gcode', { method: 'POST', json: { command: 'select', print: false }, key });
  assert.equal(sel.status, 204);
  const del = await s.api('/api/files/local/batch/inner.gcode', { method: 'DELETE', key });
  assert.equal(del.status, 204);

  // Settings write used for the printer's display name.
  const set = await s.api('/api/settings', { method: 'POST', json: { appearance: { name: 'Farm #1' } }, key });
  assert.equal(set.status, 200);
  assert.equal((await json<Json>(set)).appearance.name, 'Farm #1');
  for (const path of ['/api/printerprofiles', '/api/system/commands', '/api/access/users', '/api/server']) {
    const r = await s.api(path, { key });
    assert.equal(r.status, 200, path);
    await json(r);
  }
});
