// Streaming with the built-in plugins on versus off: the same file printed on fakefw (-d 0, a real pty) by a Gantry with
// layer progress's M117/M73 on (1 s interval) and by one with both off, and a labelled file with an object cancelled
// versus nothing cancelled (the skip filter runs either way), and notifications to a target that never answers versus
// none (#55: a dead target changes nothing for the print); interleaved pairs, the median ratio of lines per second.
// Usage: npx tsx bench/plugins-stream.ts [file.gcode]   Env: BENCH_REPEATS (3), GANTRY_SHARED (where bench/fakefw.c is).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { startGantry } from '../src/main.ts';
import { startFakeFw } from '../test/transports/bench-tools.ts';
import { SMALL_GCODE } from '../test/helpers/shared-data.ts';

const REPEATS = Math.max(1, Number(process.env.BENCH_REPEATS ?? 3));

async function printOnce(gcode: string, plugins: Record<string, unknown>, cancel: number | null): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-pbench-'));
  const fw = await startFakeFw(dir, ['-d', '0']);
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (() => true) as typeof process.stdout.write;
  const g = await startGantry({ baseDir: join(dir, 'base'), host: '127.0.0.1', port: 0, settings: { serial: { additionalPorts: [fw.port], log: false }, plugins } });
  process.stdout.write = write;
  try {
    const key = g.config.current.api.key ?? '';
    const api = (path: string, json?: unknown) => fetch(g.url + path, { method: json === undefined ? 'GET' : 'POST', headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' }, body: json === undefined ? undefined : JSON.stringify(json) });
    await api('/api/connection', { command: 'connect', port: fw.port, baudrate: 115200 });
    while (((await (await api('/api/connection')).json()) as { current: { state: string } }).current.state !== 'Operational') await new Promise((r) => setTimeout(r, 100));
    const form = new FormData();
    form.append('file', new Blob([gcode]), 'bench.gcode');
    await fetch(g.url + '/api/files/local', { method: 'POST', headers: { 'X-Api-Key': key }, body: form });
    while (!((await (await api('/api/files/local/bench.gcode')).json()) as { gcodeAnalysis?: unknown }).gcodeAnalysis) await new Promise((r) => setTimeout(r, 100));
    let done = false;
    // Cancelling the only object of a file cancels the print: a cancelled print ends the timing too (and says so).
    for (const end of ['PrintDone', 'PrintCancelled', 'PrintFailed'] as const) g.events.on('bench', end, () => { done = true; });
    const t0 = performance.now();
    await api('/api/files/local/bench.gcode', { command: 'select', print: true });
    if (cancel !== null) await api('/api/plugin/cancelobject', { command: 'cancel', cancelled: cancel });
    while (!done) await new Promise((r) => setTimeout(r, 20));
    return performance.now() - t0;
  } finally {
    await g.stop();
    await fw.stop();
    await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }).catch(() => undefined);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const file = process.argv[2] ?? SMALL_GCODE;
const gcode = await readFile(file, 'utf8');
const on = { DisplayLayerProgress: { gantry: { m117: { enabled: true, interval: 1 }, m73: { enabled: true, interval: 1 } } } };
const off = { DisplayLayerProgress: { gantry: { m117: { enabled: false }, m73: { enabled: false } } } };
const ratios: number[] = [];
for (let i = 0; i < REPEATS; i++) {
  const a = await printOnce(gcode, off, null);
  const b = await printOnce(gcode, on, null);
  ratios.push(a / b);
  console.log(`layer progress pair ${i + 1}: off ${a.toFixed(0)} ms, on ${b.toFixed(0)} ms, on/off rate ${(a / b).toFixed(3)}`);
}
console.log(`layer progress on / off, lines per second (median of ${REPEATS}): ${median(ratios).toFixed(3)}`);
// The cancel pair needs a plate of two objects or more (cancelling the only one cancels the print).
if (new Set(gcode.match(/^; printing object .*$/gm) ?? []).size >= 2) {
  const r2: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const a = await printOnce(gcode, off, null);
    const b = await printOnce(gcode, off, 0);
    r2.push(a / b);
    console.log(`cancel pair ${i + 1}: nothing cancelled ${a.toFixed(0)} ms, object 0 cancelled ${b.toFixed(0)} ms`);
  }
  console.log(`object 0 cancelled / none (time ratio, > 1 is faster; fewer lines go out) median: ${median(r2).toFixed(3)}`);
}
// A target that accepts the connection and never answers: every notification waits for its timeout.
const dead = createServer(() => {});
await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
const deadUrl = `http://127.0.0.1:${(dead.address() as { port: number }).port}/hook`;
const notifyOn = { ...off, notifications: { progressStep: 1, layerStep: 1, retries: 0, timeout: 300,
  targets: [{ url: deadUrl, events: ['PrintStarted', 'PrintProgress', 'PrintLayer', 'PrintDone'] }] } };
const r3: number[] = [];
for (let i = 0; i < REPEATS; i++) {
  const a = await printOnce(gcode, off, null);
  const b = await printOnce(gcode, notifyOn, null);
  r3.push(a / b);
  console.log(`notifications pair ${i + 1}: none ${a.toFixed(0)} ms, a dead target ${b.toFixed(0)} ms, rate ${(a / b).toFixed(3)}`);
}
console.log(`notifications to a dead target / none, lines per second (median of ${REPEATS}): ${median(r3).toFixed(3)}`);
dead.close();
process.exit(0);
