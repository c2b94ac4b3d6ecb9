// Payloads of the events our features produce, raised by the real actions: start-up, analysis, active and passive
// logins, push auth, position reports, a vanished printer, and connect/move/disconnect on the virtual printer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { waitFor } from '../printer/helpers.ts';
import { recorder, uploadFile, type Json } from '../printer/job/helpers.ts';
import { addUser, asBrowser, browserLogin } from '../access/helpers.ts';
import { rawClient, userWithKey } from './push-clients.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test('Startup, analysis, login/logout (active and passive), push auth, PositionUpdate and a connection Error carry their payloads', async (t) => {
  const dir = await tempDir(t, 'gantry-event-payloads-');
  const s = await startTestServer(t, { settings: {
    // Startup fires before a test could listen on the bus: a subscription sees it.
    events: { subscriptions: [{ event: 'Startup', type: 'system', shell: false, command: `touch ${dir}/started-{__eventname}` }] },
    devel: { virtualPrinter: { throttle: 0.001, disconnectAfterLines: 60 } },
  } });
  await waitFor('Startup subscription', () => readFile(join(dir, 'started-Startup')).then(() => true, () => undefined), 5000);
  const rec = recorder(s);
  const last = (name: string): Json | undefined => rec.events.filter((e) => e.name === name).at(-1)?.payload;

  // Analysis of an upload.
  assert.equal((await uploadFile(s, 'part.gcode', 'G28\nM83\nG1 X10 Y10 Z0.2 F3000\nG1 X30 E2.5 F1200\n')).status, 201);
  await waitFor('MetadataAnalysisFinished', () => last('MetadataAnalysisFinished'), 20_000);
  assert.deepEqual(last('MetadataAnalysisStarted'), { name: 'part.gcode', path: 'part.gcode', origin: 'local', type: 'gcode' });
  const finished = last('MetadataAnalysisFinished')!;
  assert.deepEqual({ ...finished, result: undefined }, { name: 'part.gcode', path: 'part.gcode', origin: 'local', result: undefined });
  assert.equal(finished.result.filament.tool0.length, 2.5);
  assert.ok(finished.result.estimatedPrintTime > 0);

  // Active login and logout.
  await addUser(s, 'carol', 'pw-carol');
  const { jar } = await browserLogin(s, 'carol', 'pw-carol');
  assert.deepEqual(last('UserLoggedIn'), { username: 'carol' });
  assert.equal((await asBrowser(s, jar, '/api/logout', { method: 'POST' })).status, 204);
  assert.deepEqual(last('UserLoggedOut'), { username: 'carol' });

  // Passive logins announce the user too: a browser's existing session, an API key (as farm managers do), basic auth.
  const { jar: jar2 } = await browserLogin(s, 'carol', 'pw-carol');
  const before = rec.events.filter((e) => e.name === 'UserLoggedIn').length;
  assert.equal((await asBrowser(s, jar2, '/api/login', { method: 'POST', json: { passive: true } })).status, 200);
  const carolKey = await s.access.users.generateUserKey('carol');
  assert.equal((await s.api('/api/login', { method: 'POST', json: { passive: true }, key: carolKey })).status, 200);
  await s.config.patch({ accessControl: { trustBasicAuthentication: true } });
  const basic = await s.api('/api/login', { method: 'POST', json: { passive: true }, key: null,
    headers: { Authorization: `Basic ${Buffer.from('carol:pw-carol').toString('base64')}` } });
  assert.equal(basic.status, 200);
  const passives = rec.events.filter((e) => e.name === 'UserLoggedIn').slice(before);
  assert.deepEqual(passives.map((e) => e.payload), [{ username: 'carol' }, { username: 'carol' }, { username: 'carol' }]);
  // An anonymous passive login is no login.
  assert.equal((await s.api('/api/login', { method: 'POST', json: { passive: true }, key: null })).status, 200);
  assert.equal(rec.events.filter((e) => e.name === 'UserLoggedIn').length, before + 3);

  // A push client authenticating.
  const { auth } = await userWithKey(s, 'dave');
  const push = await rawClient(s);
  t.after(() => push.close());
  push.send({ auth });
  await push.next('history');
  const authed = await waitFor('ClientAuthed', () => last('ClientAuthed'));
  assert.equal(authed.username, 'dave');
  assert.match(String(authed.remoteAddress), /^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/);

  // Position reports from the printer, then the printer vanishing (fault injection after 60 lines).
  assert.equal((await s.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL' } })).status, 204);
  await waitFor('Connected', () => last('Connected'), 10_000);
  await s.api('/api/printer/command', { method: 'POST', json: { commands: ['G28', 'G1 X12.5 Y20 Z5 F3000', 'M114'] } });
  const pos = await waitFor('PositionUpdate', () => last('PositionUpdate'), 5000);
  assert.deepEqual(pos, { x: 12.5, y: 20, z: 5, e: pos.e, t: 0, f: 3000, reason: null });
  assert.equal(typeof pos.e, 'number');
  for (let i = 0; i < 80 && !last('Error'); i++) {
    await s.api('/api/printer/command', { method: 'POST', json: { command: 'M105' } });
    await new Promise((r) => setTimeout(r, 20));
  }
  const error = await waitFor('Error', () => last('Error'), 10_000);
  assert.equal(typeof error.error, 'string');
  assert.ok(error.error.length > 0);
  assert.equal(error.reason, 'connection');
  // The server stays up and says so.
  const conn = await (await s.api('/api/connection')).json() as Json;
  assert.match(conn.current.state, /^(Error|Offline)/);
});

test('Connecting, FirmwareData, ZChange and Disconnecting from the virtual printer reach push clients with their payloads', async (t) => {
  const s = await startTestServer(t, { settings: { devel: { virtualPrinter: { throttle: 0 } } } });
  const { auth } = await userWithKey(s, 'watcher');
  const push = await rawClient(s);
  t.after(() => push.close());
  push.send({ auth });
  await push.next('history');
  type Ev = { type: string; payload: Json };
  const ev = (type: string, pred: (e: Ev) => boolean = () => true) =>
    push.next('event', (e: Ev) => e.type === type && pred(e), { timeoutMs: 20_000 }) as Promise<Ev>;

  assert.equal((await s.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL', baudrate: 115200 } })).status, 204);
  const connecting = await ev('Connecting');
  assert.equal(connecting.payload, null);
  const firmware = await ev('FirmwareData');
  assert.equal(firmware.payload.name, 'Marlin 2.1.2 (Gantry virtual printer)');
  assert.equal(firmware.payload.data.FIRMWARE_NAME, 'Marlin 2.1.2 (Gantry virtual printer)');
  assert.equal(typeof firmware.payload.data.EXTRUDER_COUNT, 'string');
  const order = (push.ofType('event') as Ev[]).map((e) => e.type);
  assert.ok(order.indexOf('Connecting') < order.indexOf('Connected') && order.indexOf('Connected') < order.indexOf('FirmwareData'), order.join(','));

  assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { commands: ['G28', 'G1 Z5 F3000', 'G1 Z7.5'] } })).status, 204);
  const z5 = await ev('ZChange', (e) => e.payload.new === 5);
  assert.deepEqual(Object.keys(z5.payload).sort(), ['new', 'old']);
  assert.ok(z5.payload.old === null || typeof z5.payload.old === 'number');
  const z75 = await ev('ZChange', (e) => e.payload.new === 7.5);
  assert.deepEqual(z75.payload, { new: 7.5, old: 5 });

  assert.equal((await s.api('/api/connection', { method: 'POST', json: { command: 'disconnect' } })).status, 204);
  const disconnecting = await ev('Disconnecting');
  assert.equal(disconnecting.payload, null);
  await ev('Disconnected');
  const after = (push.ofType('event') as Ev[]).map((e) => e.type);
  assert.ok(after.lastIndexOf('Disconnecting') < after.lastIndexOf('Disconnected'), after.join(','));
});
