// Issue #53's isolation on real parts: three printers in one process (the virtual printer and two fakefw ptys at 1 ms a
// line), each its own Home Assistant device with distinct unique ids on a real Mosquitto; the default printer's link
// thread killed mid-print leaves the other two printing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Worker } from 'node:worker_threads';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { FAST_PRINTER, connectVirtual } from '../helpers/connected-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { needs } from '../helpers/tools.ts';
import { nextEvent, waitFor } from '../helpers/wait.ts';
import { uploadFile, smallGcode } from '../printer/job/helpers.ts';
import { startFakeFw } from '../transports/bench-tools.ts';
import { startBroker, Recorder } from '../mqtt/helpers.ts';

const LONG = 60_000;

const filepos = async (server: TestServer, base: string): Promise<number> => {
  const r = await server.api(`${base}/api/job`);
  const body = (await r.json()) as { state: string; progress: { filepos: number | null } };
  return body.progress.filepos ?? 0;
};

test('three printers: three Home Assistant devices, and one link thread killed leaves the other two printing', { skip: needs('shared-data', 'cc', 'mosquitto') }, async (t) => {
  const broker = await startBroker(t);
  const ha = await Recorder.connect(t, broker.url, ['homeassistant/#', 'gantry/#']);
  const dir = await tempDir(t, 'gantry-farm-fw-');
  // 1 ms a line: a 30,000-line print lasts at least 30 s on fakefw, however fast the machine.
  const fws = [await startFakeFw(`${dir}`, ['-d', '1000'])];
  const dir2 = await tempDir(t, 'gantry-farm-fw-');
  fws.push(await startFakeFw(dir2, ['-d', '1000']));
  t.after(async () => { for (const fw of fws) await fw.stop(); });

  const threads = new Map<string, Worker>();
  const server = await startTestServer(t, {
    settings: {
      ...FAST_PRINTER,
      serial: { log: false },
      plugins: { mqtt: { broker: { url: '127.0.0.1', port: broker.port }, gantry: { reconnectMin: 0.1, reconnectMax: 0.5 } } },
      printers: [
        { name: 'two', serialPort: fws[0].port, baudrate: 115200 },
        { name: 'three', serialPort: fws[1].port, baudrate: 115200, httpPort: 0 },
      ],
    },
    onLinkThread: (name, w) => threads.set(name, w),
  });
  await connectVirtual(server);
  for (const base of ['/printer/two', '/printer/three']) {
    await waitFor(`${base} operational`, async () => {
      const r = await server.api(`${base}/api/connection`);
      return ((await r.json()) as { current: { state: string } }).current.state === 'Operational';
    }, { timeoutMs: LONG });
  }

  // Home Assistant: three devices, each with its own ids, under three base topics.
  const connectedConfigs = () => ha.messages.filter((m) => /^homeassistant\/binary_sensor\/[^/]+_CONNECTED\/config$/.test(m.topic));
  await waitFor('three devices discovered', () => new Set(connectedConfigs().map((m) => JSON.stringify((m.json().device as { ids: unknown }).ids))).size === 3, { timeoutMs: LONG });
  const configs = connectedConfigs();
  const uniq = new Set(configs.map((m) => m.json().uniq_id));
  const bases = new Set(configs.map((m) => m.json()['~']));
  const names = new Set(configs.map((m) => (m.json().device as { name: string }).name));
  assert.equal(uniq.size, 3, `distinct unique ids: ${[...uniq].join(' ')}`);
  assert.equal(bases.size, 3, `distinct base topics: ${[...bases].join(' ')}`);
  assert.ok(names.has('two') && names.has('three'), [...names].join(', '));
  const mainBase = server.mqtt.status().base;
  assert.ok(mainBase && bases.has(mainBase) && bases.has(`${mainBase}printer/two/`), [...bases].join(' '));

  // All three print the same library file; the default printer's link thread is then killed.
  assert.equal((await uploadFile(server, 'long.gcode', smallGcode(30_000))).status, 201);
  for (const base of ['', '/printer/two', '/printer/three']) {
    const r = await server.api(`${base}/api/files/local/long.gcode`, { method: 'POST', json: { command: 'select', print: true } });
    assert.equal(r.status, 204, base);
  }
  const units = ['default', 'two', 'three'].map((n) => server.farm.get(n));
  await waitFor('all three printing', () => units.every((u) => u?.jobs.isPrinting()), { timeoutMs: LONG });
  const thread = threads.get('default');
  assert.ok(thread, 'the default printer runs its link in a thread');
  const failed = nextEvent(server.events, 'PrintFailed', undefined, LONG);
  await thread.terminate();
  await failed;
  await waitFor('the default printer stopped printing', () => !units[0]?.jobs.isPrinting(), { timeoutMs: LONG });

  // The other two go on: each streams a further 300 lines after the kill, still printing.
  const before = [await filepos(server, '/printer/two'), await filepos(server, '/printer/three')];
  await waitFor('two and three stream on', async () => {
    const now = [await filepos(server, '/printer/two'), await filepos(server, '/printer/three')];
    return now.every((p, i) => p > before[i] + 300 * 40);
  }, { timeoutMs: LONG });
  assert.ok(units[1]?.jobs.isPrinting() && units[2]?.jobs.isPrinting(), 'both still printing');
  for (const base of ['/printer/two', '/printer/three']) {
    assert.equal((await server.api(`${base}/api/job`, { method: 'POST', json: { command: 'cancel' } })).status, 204);
  }
  await waitFor('both cancelled', () => !units[1]?.jobs.isPrinting() && !units[2]?.jobs.isPrinting(), { timeoutMs: LONG });
});
