// Client call sequences of test/e2e/compat (OctoRest, Home Assistant) against a server imported from fixture A, each with
// a key it had on the OctoPrint instance: no new pairing needed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { FAST_PRINTER, connectPrinter, form, json, smallGcode, waitFor, type Json } from '../e2e/compat/helpers.ts';
import { A, FIXTURE_DIR, SKIP, runImport } from './helpers.ts';

async function imported(t: TestContext): Promise<TestServer> {
  const { baseDir } = await runImport(t, FIXTURE_DIR);
  return startTestServer(t, { baseDir, settings: FAST_PRINTER });
}

const ok = (status: number) => status >= 200 && status < 210;

test('OctoRest with admin\'s personal key: version, files (imported ones listed, upload, delete), settings round trip, connection', { skip: SKIP }, async (t) => {
  const s = await imported(t);
  const key = A.users.admin.key;
  const v = await json<Json>(await s.api('/api/version', { key }));
  for (const k of ['api', 'server', 'text']) assert.ok(k in v, k);
  assert.ok(!ok((await s.api('/api/version', { key: 'bogus' })).status));

  const files = await json<Json>(await s.api('/api/files', { key }));
  assert.ok(Number.isInteger(files.free));
  assert.ok(files.files.some((f: Json) => f.name === 'prusaslicer-2.6.1_small.gcode' && f.prints?.success === 1));
  const up = await s.api('/api/files/local', { method: 'POST', body: form([], { name: 'bigben.gcode', content: smallGcode(10) }), key });
  assert.ok(ok(up.status));
  assert.equal((await json<Json>(up)).files.local.name, 'bigben.gcode');
  assert.ok(ok((await s.api('/api/files/local/bigben.gcode', { method: 'DELETE', key })).status));

  const before = await json<Json>(await s.api('/api/settings', { key }));
  assert.equal(before.appearance.name, 'Workshop A');
  const same = await json<Json>(await s.api('/api/settings', { method: 'POST', json: {}, key }));
  assert.deepEqual(same.appearance, before.appearance);
  assert.deepEqual(same.serial, before.serial);
  const renamed = await json<Json>(await s.api('/api/settings', { method: 'POST', json: { appearance: { name: 'OctoRest test' } }, key }));
  assert.equal(renamed.appearance.name, 'OctoRest test');

  const c = await json<Json>(await s.api('/api/connection', { key }));
  assert.ok(c.options.ports.includes('VIRTUAL'), 'the virtual printer stays on as in OctoPrint');
  assert.ok(c.options.printerProfiles.some((p: Json) => p.id === 'ender3'));
  assert.equal(c.options.printerProfilePreference, 'ender3');
});

test('Home Assistant with alice\'s app key: same device id, coordinator polling, connect, temperatures, print/pause/resume/cancel', { skip: SKIP }, async (t) => {
  const s = await imported(t);
  const key = A.users.alice.appKey;
  const st = await json<Json>(await s.api('/api/settings', { key }));
  assert.equal(st.plugins.discovery.upnpUuid, A.upnpUuid, 'Home Assistant finds the device it already has');

  const job = await json<Json>(await s.api('/api/job', { key }));
  assert.equal(typeof job.state, 'string');
  assert.equal((await s.api('/api/printer', { key })).status, 409, 'printer offline');

  await connectPrinter(s, key);
  const bed = await fetch(`${s.url}//api/printer/bed`, { method: 'POST', headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify({ command: 'target', target: 55, offset: 0 }) });
  assert.equal(bed.status, 204);
  assert.equal((await s.api('/api/printer/tool', { method: 'POST', json: { command: 'target', targets: { tool0: 190 } }, key })).status, 204);
  await waitFor('targets reported', async () => {
    const p = await json<Json>(await s.api('/api/printer', { key }));
    return (p.temperature.bed.target === 55 && p.temperature.tool0.target === 190) || undefined;
  });
  await s.api('/api/printer/tool', { method: 'POST', json: { command: 'target', targets: { tool0: 0 } }, key });
  await s.api('/api/printer/bed', { method: 'POST', json: { command: 'target', target: 0 }, key });

  assert.equal((await s.api('/api/files/local', { method: 'POST', body: form([['print', 'true']], { name: 'ha.gcode', content: smallGcode(3000) }), key })).status, 201);
  await waitFor('printing', async () => (await json<Json>(await s.api('/api/printer', { key }))).state.flags.printing || undefined);
  assert.equal((await s.api('/api/job', { method: 'POST', json: { command: 'pause', action: 'pause' }, key })).status, 204);
  await waitFor('paused', async () => (await json<Json>(await s.api('/api/printer', { key }))).state.flags.paused || undefined);
  assert.equal((await s.api('/api/job', { method: 'POST', json: { command: 'pause', action: 'resume' }, key })).status, 204);
  await waitFor('printing again', async () => (await json<Json>(await s.api('/api/printer', { key }))).state.flags.printing || undefined);
  assert.equal((await s.api('/api/job', { method: 'POST', json: { command: 'cancel' }, key })).status, 204);
  await waitFor('operational', async () => (await json<Json>(await s.api('/api/job', { key }))).state === 'Operational' || undefined, 15_000);
  // The cancelled print is in the file's history, next to the imported ones.
  await waitFor('history entry', async () => (await json<Json>(await s.api('/api/files/local/ha.gcode', { key }))).prints?.failure === 1 || undefined);
});
