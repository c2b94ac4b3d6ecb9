// Notifications at a layer (PrintLayer, from layer progress's DisplayLayerProgress_layerChanged) on a real print, the
// farm queue's QueueWaitingForBedClear as an event a target can choose, and a target that never answers costing the
// print nothing: the same file on fakefw streams as fast with it as without (docs/reference/plugins.md §6).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectedServer, stateText } from '../helpers/connected-server.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';
import { needs } from '../helpers/tools.ts';
import { startLoggedFw } from '../recovery/fakefw.ts';

async function listener(t: { after(fn: () => unknown): void }, hang = false) {
  const got: Array<Record<string, unknown>> = [];
  const server: Server = createServer((req, res) => {
    let b = '';
    req.on('data', (d: Buffer) => { b += d.toString(); });
    req.on('end', () => {
      try { got.push(JSON.parse(b) as Record<string, unknown>); } catch { got.push({ raw: b }); }
      if (!hang) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => { server.closeAllConnections(); server.close(); });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got };
}

function layered(layers: number, moves: number): string {
  const out = ['G28', 'G90', 'M83'];
  for (let l = 1; l <= layers; l++) {
    out.push(';LAYER_CHANGE', `G1 Z${(l * 0.2).toFixed(2)} F600`);
    for (let k = 0; k < moves; k++) out.push(`G1 X${10 + (k % 40)} Y${10 + (l % 7)} E0.05 F6000`);
  }
  return out.join('\n') + '\n';
}

async function upload(s: TestServer, name: string, text: string, print = true): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([text]), name);
  if (print) form.append('print', 'true');
  assert.equal((await s.api('/api/files/local', { method: 'POST', body: form })).status, 201);
}

test('PrintLayer at the chosen layer of a real print, once; QueueWaitingForBedClear reaches the target that chose it', async (t) => {
  const hook = await listener(t);
  const other = await listener(t);
  const s = await connectedServer(t, {
    devel: { virtualPrinter: { throttle: 0.05, busyInterval: 0.2 } },
    plugins: { notifications: { progressStep: 0, layers: [3], targets: [
      { url: hook.url, events: ['PrintStarted', 'PrintLayer', 'PrintDone', 'QueueWaitingForBedClear'] },
      { url: other.url, events: ['PrintDone'] },
    ] } },
  });
  await upload(s, 'tower.gcode', layered(12, 40));
  await waitFor('PrintDone delivered', () => hook.got.some((g) => g.event === 'PrintDone') || undefined, 60_000);
  const events = hook.got.map((g) => g.event);
  assert.deepEqual(events, ['PrintStarted', 'PrintLayer', 'PrintDone'], 'in order, one layer message');
  const layer = hook.got[1];
  assert.ok(Number((layer.payload as { layer: number }).layer) >= 3);
  assert.match(String(layer.title), /layer \d+$/);
  assert.match(String(layer.message), /^tower\.gcode reached layer \d+ of 12 /);
  // The farm queue's event (src/farm's queue fires it; here the bus gets it as the queue would send it).
  (s.events.emit as (n: string, p: unknown) => void)('QueueWaitingForBedClear', { name: 'next.gcode', path: 'next.gcode' });
  await waitFor('the bed-clear message', () => hook.got.some((g) => g.event === 'QueueWaitingForBedClear') || undefined);
  const bed = hook.got.find((g) => g.event === 'QueueWaitingForBedClear')!;
  assert.match(String(bed.message), /before next\.gcode/);
  assert.ok(!other.got.some((g) => g.event === 'QueueWaitingForBedClear'));
});

/** One print of `name` on the server; its streaming time in seconds (PrintDone's time). */
async function timedPrint(s: TestServer, name: string): Promise<number> {
  const done = new Promise<number>((resolve) => {
    const off = s.events.on('test', 'PrintDone', (p) => { off(); resolve(p.time); });
  });
  assert.equal((await s.api(`/api/files/local/${name}`, { method: 'POST', json: { command: 'select', print: true } })).status, 204);
  const time = await done;
  await waitFor('Operational', async () => (await stateText(s)) === 'Operational' || undefined, 20_000);
  return time;
}

// Whether a dead target slows the stream is a figure for the bench (bench/plugins-stream.ts, notifications pair), not
// a timed test; here: the print on fakefw finishes while every request to the dead target is still unanswered.
test('a target that never answers holds up nothing: the print on fakefw finishes while its requests still hang', { skip: needs('shared-data', 'cc') }, async (t) => {
  const dead = await listener(t, true);
  const dir = await mkdtemp(join(tmpdir(), 'gantry-notify-dead-'));
  const port = join(dir, 'ttyUSB-printer');
  const fw = await startLoggedFw(port, ['-d', '200']);
  t.after(async () => { await fw.kill(); await rm(dir, { recursive: true, force: true }); });
  const s = await startTestServer(t, { settings: { serial: { additionalPorts: [port], log: false } } });
  assert.equal((await s.api('/api/connection', { method: 'POST', json: { command: 'connect', port, baudrate: 115200 } })).status, 204);
  await waitFor('Operational', async () => (await stateText(s)) === 'Operational' || undefined, 20_000);
  await upload(s, 'dead.gcode', layered(20, 50), false);
  const targets = [{ url: dead.url, events: ['PrintStarted', 'PrintProgress', 'PrintLayer', 'PrintDone'] }];
  assert.equal((await s.api('/api/settings', { method: 'POST', json: { plugins: { notifications: { progressStep: 1, layerStep: 1, retries: 0, timeout: 300, targets } } } })).status, 200);
  await timedPrint(s, 'dead.gcode');
  assert.ok(dead.got.length >= 1, 'the dead target was tried');
  assert.equal(await stateText(s), 'Operational', 'the print finished and the printer is ready');
});
