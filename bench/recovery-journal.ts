// The print journal's cost on streaming: whole prints through the job runner (which bench/streaming.ts bypasses) to
// fakefw on a pty, journal off vs on (recovery.journal), interleaved pairs in one run, ratio = time off / time on.
// Usage: npm run bench -- recovery-journal   Env: BENCH_LINES (default 15000 lines of the Benchy file), BENCH_REPEATS
// (default 3 pairs), BENCH_DELAY_US (fakefw -d, default 200), BENCH_SENDAHEAD=1 (serial.rxBufferSize 128).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startGantry, type Gantry } from '../src/main.ts';
import { BENCH_SRC_DIR, GCODE_DIR } from '../test/helpers/shared-data.ts';

const LINES = Number(process.env.BENCH_LINES ?? 15000);
const REPEATS = Math.max(1, Number(process.env.BENCH_REPEATS ?? 3));
const DELAY = process.env.BENCH_DELAY_US ?? '200';
const SENDAHEAD = process.env.BENCH_SENDAHEAD === '1';

async function fakefw(bin: string, dir: string): Promise<{ port: string; proc: ChildProcess }> {
  const port = join(dir, `tty${Math.random().toString(36).slice(2, 8)}`);
  const proc = spawn(bin, ['-p', port, '-d', DELAY], { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => { if (d.toString().includes('FAKEFW_PTY')) resolve(); });
    proc.once('exit', (c) => reject(new Error(`fakefw exited ${c}`)));
  });
  return { port, proc };
}

async function api(g: Gantry, path: string, body: unknown): Promise<void> {
  const r = await fetch(g.url + path, { method: 'POST', headers: { 'X-Api-Key': g.config.current.api.key ?? '', 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
}

/** Seconds from PrintStarted to PrintDone for one whole print. */
async function printOnce(bin: string, gcode: string, journal: boolean): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-bench-journal-'));
  const fw = await fakefw(bin, dir);
  // The first-run banner (credentials of a throwaway base dir) would bury the figures.
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (() => true) as typeof process.stdout.write;
  const g = await startGantry({ baseDir: join(dir, 'base'), host: '127.0.0.1', port: 0, settings: {
    serial: { additionalPorts: [fw.port], log: false, ...(SENDAHEAD ? { rxBufferSize: 128 } : {}) }, recovery: { journal },
  } }).finally(() => { process.stdout.write = write; });
  try {
    const operational = new Promise<void>((resolve) => g.events.on('bench', 'Connected', () => resolve()));
    await api(g, '/api/connection', { command: 'connect', port: fw.port, baudrate: 115200 });
    await operational;
    const form = new FormData();
    form.append('file', new Blob([gcode]), 'bench.gcode');
    const up = await fetch(g.url + '/api/files/local', { method: 'POST', headers: { 'X-Api-Key': g.config.current.api.key ?? '' }, body: form });
    if (up.status !== 201) throw new Error(`upload: ${up.status}`);
    let started = 0;
    const done = new Promise<number>((resolve, reject) => {
      g.events.on('bench', 'PrintStarted', () => { started = performance.now(); });
      g.events.on('bench', 'PrintDone', () => resolve((performance.now() - started) / 1000));
      g.events.on('bench', 'PrintFailed', (p) => reject(new Error(`print failed: ${JSON.stringify(p)}`)));
    });
    await api(g, '/api/files/local/bench.gcode', { command: 'select', print: true });
    return await done;
  } finally {
    await g.stop();
    fw.proc.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const binDir = await mkdtemp(join(tmpdir(), 'gantry-bench-bin-'));
  try {
    await measure(join(binDir, 'fakefw'));
  } finally {
    await rm(binDir, { recursive: true, force: true });
  }
}

async function measure(bin: string): Promise<void> {
  await promisify(execFile)('cc', ['-O2', '-o', bin, join(BENCH_SRC_DIR, 'fakefw.c')]);
  const gcode = (await readFile(join(GCODE_DIR, 'prusaslicer-2.3.3_3dbenchy.gcode'), 'latin1')).split('\n').slice(0, LINES).join('\n');
  console.log(`journal cost: ${LINES} lines of Benchy through the job runner, fakefw -d ${DELAY}, ${SENDAHEAD ? 'send-ahead' : 'ping-pong'}, ${REPEATS} interleaved pairs`);
  const ratios: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    // Alternating which goes first, so a trend in the machine's load does not favour one side.
    const first = i % 2 === 0;
    const a = await printOnce(bin, gcode, !first);
    const b = await printOnce(bin, gcode, first);
    const [off, on] = first ? [a, b] : [b, a];
    ratios.push(off / on);
    console.log(`  pair ${i + 1}: journal off ${off.toFixed(2)} s (${Math.round(LINES / off)} lines/s), on ${on.toFixed(2)} s (${Math.round(LINES / on)} lines/s), ratio ${(off / on).toFixed(3)}`);
  }
  console.log(`ratio (median of pairs, off/on; 1.0 = no cost, goal ≥ 0.95): ${median(ratios).toFixed(3)}`);
}

await main();
