// Push benchmark: 200 push clients (one in ten on the SockJS protocol) listening while the printer link works.
// (1) A print on the virtual printer: server CPU and RSS with and without the clients, and the latency from a serial
//     line reaching the push layer to a client holding it (p50/p99; the printer batches terminal lines for ≤100 ms
//     before that, and `current` goes out every 500 ms, so ~250 ms is the floor by design).
// (2) The printer-link streaming benchmark (fakefw on a pty, 200 µs per line, ping-pong and send-ahead): lines/s with
//     the clients listening relative to the same run with them connected but subscribed to nothing (target ≥ 0.9),
//     as interleaved pairs (median ratio).
// Clients run in a child process so their CPU is not counted as the server's.
// Usage: npx tsx bench/push.ts [clients=200]   Env: BENCH_QUICK=1 (shorter files)
import { execFile, fork, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import { availableParallelism, loadavg, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import WebSocket from 'ws';
import SockJS from 'sockjs-client';
import type { startGantry as startGantryFn } from '../src/main.ts';
import { BENCH_SRC_DIR, GCODE_DIR } from '../test/helpers/shared-data.ts';

const run = promisify(execFile);
const GCODE = join(GCODE_DIR, 'prusaslicer-2.7.1_benchy_mini.gcode');
const QUICK = process.env.BENCH_QUICK === '1';
/** Every SAMPLE_EVERY-th line number is timed (enough samples, little bookkeeping). */
const SAMPLE_EVERY = 25;
/** Silent/listening streaming pairs per mode. */
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const nowMs = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface ClientReport { samples: Array<[number, number]>; currents: number; events: number; closed: number; bytes: number; parsing: number }

// ------------------------------------------------------------------------------------------------ client process

function runClients(url: string, auth: string, count: number): void {
  const samples: Array<[number, number]> = [];
  let currents = 0, events = 0, closed = 0, ready = 0;
  let sampling = false;
  const onMessage = (m: Record<string, unknown>): void => {
    if ('history' in m && ++ready === count) process.send!({ ready: true });
    if ('event' in m) events++;
    const cur = m.current as { logs?: string[] } | undefined;
    if (!cur) return;
    currents++;
    if (!sampling) return;
    const t = nowMs();
    for (const l of cur.logs ?? []) {
      const n = /^Send: N(\d+) /.exec(l);
      if (n && Number(n[1]) % SAMPLE_EVERY === 0) samples.push([Number(n[1]), t]);
    }
  };
  // Real clients run on other machines: here most only count their frames (ws decodes them, nobody parses them), so
  // the client process competes less with the server for this machine's two cores. SockJS clients always parse.
  let bytes = 0;
  const senders: Array<(text: string) => void> = [];
  for (let i = 0; i < count; i++) {
    if (i % 10 === 0) {
      const s = new SockJS(`${url}/sockjs`);
      s.onopen = () => s.send(JSON.stringify({ auth }));
      senders.push((t) => s.send(t));
      s.onmessage = (e: { data: unknown }) => onMessage(e.data as Record<string, unknown>);
      s.onclose = () => { closed++; };
    } else {
      const ws = new WebSocket(`${url.replace('http', 'ws')}/sockjs/websocket`);
      ws.on('open', () => ws.send(JSON.stringify({ auth })));
      senders.push((t) => { if (ws.readyState === ws.OPEN) ws.send(t); });
      const parses = i % 10 === 1 || i % 10 === 5;
      ws.on('message', (d: Buffer) => {
        if (parses) onMessage(JSON.parse(d.toString()) as Record<string, unknown>);
        else {
          bytes += d.length;
          // Authentication is the only thing to wait for; `history` is the sole message starting this way.
          if (d.length > 11 && d.toString('latin1', 0, 11) === '{"history":' && ++ready === count) process.send!({ ready: true });
        }
      });
      ws.on('close', () => { closed++; });
      ws.on('error', () => {});
    }
  }
  // Silent = subscribed to nothing: connected, but the server sends them nothing (the "no clients" runs in between).
  const everything = JSON.stringify({ subscribe: { state: { logs: true, messages: true }, events: true, plugins: true } });
  const nothing = JSON.stringify({ subscribe: { state: false, events: false, plugins: false } });
  process.on('message', (msg: { sample?: boolean; report?: boolean; listen?: boolean }) => {
    if (msg.listen !== undefined) {
      for (const send of senders) send(msg.listen ? everything : nothing);
      process.send!({ switched: msg.listen });
    }
    if (msg.sample !== undefined) { sampling = msg.sample; samples.length = 0; }
    if (msg.report) process.send!({ report: { samples, currents, events, closed, bytes, parsing: Math.ceil(count / 10) * 3 } satisfies ClientReport }, () => process.exit(0));
  });
}

// ------------------------------------------------------------------------------------------------ server side

function pct(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

type Gantry = Awaited<ReturnType<typeof startGantryFn>>;

async function waitOperational(g: Gantry): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!g.printer.isOperational()) {
    if (Date.now() > deadline) throw new Error(`printer not operational: ${g.printer.state().text} ${g.printer.state().error}`);
    await sleep(20);
  }
}

interface PrintStats { seconds: number; cpuSeconds: number; cpuPct: number; rssMb: number; loopP99Ms: number }

async function printOnce(g: Gantry, file: string): Promise<PrintStats> {
  const { fileLineSource } = await import('../src/printer/job/file-line-source.ts');
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let rss = process.memoryUsage().rss;
  const sampler = setInterval(() => { rss = Math.max(rss, process.memoryUsage().rss); }, 100);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const job = g.printer.streamJob(fileLineSource(file), { finished: () => {} });
  let watchdog: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([job.done, new Promise<string>((r) => { watchdog = setTimeout(() => r('a stall (no end within 300 s)'), 300_000); })]);
  clearTimeout(watchdog);
  loop.disable();
  clearInterval(sampler);
  if (outcome !== 'done') throw new Error(`print ended with ${outcome}`);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  return { seconds, cpuSeconds, cpuPct: (cpuSeconds / seconds) * 100, rssMb: rss / 2 ** 20, loopP99Ms: loop.percentile(99) / 1e6 };
}

/** One run of the printer-link benchmark: fakefw (200 µs per line) on a pty, lines/s as fakefw measured them. */
async function streamOnce(g: Gantry, fakefw: string, dir: string, file: string, moves: number, sendAhead: boolean): Promise<number> {
  await g.config.patch({ serial: { rxBufferSize: sendAhead ? 127 : 0, log: false } });
  const port = join(dir, `tty${Math.random().toString(36).slice(2, 8)}`);
  const summaryFile = `${port}.summary`;
  const fw: ChildProcess = spawn(fakefw, ['-p', port, '-e', String(moves), '-o', summaryFile, '-d', '200'], { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((resolve, reject) => {
    let buf = '';
    fw.stdout!.on('data', (d: Buffer) => { buf += d.toString(); if (buf.includes('FAKEFW_PTY')) resolve(); });
    fw.once('exit', (c) => reject(new Error(`fakefw exited ${c}`)));
  });
  await g.printer.connect({ port, baudrate: 250000 });
  await waitOperational(g);
  await printOnce(g, file);
  await g.printer.disconnect();
  const exited = new Promise((r) => fw.once('exit', r));
  fw.kill('SIGTERM');
  await exited;
  const text = await readFile(summaryFile, 'utf8').catch(() => '');
  return Number(/lines_per_s=(\S+)/.exec(text)?.[1] ?? NaN);
}

async function main(): Promise<void> {
  const clients = Number(process.argv[2] ?? 200);
  const { startGantry } = await import('../src/main.ts');
  const dir = await mkdtemp(join(tmpdir(), 'gantry-bench-push-'));
  const fakefw = join(dir, 'fakefw');
  await run('cc', ['-O2', '-o', fakefw, join(BENCH_SRC_DIR, 'fakefw.c')]);
  const all = (await readFile(GCODE, 'utf8')).split('\n');
  const printFile = join(dir, 'print.gcode');
  const streamFile = join(dir, 'stream.gcode');
  await writeFile(printFile, all.slice(0, QUICK ? 5000 : 20000).join('\n') + '\n');
  const streamLines = all.slice(0, QUICK ? 8000 : 15000);
  await writeFile(streamFile, streamLines.join('\n') + '\n');
  const moves = streamLines.filter((l) => /^[Gg]0?[0-3](?![0-9])/.test(l.replace(/;.*/, '').trim())).length;

  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (() => true) as typeof process.stdout.write;
  const g = await startGantry({ baseDir: join(dir, 'base'), host: '127.0.0.1', port: 0, logLevel: 'warn',
    settings: { devel: { virtualPrinter: { throttle: 0 } }, serial: { additionalPorts: [`${dir}/tty*`] } } })
    .finally(() => { process.stdout.write = write; });
  let child: ChildProcess | undefined;
  try {
    await g.access.users.addUser({ name: 'bench', password: 'bench-password', groups: ['users'] });
    const key = await g.access.users.generateUserKey('bench');
    const login = await fetch(`${g.url}/api/login`, { method: 'POST', headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' }, body: '{"passive":true}' });
    const { name, session } = (await login.json()) as { name: string; session: string };

    // Without clients: a warm-up print, the virtual-printer print, then both streaming modes.
    await g.printer.connect({ port: 'VIRTUAL', baudrate: 115200 });
    await waitOperational(g);
    await printOnce(g, printFile);
    const quietPrint = await printOnce(g, printFile);
    await g.printer.disconnect();

    child = fork(fileURLToPath(import.meta.url), ['--clients', g.url, `${name}:${session}`, String(clients)],
      { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    // Real clients run elsewhere: at the lowest priority the client process only takes CPU the server and the
    // firmware do not need, so the figures show the server's own cost rather than this box's contention.
    try { setPriority(child.pid ?? 0, 19); } catch { /* not permitted: measure as is */ }
    const c = child;
    await new Promise<void>((resolve, reject) => {
      c.on('message', (m: { ready?: boolean }) => { if (m.ready) resolve(); });
      c.once('exit', () => reject(new Error('client process exited early')));
      setTimeout(() => reject(new Error('clients did not all authenticate within 60 s')), 60_000).unref();
    });

    // Streaming with the clients silent and listening, interleaved and repeated: on a shared box the load drifts, and
    // adjacent pairs see about the same load. The figure is the median of the per-pair ratios.
    const listen = async (on: boolean): Promise<void> => {
      await new Promise<void>((resolve) => {
        const h = (m: { switched?: boolean }): void => { if (m.switched === on) { c.off('message', h); resolve(); } };
        c.on('message', h);
        c.send({ listen: on });
      });
      await sleep(500);
    };
    const pairs: Record<'ping' | 'ahead', Array<[number, number]>> = { ping: [], ahead: [] };
    for (let rep = 0; rep < REPEATS; rep++) {
      for (const mode of ['ping', 'ahead'] as const) {
        await listen(false);
        const quiet = await streamOnce(g, fakefw, dir, streamFile, moves, mode === 'ahead');
        await listen(true);
        const loud = await streamOnce(g, fakefw, dir, streamFile, moves, mode === 'ahead');
        pairs[mode].push([quiet, loud]);
      }
    }

    // Latency is measured at normal priority: a starved client would report its own queueing, not the server's.
    try { setPriority(child.pid ?? 0, 0); } catch { /* keep the lower priority */ }
    await g.printer.connect({ port: 'VIRTUAL', baudrate: 115200 });
    await waitOperational(g);
    const sentAt = new Map<number, number>();
    const off = g.printer.subscribe({
      log: (ls) => {
        const t = nowMs();
        for (const l of ls) {
          const n = /^Send: N(\d+) /.exec(l);
          if (n && Number(n[1]) % SAMPLE_EVERY === 0 && !sentAt.has(Number(n[1]))) sentAt.set(Number(n[1]), t);
        }
      },
    });
    c.send({ sample: true });
    const loudPrint = await printOnce(g, printFile);
    await sleep(1500); // the last current reaches everybody
    off();
    const report = await new Promise<ClientReport>((resolve) => {
      c.on('message', (m: { report?: ClientReport }) => { if (m.report) resolve(m.report); });
      c.send({ report: true });
    });
    child = undefined;
    const lat = report.samples.filter(([n]) => sentAt.has(n)).map(([n, t]) => t - sentAt.get(n)!);
    const ratio = (a: number, b: number): number => Number((a / b).toFixed(3));
    const out = {
      clients,
      print_s_quiet: quietPrint.seconds.toFixed(2), print_s_with_clients: loudPrint.seconds.toFixed(2),
      // CPU seconds for the same print: unlike wall time and percentages, hardly affected by other load on the box.
      server_cpu_s_quiet: quietPrint.cpuSeconds.toFixed(2), server_cpu_s_with_clients: loudPrint.cpuSeconds.toFixed(2),
      server_cpu_pct_quiet: Math.round(quietPrint.cpuPct), server_cpu_pct_with_clients: Math.round(loudPrint.cpuPct),
      server_rss_mb_quiet: Math.round(quietPrint.rssMb), server_rss_mb_with_clients: Math.round(loudPrint.rssMb),
      loop_delay_p99_ms_quiet: quietPrint.loopP99Ms.toFixed(1), loop_delay_p99_ms_with_clients: loudPrint.loopP99Ms.toFixed(1),
      latency_p50_ms: Math.round(pct(lat, 50)), latency_p99_ms: Math.round(pct(lat, 99)), latency_samples: lat.length,
      currents_per_client: Math.round(report.currents / report.parsing), events_per_client: Math.round(report.events / report.parsing),
      mb_to_counting_clients: Math.round(report.bytes / 2 ** 20),
      clients_closed: report.closed,
      stream_pingpong_lps_quiet: pairs.ping.map(([q]) => Math.round(q)).join('/'),
      stream_pingpong_lps_with_clients: pairs.ping.map(([, l]) => Math.round(l)).join('/'),
      stream_pingpong_ratio_median: ratio(pct(pairs.ping.map(([q, l]) => l / q), 50), 1),
      stream_sendahead_lps_quiet: pairs.ahead.map(([q]) => Math.round(q)).join('/'),
      stream_sendahead_lps_with_clients: pairs.ahead.map(([, l]) => Math.round(l)).join('/'),
      stream_sendahead_ratio_median: ratio(pct(pairs.ahead.map(([q, l]) => l / q), 50), 1),
    };
    console.log(`push benchmark: ${clients} clients, virtual-printer print of ${QUICK ? 5000 : 20000} lines, fakefw -d 200 stream of ${moves} moves ×${REPEATS}, load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores`);
    console.log(`PUSH ${Object.entries(out).map(([k, v]) => `${k}=${v}`).join(' ')}`);
  } finally {
    child?.kill();
    await g.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--clients') {
  runClients(process.argv[3], process.argv[4], Number(process.argv[5]));
} else {
  main().then(() => process.exit(0), (err: unknown) => { console.error(err); process.exit(1); });
}
