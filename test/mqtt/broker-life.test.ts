// The broker link's life: last will on kill -9 of a Gantry process, credentials and TLS, a broker restarted
// mid-print (the print unaffected, reconnect, state queued meanwhile flushed), and two default installs apart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startTestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';
import { Recorder, SKIP, startBroker } from './helpers.ts';
import { tempDir } from '../helpers/temp-dir.ts';

// The CLI from source through tsx (as the test runner itself runs), so the test needs no prior build of dist/.
const CLI = new URL('../../src/cli.ts', import.meta.url).pathname;

test('kill -9 of a Gantry process: the broker publishes the retained last will "disconnected"', { skip: SKIP }, async (t) => {
  const broker = await startBroker(t);
  const dir = await tempDir(t, 'gantry-mqtt-lwt-');
  await writeFile(join(dir, 'config.yaml'), stringify({
    api: { key: 'LWTTESTKEY' }, server: { uuid: '0123abcd-4567-89ef-0123-456789abcdef' },
    plugins: { mqtt: { broker: { url: '127.0.0.1', port: broker.port }, gantry: { reconnectMin: 0.1 } } },
  }));
  const rec = await Recorder.connect(t, broker.url, 'gantry/#');
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve', '--port', '0', '--basedir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  child.stdout.resume();
  child.stderr.resume();
  // Default base topic: gantry/<first 12 hex digits of the installation id>/.
  const lw = 'gantry/0123abcd4567/mqtt';
  const up = await rec.wait((m) => m.topic === lw && m.text === 'connected', 'connected from the child', 30_000);
  assert.equal(up.qos, 1);
  const from = rec.messages.length;
  child.kill('SIGKILL');
  const will = await rec.wait((m) => m.topic === lw, 'last will', 10_000, from);
  assert.equal(will.text, 'disconnected');
  const fresh = await Recorder.connect(t, broker.url, lw);
  const retained = await fresh.topic(lw);
  assert.deepEqual([retained.text, retained.retain], ['disconnected', true]);
});

test('username/password and TLS with the test CA; a wrong password keeps it off until fixed live; two default installs never collide', { skip: SKIP }, async (t) => {
  const broker = await startBroker(t, { users: { gantry: 's3cret-pw' }, tls: true });
  const watcher = await Recorder.connect(t, `mqtts://127.0.0.1:${broker.tlsPort}`, 'gantry/+/mqtt',
    { ca: await readFile(broker.caFile!), username: 'gantry', password: 's3cret-pw' });
  const mqttSettings = (password: string) => ({ plugins: { mqtt: {
    broker: { url: '127.0.0.1', port: broker.tlsPort, tls_active: true, tls: { ca_certs: broker.caFile }, username: 'gantry', password, protocol: 'MQTTv311' },
    gantry: { reconnectMin: 0.1, reconnectMax: 0.3 },
  } } });
  const a = await startTestServer(t, { settings: mqttSettings('wrong') });
  const b = await startTestServer(t, { settings: mqttSettings('s3cret-pw') });
  const baseA = a.mqtt.status().base!;
  const baseB = b.mqtt.status().base!;
  assert.notEqual(baseA, baseB, 'default base topics differ per installation');
  assert.match(baseA, /^gantry\/[0-9a-f]{12}\/$/);
  await watcher.wait((m) => m.topic === `${baseB}mqtt` && m.text === 'connected', 'b connected over TLS with credentials');
  assert.equal(a.mqtt.status().connected, false);
  assert.ok(!watcher.messages.some((m) => m.topic === `${baseA}mqtt`), 'a wrong password never connects');
  const res = await a.api('/api/settings', { method: 'POST', json: { plugins: { mqtt: { broker: { password: 's3cret-pw' } } } } });
  assert.equal(res.status, 200);
  await watcher.wait((m) => m.topic === `${baseA}mqtt` && m.text === 'connected', 'a connected once the password is fixed');
});

test('broker restarted mid-print: the print is unaffected, Gantry reconnects and flushes what it queued meanwhile', { skip: SKIP }, async (t) => {
  const broker = await startBroker(t);
  const server = await startTestServer(t, { settings: {
    devel: { virtualPrinter: { throttle: 0.1 } },
    plugins: { mqtt: { broker: { url: '127.0.0.1', port: broker.port }, publish: { baseTopic: 'octoPrint/' },
      // Gantry waits 2 s before it reconnects, so the subscriber made after the restart is there before the flush.
      gantry: { reconnectMin: 2, reconnectMax: 2, stateQos: 1, progressInterval: 0.2 } } },
  } });
  const rec = await Recorder.connect(t, broker.url, 'octoPrint/#', { reconnectPeriod: 0 });
  await rec.wait((m) => m.topic === 'octoPrint/mqtt' && m.text === 'connected', 'connected');
  const failed: string[] = [];
  server.events.on('test', 'PrintFailed', (p) => failed.push(String(p.reason)));
  const done = new Promise<void>((resolve) => server.events.on('test', 'PrintDone', () => resolve()));
  const zDuringOutage: number[] = [];
  const outage = { active: false };
  server.events.on('test', 'ZChange', (p) => { if (outage.active && !server.mqtt.status().connected) zDuringOutage.push(p.new); });

  assert.equal((await server.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL' } })).status, 204);
  await rec.topic('octoPrint/event/Connected', 'Connected', 20_000);
  const form = new FormData();
  const lines = ['G28', 'G90', 'M83'];
  for (let layer = 1; layer <= 60; layer++) lines.push(`G1 Z${(layer * 0.2).toFixed(1)} F600`, 'G1 X60 Y10 E1 F6000', 'G1 X10 Y10 E1 F6000');
  form.append('file', new Blob([lines.join('\n') + '\n']), 'layers.gcode');
  form.append('print', 'true');
  assert.equal((await server.api('/api/files/local', { method: 'POST', body: form })).status, 201);
  await rec.topic('octoPrint/event/PrintStarted', 'PrintStarted', 20_000);

  outage.active = true;
  await broker.stop();
  // Wait on the print itself: a layer change while the broker is away.
  const until = Date.now() + 20_000;
  while (zDuringOutage.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  assert.ok(zDuringOutage.length > 0, 'the print went on while the broker was away');
  assert.equal(server.mqtt.status().connected, false);
  assert.ok(server.mqtt.status().queued > 0, 'state was queued while the broker was away');
  await broker.start();
  const after = await Recorder.connect(t, broker.url, 'octoPrint/#');
  assert.equal(server.mqtt.status().connected, false, 'the subscriber is back before Gantry');
  await after.wait((m) => m.topic === 'octoPrint/mqtt' && m.text === 'connected', 'connected again', 15_000);
  const reconnectedAt = Date.now();
  // The last layer change from while the broker was away arrives now, with its own time (ZChange is retained, so the
  // queue keeps only the newest one, as a broker would).
  const flushed = await after.wait((m) => m.topic === 'octoPrint/event/ZChange' && m.json().new === zDuringOutage.at(-1),
    `the last ZChange from the outage (${zDuringOutage.join(',')})`, 15_000);
  assert.ok((flushed.json()._timestamp as number) * 1000 <= reconnectedAt, 'it carries the time it happened');
  assert.equal(flushed.qos, 1, 'state QoS 1 when configured');
  await done;
  assert.deepEqual(failed, []);
  await after.wait((m) => m.topic === 'octoPrint/event/PrintDone', 'PrintDone over MQTT', 15_000);
  // The outbox drains (a message published just now waits for the next turn of the loop: polled, not read once).
  await waitFor('the outbox to drain', () => server.mqtt.status().queued === 0);
});
