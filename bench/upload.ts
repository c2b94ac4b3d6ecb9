// Upload benchmark: streams generated G-code of several sizes (up to 500 MB) as multipart uploads to a real server and
// reports throughput and the server's RSS growth. The client runs in a child process so its memory is not counted;
// RSS must stay flat whatever the upload size (the file goes to disk chunk by chunk).
// Usage: npx tsx bench/upload.ts [sizesMB=50,500]
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';

const BOUNDARY = '----gantrybenchboundary';
const LINE = Buffer.from('G1 X123.456 Y78.910 E0.04321 F1800 ; benchmark filler line\n');

// ------------------------------------------------------------------------------------------------ client process

function runClient(port: number, key: string, size: number): Promise<void> {
  const chunk = Buffer.concat(Array.from({ length: Math.ceil(65536 / LINE.length) }, () => LINE));
  const head = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="bench-${size}.gcode"\r\n` +
    'Content-Type: application/octet-stream\r\n\r\n');
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  return new Promise((resolve, reject) => {
    process.send?.('start');
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/api/files/local', headers: {
      'X-Api-Key': key, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`, 'Content-Length': head.length + size + tail.length,
    } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 201 ? resolve() : reject(new Error(`upload answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    let sent = 0;
    const pump = (): void => {
      while (sent < size) {
        const n = Math.min(chunk.length, size - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once('drain', pump);
          return;
        }
      }
      req.end(tail);
    };
    req.write(head);
    pump();
  });
}

if (process.argv[2] === '--client') {
  const [port, key, size] = [Number(process.argv[3]), process.argv[4], Number(process.argv[5])];
  runClient(port, key, size).then(() => process.exit(0), (err: unknown) => { console.error(err); process.exit(1); });
} else {
  await main();
}

// ------------------------------------------------------------------------------------------------ server side

async function main(): Promise<void> {
  const { startGantry } = await import('../src/main.ts');
  const sizes = (process.argv[2] ?? '50,500').split(',').map((s) => Number(s) * 1024 * 1024);
  const baseDir = await mkdtemp(join(tmpdir(), 'gantry-bench-upload-'));
  // The first-run banner (admin password, API key) goes to stdout; keep the report clean.
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (() => true) as typeof process.stdout.write;
  const g = await startGantry({ baseDir, host: '127.0.0.1', port: 0, settings: { gcodeAnalysis: { runAt: 'never' } } })
    .finally(() => { process.stdout.write = write; });
  const key = g.config.current.api.key ?? '';
  try {
    global.gc?.();
    const idle = process.memoryUsage().rss;
    console.log(`server RSS before uploads: ${(idle / 1048576).toFixed(1)} MB`);
    console.log('size MB | MB/s  | peak RSS MB | growth over idle MB');
    for (const size of sizes) {
      let peak = process.memoryUsage().rss;
      const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss); }, 20);
      let t0 = performance.now();
      await new Promise<void>((resolve, reject) => {
        const child = fork(fileURLToPath(import.meta.url), ['--client', String(g.port), key, String(size)], { execArgv: ['--import', 'tsx'] });
        // Time from the first byte, not from the client's start-up.
        child.on('message', () => { t0 = performance.now(); });
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`client exited ${code}`))));
      });
      const secs = (performance.now() - t0) / 1000;
      clearInterval(timer);
      const mb = size / 1048576;
      console.log(`${String(mb).padStart(7)} | ${(mb / secs).toFixed(0).padStart(5)} | ${(peak / 1048576).toFixed(1).padStart(11)} | ${((peak - idle) / 1048576).toFixed(1).padStart(8)}`);
      await rm(join(g.paths.uploads, `bench-${size}.gcode`), { force: true });
    }
  } finally {
    await g.stop();
    await rm(baseDir, { recursive: true, force: true });
  }
}
