// Cura's OctoPrint plugin (fieldOfView/Cura-OctoPrintPlugin): AppKeys pairing, key test, polling, upload + select/print.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { server, connectPrinter, form, json, smallGcode, waitFor, expectStatus, type Json } from './helpers.ts';
import type { TestServer } from '../../helpers/server.ts';

const CURA_UA = { 'User-Agent': 'Cura/5.3.0 OctoPrintPlugin/3.7.3' };

/** Cura's `_update`: GET printer then job, reading fields with direct `[]` access. */
async function poll(s: TestServer, key: string): Promise<{ printerStatus: number; flags?: Record<string, boolean>; jobState: string; job: Json }> {
  const p = await s.api('/api/printer', { key, headers: CURA_UA });
  let flags: Record<string, boolean> | undefined;
  if (p.status === 200) {
    const body = await json<{ temperature: Record<string, { actual: number | null; target: number | null }>; state: { flags: Record<string, boolean> } }>(p);
    flags = body.state.flags;
    for (const f of ['error', 'closedOrError', 'paused', 'pausing', 'printing', 'cancelling', 'ready', 'operational']) {
      assert.equal(typeof flags[f], 'boolean', `state.flags.${f}`);
    }
    assert.ok('tool0' in body.temperature, 'temperature.tool0');
    assert.ok('actual' in body.temperature.tool0 && 'target' in body.temperature.tool0);
    assert.ok('bed' in body.temperature);
  } else {
    assert.equal(p.status, 409, 'printer not operational must be 409');
    await json(p);
  }
  const j = await s.api('/api/job', { key, headers: CURA_UA });
  assert.equal(j.status, 200);
  const job = await json<Json>(j);
  assert.equal(typeof job.state, 'string');
  for (const k of ['printTime', 'completion', 'printTimeLeft']) assert.ok(k in job.progress, `progress.${k}`);
  assert.ok('name' in job.job.file, 'job.file.name');
  return { printerStatus: p.status, flags, jobState: job.state, job };
}

test('AppKeys pairing: probe 204, request 201/202 with app_token + Location, poll 202 → 200 api_key, key accepted by /api/settings', async (t) => {
  const s = await server(t);
  await s.access.users.addUser({ name: 'maker', password: 'maker-pass-1', groups: ['admins'] });
  const makerKey = await s.access.users.generateUserKey('maker');
  const userTokens: string[] = [];
  s.access.appKeys.onRequest((r) => userTokens.push(r.userToken));

  const probe = await s.api('/plugin/appkeys/probe', { key: null, headers: CURA_UA });
  assert.equal(probe.status, 204, 'Cura shows the "Request" button only on 204');

  const req = await s.api('/plugin/appkeys/request', { key: null, method: 'POST', json: { app: 'Cura' }, headers: CURA_UA });
  assert.ok(req.status === 201 || req.status === 202, `request answered ${req.status}`);
  const reqBody = await json<{ app_token: string; auth_dialog?: string }>(req);
  assert.equal(typeof reqBody.app_token, 'string');
  const location = req.headers.get('location');
  assert.ok(location, 'Location header = poll URL');
  // Cura fetches the Location as given (absolute URL).
  const pollUrl = new URL(location, s.url).toString();

  const pending = await fetch(pollUrl, { headers: CURA_UA });
  assert.equal(pending.status, 202);

  // The user allows the request (push message → decision in the web UI).
  await waitFor('request seen', () => userTokens[0]);
  const decided = await s.api(`/plugin/appkeys/decision/${userTokens[0]}`, { method: 'POST', json: { decision: true }, key: makerKey });
  assert.equal(decided.status, 204);

  const granted = await fetch(pollUrl, { headers: CURA_UA });
  assert.equal(granted.status, 200);
  const { api_key: appKey } = await json<{ api_key: string }>(granted);
  assert.equal(typeof appKey, 'string');

  // Key test: 200 = accepted, and the fields Cura reads.
  const settings = await s.api('/api/settings', { key: appKey, headers: CURA_UA });
  assert.equal(settings.status, 200);
  const st = await json<Json>(settings);
  assert.equal(typeof st.feature.sdSupport, 'boolean');
  assert.ok('streamUrl' in st.webcam);
  for (const k of ['rotate90', 'flipH', 'flipV']) assert.equal(typeof st.webcam[k], 'boolean', `webcam.${k}`);
  assert.equal(typeof st.gcodeAnalysis.runAt, 'string');
  assert.equal(typeof st.plugins, 'object');

  // An invalid key: Cura tells 401/403 apart from "not running" (502/503).
  const badKey = await s.api('/api/settings', { key: 'NOTAKEY', headers: CURA_UA });
  assert.ok(badKey.status === 401 || badKey.status === 403, `invalid key answered ${badKey.status}`);
});

test('connect flow: version, passive login name, printer profiles, 409 while offline, auto-connect 204, then polling', async (t) => {
  const s = await server(t);
  const key = s.apiKey;
  const version = await json<{ server: string }>(await s.api('/api/version', { headers: CURA_UA }));
  assert.equal(typeof version.server, 'string');

  const login = await s.api('/api/login', { method: 'POST', json: { passive: true }, headers: CURA_UA });
  assert.equal(login.status, 200);
  assert.equal(typeof (await json<{ name: string }>(login)).name, 'string');

  const profiles = await json<{ profiles: Json }>(await s.api('/api/printerprofiles', { headers: CURA_UA }));
  const list = Object.values(profiles.profiles);
  assert.ok(list.some((p) => p.current === true), 'a current profile');
  for (const p of list) {
    assert.equal(typeof p.name, 'string');
    assert.ok('model' in p);
    for (const axis of ['x', 'y', 'z', 'e']) {
      assert.equal(typeof p.axes[axis].speed, 'number');
      assert.equal(typeof p.axes[axis].inverted, 'boolean');
    }
  }

  const offline = await poll(s, key);
  assert.equal(offline.printerStatus, 409);
  assert.match(offline.jobState, /^(Offline|Closed)/);

  await connectPrinter(s);
  const online = await poll(s, key);
  assert.equal(online.printerStatus, 200);
  assert.equal(online.flags?.operational, true);
  assert.equal(online.jobState, 'Operational');

  const cmd = await s.api('/api/printer/command', { method: 'POST', json: { commands: ['M105', 'G28 X'] }, headers: CURA_UA });
  await expectStatus(cmd, 204, 'printer/command');
  assert.equal(await cmd.text(), '');
});

test('upload with select, Location split on "api/", select+print via that endpoint, pause, 409 for the printing name, cancel', async (t) => {
  const s = await server(t);
  await connectPrinter(s);
  const name = 'cura_job.gcode';
  const upload = await s.api('/api/files/local', {
    method: 'POST', headers: CURA_UA,
    body: form([['path', '']], { name, content: smallGcode(3000) }, [['select', 'true']]),
  });
  await expectStatus(upload, 201, 'upload');
  const location = upload.headers.get('location');
  assert.ok(location, 'Location header required');
  assert.ok(location.includes(`api/files/local/${name}`), location);
  const endPoint = location.split('api/').slice(1).join('api/');
  assert.equal(endPoint, `files/local/${name}`);

  const selected = await json<{ job: { file: { name: string } } }>(await s.api('/api/job'));
  assert.equal(selected.job.file.name, name, 'select=true selects the upload');

  const print = await s.api(`/api/${endPoint}`, { method: 'POST', json: { command: 'select', print: true }, headers: CURA_UA });
  await expectStatus(print, 204, 'select+print');
  await waitFor('Printing', async () => (await poll(s, s.apiKey)).flags?.printing || undefined);

  const pause = await s.api('/api/job', { method: 'POST', json: { command: 'pause' }, headers: CURA_UA });
  await expectStatus(pause, 204, 'pause');
  await waitFor('Paused', async () => (await poll(s, s.apiKey)).jobState === 'Paused' || undefined);

  const again = await s.api('/api/files/local', { method: 'POST', headers: CURA_UA, body: form([['path', '']], { name, content: smallGcode(10) }) });
  assert.equal(again.status, 409, 'same name as the file being printed');

  const info = await s.api(`/api/files/local/${name}`, { headers: CURA_UA });
  assert.equal(info.status, 200);
  const infoBody = await json<Json>(info);
  assert.equal(infoBody.name, name);

  const cancel = await s.api('/api/job', { method: 'POST', json: { command: 'cancel' }, headers: CURA_UA });
  await expectStatus(cancel, 204, 'cancel');
  await waitFor('Operational after cancel', async () => (await poll(s, s.apiKey)).jobState === 'Operational' || undefined, 15_000);
});

test('QHttpMultiPart body as Cura builds it: text/plain `path` part, octet-stream file, select/print parts after the file', async (t) => {
  const s = await server(t);
  await connectPrinter(s);
  const boundary = 'boundary_.oOo._MTk0NzUxNjc1OA==MTk5NTkzMTAxNQ==';
  const part = (headers: string[], body: string) => `--${boundary}\r\n${headers.join('\r\n')}\r\n\r\n${body}\r\n`;
  const body = part(['Content-Type: text/plain', 'Content-Disposition: form-data; name="path"'], '')
    + part(['Content-Disposition: form-data; name="file"; filename="UM3_cube.gcode"', 'Content-Type: application/octet-stream'], smallGcode(3000))
    + part(['Content-Disposition: form-data; name="select"'], 'true')
    + part(['Content-Disposition: form-data; name="print"'], 'true')
    + `--${boundary}--\r\n`;
  const res = await s.api('/api/files/local', { method: 'POST', headers: { ...CURA_UA, 'Content-Type': `multipart/form-data; boundary="${boundary}"` }, body });
  await expectStatus(res, 201, 'Qt multipart upload');
  assert.ok(res.headers.get('location')?.includes('api/files/local/UM3_cube.gcode'));
  await waitFor('printing UM3_cube.gcode', async () => {
    const job = (await poll(s, s.apiKey)).job;
    return job.job.file.name === 'UM3_cube.gcode' && job.state.startsWith('Printing') || undefined;
  });
  assert.equal((await s.api('/api/job', { method: 'POST', json: { command: 'cancel' } })).status, 204);
  await waitFor('cancelled', async () => (await poll(s, s.apiKey)).jobState === 'Operational' || undefined, 15_000);
});
