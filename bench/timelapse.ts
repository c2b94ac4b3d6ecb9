// Timelapse capture vs the serial path: prints the same layered file on the virtual printer with capture off and with
// zchange capture (a fake camera in its own process, a frame every layer — about 100 frames/s at throttle 0, a worst
// case), and reports lines/s and the on/off ratio (median of interleaved pairs); then the host CPU one frame costs.
// Usage: npx tsx bench/timelapse.ts   Env: BENCH_LAYERS (default 300), BENCH_REPEATS (default 3), BENCH_THROTTLE
// (the virtual printer's time scale, default 0 = instant; 0.01 = a hundred times faster than real, a layer of this
// file about every 0.1 s, still far more frames a second than a real print makes).
import { mkdtemp, rm } from 'node:fs/promises';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGantry, type Gantry } from '../src/main.ts';
import { CaptureSession } from '../src/timelapse/capture-session.ts';
import { EventBus } from '../src/core/event-bus.ts';
import { silentLogger } from '../src/core/logger.ts';

const LAYERS = Number(process.env.BENCH_LAYERS ?? 300);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const THROTTLE = Number(process.env.BENCH_THROTTLE ?? 0);

function gcode(): { text: string; lines: number } {
  const lines = ['G28', 'G90', 'M83', 'G92 E0'];
  for (let l = 1; l <= LAYERS; l++) {
    lines.push(`G1 Z${(l * 0.2).toFixed(2)} F600`);
    for (let m = 0; m < 60; m++) lines.push(`G1 X${20 + (m % 10) * 5} Y${20 + (l % 7) * 5} E0.05 F1800`);
  }
  lines.push('M84', '');
  return { text: lines.join('\n'), lines: lines.length };
}

async function once(capture: boolean, cameraUrl: string): Promise<number> {
  const base = await mkdtemp(join(tmpdir(), 'gantry-tlbench-'));
  const g: Gantry = await startGantry({ baseDir: base, host: '127.0.0.1', port: 0, settings: {
    devel: { virtualPrinter: { throttle: THROTTLE, busyInterval: 2 } }, webcam: { snapshot: cameraUrl, ffmpeg: '/usr/bin/ffmpeg', renderAfterPrint: 'never' },
    accessControl: { enabled: false } } });
  try {
    const api = (path: string, init: RequestInit & { json?: unknown } = {}) => fetch(g.url + path, {
      ...init, headers: { 'Content-Type': 'application/json', 'X-Api-Key': g.config.current.api.key ?? '' }, body: init.json === undefined ? init.body : JSON.stringify(init.json) });
    await api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL', baudrate: 115200 } });
    while (g.printer.firmwareName() === '') await new Promise((r) => setTimeout(r, 20));
    if (capture) await api('/api/timelapse', { method: 'POST', json: { type: 'zchange', minDelay: 0.001 } });
    const { text, lines } = gcode();
    const form = new FormData();
    form.append('file', new Blob([text]), 'bench.gcode');
    await fetch(`${g.url}/api/files/local`, { method: 'POST', body: form, headers: { 'X-Api-Key': g.config.current.api.key ?? '' } });
    const done = new Promise<void>((r) => g.events.on('bench', 'PrintDone', () => r()));
    const started = performance.now();
    await api('/api/files/local/bench.gcode', { method: 'POST', json: { command: 'select', print: true } });
    await done;
    const rate = lines / ((performance.now() - started) / 1000);
    await g.timelapse.idle();
    return rate;
  } finally {
    await g.stop();
    await rm(base, { recursive: true, force: true });
  }
}

// The camera runs in its own process, as a streamer does: its work is not the host's.
const camera = spawn(process.execPath, ['-e', `
  let n = 0; const body = Buffer.alloc(20000, 0xaa);
  const s = require('node:http').createServer((q, r) => { n++; r.writeHead(200, {'Content-Type': 'image/jpeg'}).end(body); });
  s.listen(0, '127.0.0.1', () => console.log(s.address().port));
  process.on('message', () => process.send(n));`], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
const port = await new Promise<string>((r) => camera.stdout!.once('data', (d: Buffer) => r(d.toString().trim())));
const url = `http://127.0.0.1:${port}/snapshot`;
const frameCount = () => new Promise<number>((r) => { camera.once('message', (n) => r(n as number)); camera.send('count'); });
const ratios: number[] = [];
console.log(`${LAYERS} layers, virtual printer throttle ${THROTTLE}${THROTTLE === 0 ? ' (instant: a CPU-bound worst case)' : ''}`);
for (let i = 0; i < REPEATS; i++) {
  const off = await once(false, url);
  const before = await frameCount();
  const on = await once(true, url);
  ratios.push(on / off);
  console.log(`pair ${i + 1}: off ${off.toFixed(0)} lines/s, on ${on.toFixed(0)} lines/s (${(await frameCount()) - before} frames), ratio ${(on / off).toFixed(3)}`);
}
ratios.sort((a, b) => a - b);
console.log(`median ratio capture on/off: ${ratios[Math.floor(ratios.length / 2)].toFixed(3)}`);

// Host CPU per frame (HTTP GET of a 20 kB JPEG, written to disk, two events): what one layer's frame costs the loop.
const dir = await mkdtemp(join(tmpdir(), 'gantry-tlframes-'));
const session = new CaptureSession('bench_1', 'bench.gcode', { type: 'timed', fps: 25, postRoll: 0, interval: 3600 }, false, {
  events: new EventBus(), logger: silentLogger, framesDir: dir, monotonic: () => performance.now(),
  camera: () => ({ url, timeout: 5, validateSsl: true }) });
for (let i = 0; i < 20; i++) await session.capture();
const N = 300;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < N; i++) await session.capture();
const cpu = process.cpuUsage(cpu0);
console.log(`per frame: ${((cpu.user + cpu.system) / 1000 / N).toFixed(2)} ms CPU in the host process, ${((performance.now() - t0) / N).toFixed(2)} ms wall`);
await rm(dir, { recursive: true, force: true });
camera.kill();
