// Home Assistant's OctoPrint integration over pyoctoprintapi: config flow (appkeys), coordinator polling, buttons,
// number entities and the double-slash URLs the library builds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { server, connectPrinter, form, json, smallGcode, waitFor, type Json } from './helpers.ts';
import type { TestServer } from '../../helpers/server.ts';

/** pyoctoprintapi's base URL always ends with "/"; some calls add another one. */
const get = (s: TestServer, path: string, key: string | null) => s.api(path, { key });

test('config flow: probe 204, request exactly 201 with Location, poll JSON 202 until api_key, then settings give the unique id', async (t) => {
  const s = await server(t);
  await s.access.users.addUser({ name: 'homeowner', password: 'ha-pass-123', groups: ['admins'] });
  const ownerKey = await s.access.users.generateUserKey('homeowner');
  const userTokens: string[] = [];
  s.access.appKeys.onRequest((r) => userTokens.push(r.userToken));

  assert.equal((await get(s, '/plugin/appkeys/probe', null)).status, 204);
  const req = await s.api('/plugin/appkeys/request', { key: null, method: 'POST', json: { app: 'Home Assistant', user: 'homeowner' } });
  assert.equal(req.status, 201, 'pyoctoprintapi requires exactly 201');
  const location = req.headers.get('location') ?? '';
  const id = location.slice(location.lastIndexOf('/') + 1);
  assert.match(id, /^[0-9A-Za-z]+$/);

  // Every poll is read with response.json(), also while pending.
  const pending = await get(s, `/plugin/appkeys/request/${id}`, null);
  assert.equal(pending.status, 202);
  const pendingBody = await json(pending);
  assert.ok(!('api_key' in pendingBody));

  await waitFor('request seen', () => userTokens[0]);
  assert.equal((await s.api(`/plugin/appkeys/decision/${userTokens[0]}`, { method: 'POST', json: { decision: true }, key: ownerKey })).status, 204);
  const granted = await json<{ api_key: string }>(await get(s, `/plugin/appkeys/request/${id}`, null));
  assert.equal(typeof granted.api_key, 'string');

  const settings = await get(s, '/api/settings', granted.api_key);
  assert.equal(settings.status, 200);
  const st = await json<Json>(settings);
  assert.equal(typeof st.plugins, 'object', 'plugins must exist (KeyError otherwise)');
  assert.equal(typeof st.plugins.discovery?.upnpUuid, 'string', 'plugins.discovery.upnpUuid = config entry unique id');
  assert.ok(st.plugins.discovery.upnpUuid.length > 0);
  for (const k of ['webcamEnabled', 'streamUrl', 'snapshotUrl', 'flipH', 'flipV', 'rotate90', 'snapshotSslValidation', 'bitrate']) {
    assert.ok(k in st.webcam, `webcam.${k}`);
  }
  // The unique id is stable across requests (a new id would create a second device).
  const again = await json<Json>(await get(s, '/api/settings', granted.api_key));
  assert.equal(again.plugins.discovery.upnpUuid, st.plugins.discovery.upnpUuid);

  // A key the server does not know → 403 → reauth flow.
  assert.equal((await get(s, '/api/settings', 'ABCDEF0123456789ABCDEF0123456789')).status, 403);
});

test('coordinator: job then printer every cycle; 409 = printer offline; all bodies are application/json', async (t) => {
  const s = await server(t);
  const key = s.apiKey;
  const job = await json<Json>(await get(s, '/api/job', key));
  assert.equal(typeof job.state, 'string');
  assert.ok(job.progress && typeof job.progress === 'object', 'progress must exist');
  assert.ok(job.job && job.job.file && typeof job.job.file === 'object', 'job.file must exist');
  for (const k of ['completion', 'printTimeLeft', 'printTime']) assert.ok(k in job.progress);
  for (const k of ['name', 'size']) assert.ok(k in job.job.file);
  assert.ok('estimatedPrintTime' in job.job);

  const offline = await get(s, '/api/printer', key);
  assert.equal(offline.status, 409, 'PrinterOffline');
  await json(offline);

  await connectPrinter(s);
  const printer = await json<Json>(await get(s, '/api/printer', key));
  assert.equal(typeof printer.state.text, 'string');
  for (const f of ['printing', 'error', 'paused', 'pausing', 'resuming', 'operational']) assert.equal(typeof printer.state.flags[f], 'boolean', f);
  // One sensor and one number entity per temperature key, each with actual/target/offset.
  const keys = Object.keys(printer.temperature);
  assert.ok(keys.includes('tool0') && keys.includes('bed'));
  for (const k of keys) {
    if (k === 'history') continue;
    for (const f of ['actual', 'target', 'offset']) assert.ok(f in printer.temperature[k], `temperature.${k}.${f}`);
  }
});

test('services and entities: connect 204, //api/printer/bed 204, api/printer/tool 204, pause/resume/cancel 204', async (t) => {
  // Paced so the print is still running when the cancel arrives, however loaded the machine (it once ended first: 409).
  const s = await server(t, { devel: { virtualPrinter: { throttle: 0.02, busyInterval: 0.2 } } });
  const key = s.apiKey;
  // The connect service sends only what the user filled in, here port + baudrate + autoconnect flags.
  const connect = await s.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL', baudrate: 115200, save: false, autoconnect: false }, key });
  assert.equal(connect.status, 204);
  await waitFor('Operational', async () => (await json<Json>(await get(s, '/api/connection', key))).current.state === 'Operational' || undefined);

  const bed = await fetch(`${s.url}//api/printer/bed`, { method: 'POST', headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify({ command: 'target', target: 55, offset: 0 }) });
  assert.equal(bed.status, 204, `double-slash bed answered ${bed.status} ${await bed.clone().text()}`);
  const tool = await s.api('/api/printer/tool', { method: 'POST', json: { command: 'target', targets: { tool0: 190 } }, key });
  assert.equal(tool.status, 204);
  await waitFor('targets reported', async () => {
    const p = await json<Json>(await get(s, '/api/printer', key));
    return p.temperature.bed.target === 55 && p.temperature.tool0.target === 190 || undefined;
  });
  await s.api('/api/printer/tool', { method: 'POST', json: { command: 'target', targets: { tool0: 0 } }, key });
  await fetch(`${s.url}//api/printer/bed`, { method: 'POST', headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify({ command: 'target', target: 0, offset: 0 }) });

  assert.equal((await s.api('/api/files/local', { method: 'POST', body: form([['print', 'true']], { name: 'ha.gcode', content: smallGcode(3000) }), key })).status, 201);
  await waitFor('printing', async () => (await json<Json>(await get(s, '/api/printer', key))).state.flags.printing || undefined);
  assert.equal((await s.api('/api/job', { method: 'POST', json: { command: 'pause', action: 'pause' }, key })).status, 204);
  await waitFor('paused', async () => (await json<Json>(await get(s, '/api/printer', key))).state.flags.paused || undefined);
  assert.equal((await s.api('/api/job', { method: 'POST', json: { command: 'pause', action: 'resume' }, key })).status, 204);
  await waitFor('printing again', async () => (await json<Json>(await get(s, '/api/printer', key))).state.flags.printing || undefined);
  assert.equal((await s.api('/api/job', { method: 'POST', json: { command: 'cancel' }, key })).status, 204);
  await waitFor('operational', async () => (await json<Json>(await get(s, '/api/job', key))).state === 'Operational' || undefined, 15_000);
});

test('system command buttons: //api/system/commands/core/restart answers 204 when the command is configured', async (t) => {
  const s = await server(t, { server: { commands: { serverRestartCommand: 'true' } } });
  const res = await fetch(`${s.url}//api/system/commands/core/restart`, { method: 'POST', headers: { 'X-Api-Key': s.apiKey } });
  assert.equal(res.status, 204, `restart answered ${res.status} ${await res.clone().text()}`);
});
