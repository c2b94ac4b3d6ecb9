// Streaming with Moonraker clients subscribed versus none: the same file printed on fakefw (-d 0, a real pty) by one
// Gantry, alone and with BENCH_MOONRAKER_CLIENTS (10) websocket clients subscribed to every printer object (as Mainsail
// and Fluidd subscribe), interleaved pairs; the median ratio of lines per second, the snapshots computed per status
// tick (one per tick whatever the number of clients), and the notifications each client got.
// Usage: npx tsx bench/moonraker-clients.ts [file.gcode, default the shared small PrusaSlicer file]   Env: BENCH_REPEATS (5), GANTRY_SHARED (bench/fakefw.c).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGantry, type Gantry } from '../src/main.ts';
import { startFakeFw } from '../test/transports/bench-tools.ts';
import { RpcClient } from '../test/moonraker/rpc-client.ts';
import { SMALL_GCODE } from '../test/helpers/shared-data.ts';

const REPEATS = Math.max(1, Number(process.env.BENCH_REPEATS ?? 5));
const CLIENTS = Math.max(1, Number(process.env.BENCH_MOONRAKER_CLIENTS ?? 10));

async function timedPrint(g: Gantry, api: (path: string, json?: unknown) => Promise<Response>): Promise<number> {
  const done = new Promise<void>((resolve) => {
    for (const end of ['PrintDone', 'PrintCancelled', 'PrintFailed'] as const) g.events.on('bench', end, () => resolve());
  });
  const t0 = performance.now();
  await api('/api/files/local/bench.gcode', { command: 'select', print: true });
  await done;
  g.events.removeOwner('bench');
  return performance.now() - t0;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const gcode = await readFile(process.argv[2] ?? SMALL_GCODE, 'utf8');
const dir = await mkdtemp(join(tmpdir(), 'gantry-mrbench-'));
const fw = await startFakeFw(dir, ['-d', '0']);
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (() => true) as typeof process.stdout.write;
const g = await startGantry({ baseDir: join(dir, 'base'), host: '127.0.0.1', port: 0,
  settings: { serial: { additionalPorts: [fw.port], log: false }, gcodeAnalysis: { runAt: 'never' } } });
process.stdout.write = write;
try {
  const key = g.config.current.api.key ?? '';
  const api = (path: string, json?: unknown) => fetch(g.url + path, { method: json === undefined ? 'GET' : 'POST',
    headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' }, body: json === undefined ? undefined : JSON.stringify(json) });
  await api('/api/connection', { command: 'connect', port: fw.port, baudrate: 115200 });
  while (((await (await api('/api/connection')).json()) as { current: { state: string } }).current.state !== 'Operational') await new Promise((r) => setTimeout(r, 100));
  const form = new FormData();
  form.append('file', new Blob([gcode]), 'bench.gcode');
  await fetch(g.url + '/api/files/local', { method: 'POST', headers: { 'X-Api-Key': key }, body: form });
  const ratios: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const alone = await timedPrint(g, api);
    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => RpcClient.open(`${g.url}/websocket`, { 'X-Api-Key': key })));
    const { objects } = await clients[0].call<{ objects: string[] }>('printer.objects.list');
    for (const c of clients) {
      await c.call('server.connection.identify', { client_name: 'bench', version: '1', type: 'web', url: 'x' });
      await c.call('printer.objects.subscribe', { objects: Object.fromEntries(objects.map((o) => [o, null])) });
    }
    const moonraker = g.moonraker;
    const ticks0 = moonraker?.snapshotsComputed ?? 0;
    const loaded = await timedPrint(g, api);
    const ticks = (moonraker?.snapshotsComputed ?? 0) - ticks0;
    const notes = clients.map((c) => c.notifications.length);
    for (const c of clients) c.close();
    ratios.push(alone / loaded);
    console.log(`pair ${i + 1}: alone ${alone.toFixed(0)} ms, ${CLIENTS} clients ${loaded.toFixed(0)} ms, rate ${(alone / loaded).toFixed(3)}; `
      + `${ticks} snapshots in ${(loaded / 1000).toFixed(1)} s (≤ ${Math.ceil(loaded / 250) + 2} expected), notifications per client ${Math.min(...notes)}–${Math.max(...notes)}`);
  }
  console.log(`${CLIENTS} subscribed Moonraker clients / none, lines per second (median of ${REPEATS}): ${median(ratios).toFixed(3)} (goal ≥ 0.95)`);
} finally {
  await g.stop();
  await fw.stop();
  await rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }).catch(() => undefined);
}
process.exit(0);
