// OctoPod (iOS): its HTTP client compares every answer with one exact expected status; raw websocket with name:session.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { server, connectPrinter, form, json, smallGcode, waitFor, RawPush, type Json } from './helpers.ts';

test('pairing: probe 204, request 201 + Location, poll 202 then 200 api_key, a denied request polls 404', async (t) => {
  const s = await server(t);
  await s.access.users.addUser({ name: 'phone', password: 'phone-pass-1', groups: ['admins'] });
  const phoneKey = await s.access.users.generateUserKey('phone');
  const tokens: string[] = [];
  s.access.appKeys.onRequest((r) => tokens.push(r.userToken));
  assert.equal((await s.api('/plugin/appkeys/probe', { key: null })).status, 204);

  const ask = async () => {
    const r = await s.api('/plugin/appkeys/request', { key: null, method: 'POST', json: { app: 'OctoPod' } });
    assert.equal(r.status, 201);
    const loc = r.headers.get('location');
    assert.ok(loc);
    return new URL(loc, s.url).toString();
  };
  const granted = await ask();
  assert.equal((await fetch(granted)).status, 202);
  await waitFor('request', () => tokens[0]);
  assert.equal((await s.api(`/plugin/appkeys/decision/${tokens[0]}`, { method: 'POST', json: { decision: true }, key: phoneKey })).status, 204);
  const ok = await fetch(granted);
  assert.equal(ok.status, 200);
  assert.equal(typeof (await json<Json>(ok)).api_key, 'string');

  const denied = await ask();
  await waitFor('second request', () => tokens[1]);
  assert.equal((await s.api(`/plugin/appkeys/decision/${tokens[1]}`, { method: 'POST', json: { decision: false }, key: phoneKey })).status, 204);
  assert.equal((await fetch(denied)).status, 404);
});

test('dashboard: the GETs it makes all answer 200 JSON; every command answers exactly 204; upload exactly 201', async (t) => {
  const s = await server(t, { server: { commands: { serverRestartCommand: 'true' } } });
  await connectPrinter(s);
  for (const path of ['/api/version', '/api/connection', '/api/job', '/api/printer', '/api/settings', '/api/printerprofiles',
    '/api/system/commands', '/api/printer/command/custom', '/api/files/local?recursive=true']) {
    const r = await s.api(path);
    assert.equal(r.status, 200, path);
    await json(r);
  }

  const up = await s.api('/api/files/local', { method: 'POST', body: form([], { name: 'pod.gcode', content: smallGcode(3000) }) });
  assert.equal(up.status, 201);
  for (const [path, body] of [
    ['/api/printer/bed', { command: 'target', target: 0 }],
    ['/api/printer/tool', { command: 'target', targets: { tool0: 0 } }],
    ['/api/printer/tool', { command: 'extrude', amount: 1 }],
    ['/api/printer/printhead', { command: 'jog', x: 5, y: 5, z: 1 }],
    ['/api/printer/printhead', { command: 'feedrate', factor: 100 }],
    ['/api/printer/tool', { command: 'flowrate', factor: 100 }],
    ['/api/printer/command', { commands: ['M105'] }],
    ['/api/printer/sd', { command: 'refresh' }],
    ['/api/files/local/pod.gcode', { command: 'select', print: true }],
  ] as const) {
    const r = await s.api(path, { method: 'POST', json: body });
    if (path === '/api/printer/sd' && !s.config.current.feature.sdSupport) {
      // SD support off (fixture A, imported): OctoPrint's 404 with a reason, which OctoPod shows.
      assert.equal(r.status, 404);
      assert.equal((await json<Json>(r)).error, 'SD support is disabled');
      continue;
    }
    assert.equal(r.status, 204, `${path} ${JSON.stringify(body)}: ${r.status} ${await r.clone().text()}`);
    assert.equal(await r.text(), '');
  }
  await waitFor('printing', async () => (await json<Json>(await s.api('/api/printer'))).state.flags.printing || undefined);
  for (const body of [{ command: 'pause', action: 'pause' }, { command: 'pause', action: 'resume' }, { command: 'cancel' }]) {
    const r = await s.api('/api/job', { method: 'POST', json: body });
    assert.equal(r.status, 204, JSON.stringify(body));
    if (body.command === 'pause' && body.action === 'pause') await waitFor('paused', async () => (await json<Json>(await s.api('/api/job'))).state === 'Paused' || undefined);
  }
  await waitFor('operational', async () => (await json<Json>(await s.api('/api/job'))).state === 'Operational' || undefined, 15_000);
  assert.equal((await s.api('/api/files/local/pod.gcode', { method: 'DELETE' })).status, 204);
  assert.equal((await s.api('/api/system/commands/core/restart', { method: 'POST' })).status, 204);
  assert.equal((await s.api('/api/connection', { method: 'POST', json: { command: 'disconnect' } })).status, 204);
});

test('websocket: name:session from passive login; current.temps[0] and PrinterStateChanged events', async (t) => {
  const s = await server(t);
  await s.access.users.addUser({ name: 'ios', password: 'ios-pass-123', groups: ['users'] });
  const key = await s.access.users.generateUserKey('ios');
  const login = await s.api('/api/login', { method: 'POST', json: { passive: true }, key });
  assert.equal(login.status, 200);
  const { name, session } = await json<{ name: string; session: string }>(login);
  assert.equal(name, 'ios');

  const ws = await RawPush.open(s);
  t.after(() => ws.close());
  await ws.next('connected');
  ws.send({ auth: `${name}:${session}` });
  await ws.next('history', (h) => Array.isArray(h.temps));
  const from = ws.messages.length;
  await connectPrinter(s, key);
  const changed = await ws.next<Json>('event', (e) => e.type === 'PrinterStateChanged' && e.payload?.state_id === 'OPERATIONAL', from);
  assert.equal(typeof changed.payload.state_string, 'string');
  const current = await ws.next<Json>('current', (c) => c.state?.flags?.operational === true && Array.isArray(c.temps) && c.temps.length > 0, from);
  assert.equal(typeof current.state.text, 'string');
  for (const f of ['operational', 'paused', 'pausing', 'printing', 'cancelling', 'closedOrError']) assert.equal(typeof current.state.flags[f], 'boolean', f);
  const t0 = current.temps[0];
  assert.equal(typeof t0.time, 'number');
  assert.equal(typeof t0.tool0.actual, 'number');
  assert.ok('target' in t0.bed);
  assert.ok('currentZ' in current && Array.isArray(current.logs));
  for (const k of ['completion', 'printTime', 'printTimeLeft']) assert.ok(k in current.progress, `progress.${k}`);
});
