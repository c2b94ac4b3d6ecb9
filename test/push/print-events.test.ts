// A real print on the virtual printer seen through the push channel: the lifecycle events with their job payloads,
// `current` carrying the job, progress and busy files, and a client that stopped reading, which holds up nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { rawClient, sockjsClient, userWithKey, sleep } from './push-clients.ts';
import { SMALL_GCODE } from '../helpers/shared-data.ts';
import { needs } from '../helpers/tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

type Ev = { type: string; payload: Record<string, unknown> | null };
type Current = { job: { file: { name: string | null } }; progress: { completion: number | null }; busyFiles: Array<{ path: string }>; state: { text: string } };

test('PrintStarted/PrintDone and job progress reach clients during a print while a client that stopped reading blocks neither the print nor the others', { skip: needs('shared-data') }, async (t) => {
  const dir = await tempDir(t, 'gantry-print-events-');
  const server = await startTestServer(t, { settings: {
    devel: { virtualPrinter: { throttle: 0 } },
    // The placeholders that read the job (selected file) during a real print.
    events: { subscriptions: [{ event: 'PrintStarted', type: 'system', shell: true,
      command: `echo "{__filename}|{__filepath}|{__fileorigin}|{name}|{origin}" > ${dir}/started.txt` }] },
  } });
  const { auth, key } = await userWithKey(server, 'printer-fan');
  const raw = await rawClient(server);
  const sjs = await sockjsClient(server);
  const stalled = await rawClient(server);
  t.after(() => { raw.close(); sjs.close(); stalled.ws.terminate(); });
  // The reading clients leave out the plugin messages used below to swamp the stalled one.
  for (const c of [raw, sjs]) c.send({ subscribe: { state: { logs: true, messages: true }, events: true, plugins: false } });
  for (const c of [raw, sjs, stalled]) c.send({ auth });
  const closed: string[] = [];
  server.events.on('test', 'ClientClosed', (p) => closed.push(p.remoteAddress));
  await Promise.all([raw.next('history'), sjs.next('history'), stalled.next('history')]);
  stalled.ws.pause(); // stops reading (ws would resume a socket paused directly once its parser drains)

  assert.equal((await server.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL' } })).status, 204);
  await raw.next('event', (e: Ev) => e.type === 'Connected', { timeoutMs: 20_000 });

  const gcode = await readFile(SMALL_GCODE);
  const form = new FormData();
  form.append('file', new Blob([gcode]), 'small.gcode');
  form.append('print', 'true');
  const up = await server.api('/api/files/local', { method: 'POST', body: form, key });
  assert.equal(up.status, 201, await up.clone().text());

  const started = (await raw.next('event', (e: Ev) => e.type === 'PrintStarted', { timeoutMs: 20_000 })) as Ev;
  assert.equal(started.payload?.name, 'small.gcode');
  assert.equal(started.payload?.path, 'small.gcode');
  assert.equal(started.payload?.origin, 'local');
  assert.equal(started.payload?.size, gcode.length);
  // Mid-print, 32 MB meant for the stalled client alone: far beyond what the kernel buffers and the server may hold.
  const blob = 'x'.repeat(500_000);
  for (let i = 0; i < 64; i++) server.push.sendPlugin('flood', { i, blob });

  const done = (await raw.next('event', (e: Ev) => e.type === 'PrintDone', { timeoutMs: 120_000 })) as Ev;
  assert.equal(done.payload?.name, 'small.gcode');
  assert.equal(typeof done.payload?.time, 'number');
  await sjs.next('event', (e: Ev) => e.type === 'PrintDone', { timeoutMs: 20_000 });
  await raw.next('current', (c: Current) => c.progress.completion === 100 && c.state.text === 'Operational', { timeoutMs: 20_000 });
  // A `current` sent while the job ran names the file and lists it as busy (a fast print may fit in one tick).
  const startIdx = raw.messages.findIndex((m) => (m.event as Ev | undefined)?.type === 'PrintStarted');
  const doneIdx = raw.messages.findIndex((m) => (m.event as Ev | undefined)?.type === 'PrintDone');
  const during = raw.messages.slice(startIdx + 1, doneIdx).filter((m) => 'current' in m).map((m) => m.current as Current);
  for (const c of during.slice(1, -1)) { // the edges may be computed just before the batched event went out
    assert.equal(c.job.file.name, 'small.gcode');
    assert.ok(c.busyFiles.some((f) => f.path === 'small.gcode'), JSON.stringify(c.busyFiles));
  }
  const types = (raw.ofType('event') as Ev[]).map((e) => e.type);
  assert.ok(types.indexOf('PrintStarted') < types.indexOf('PrintDone'));
  assert.ok(!types.includes('PrintFailed'), types.join(','));
  // The stalled client was dropped; the reading ones are still served.
  const end = Date.now() + 20_000;
  while (server.push.clientCount > 2 && Date.now() < end) await sleep(50);
  assert.equal(server.push.clientCount, 2, 'the stalled client was dropped');
  assert.equal(closed.length, 1);
  assert.equal(raw.ofType('plugin').length, 0);
  server.events.emit('PrinterProfileAdded', { identifier: 'after-drop' });
  await sjs.next('event', (e: Ev) => e.type === 'PrinterProfileAdded');

  let startedTxt = '';
  for (let i = 0; i < 200 && !startedTxt.endsWith('\n'); i++) {
    startedTxt = await readFile(join(dir, 'started.txt'), 'utf8').catch(() => '');
    if (!startedTxt.endsWith('\n')) await sleep(50);
  }
  assert.equal(startedTxt, 'small.gcode|small.gcode|local|small.gcode|local\n');
});
