// Timelapse capture vs the serial path: prints the same layered file on the virtual printer with capture off and with
// zchange capture (a local fake camera, a frame every layer), and reports lines/s and the on/off ratio (median of
// interleaved pairs). Usage: npx tsx bench/timelapse.ts   Env: BENCH_LAYERS (default 300), BENCH_REPEATS (default 3).
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGantry, type Gantry } from '../src/main.ts';

const LAYERS = Number(process.env.BENCH_LAYERS ?? 300);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const JPEG = Buffer.alloc(20_000, 0xaa);

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
    devel: { virtualPrinter: { throttle: 0, busyInterval: 2 } }, webcam: { snapshot: cameraUrl, ffmpeg: '/usr/bin/ffmpeg', renderAfterPrint: 'never' },
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

let frames = 0;
const cam = createServer((_req, res) => { frames++; res.writeHead(200, { 'Content-Type': 'image/jpeg' }).end(JPEG); });
await new Promise<void>((r) => cam.listen(0, '127.0.0.1', r));
const addr = cam.address();
const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/snapshot`;
const ratios: number[] = [];
for (let i = 0; i < REPEATS; i++) {
  const off = await once(false, url);
  const before = frames;
  const on = await once(true, url);
  ratios.push(on / off);
  console.log(`pair ${i + 1}: off ${off.toFixed(0)} lines/s, on ${on.toFixed(0)} lines/s (${frames - before} frames), ratio ${(on / off).toFixed(3)}`);
}
ratios.sort((a, b) => a - b);
console.log(`median ratio capture on/off: ${ratios[Math.floor(ratios.length / 2)].toFixed(3)}`);
cam.close();
