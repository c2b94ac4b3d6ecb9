// Memory benchmark: RSS of the built server (bin/gantry.js, every process it starts) idle, after analysing the 36 MB corpus file, while printing it at a printer's pace and streaming it at full speed, next to OctoPrint's figures and a bare Fastify server.
// Usage: npm run bench -- memory   Env: BENCH_PACE_S (seconds of printing to the reference firmware sampled, default 60;
//   BENCH_QUICK=1: 30), BENCH_STREAM_S (seconds of full-speed streaming sampled, default 30; BENCH_QUICK=1: 10),
//   BENCH_NODE (the node binary the servers run on, default this one: to compare Node lines),
//   BENCH_SERVICE_ENV=1 (Gantry runs with the malloc settings of the systemd unit, contrib/gantry.service: what an
//   installed service gets on a Node whose launcher cannot set them itself, i.e. before 22.15), BENCH_RESTARTS (restarts
//   timed per way of starting, default 5)
// RSS is read from /proc (VmRSS of the server and its descendants, summed), so it counts what a Pi would have to hold;
// about half of it is the node binary's own pages (shared and reclaimable, but counted), which is why a bare Fastify
// server, measured in the same run on the same node, is printed beside it: what is reachable at all.
import { execFileSync, spawn } from 'node:child_process';
import { openAsBlob } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { GCODE_DIR } from '../test/helpers/shared-data.ts';
import { ROOT, ensureBuilt, startGantryProcess } from '../test/helpers/built-server.ts';
import { startFakeFw } from '../test/transports/bench-tools.ts';
import { serviceNodeFlags } from '../src/system/systemd-unit.ts';

const BIG = 'prusaslicer-2.5.0-debian_vase_0.1mm_generated.gcode';
const STREAM_S = Number(process.env.BENCH_STREAM_S ?? (process.env.BENCH_QUICK ? 10 : 30));
const PACE_S = Number(process.env.BENCH_PACE_S ?? (process.env.BENCH_QUICK ? 30 : 60));
/** The reference firmware's time per line: what ../shared/bench/README.md calls a realistic firmware. */
const FW_DELAY_US = 200;
/** From issue 18, measured on the same kind of machine (2 cores), idle, printer disconnected. */
const OCTOPRINT = { idle: 90, printing: 110 };
const GOAL = { idle: 64, printing: 100 };

async function tree(pid: number): Promise<number[]> {
  const out = [pid];
  for (const task of await import('node:fs/promises').then((fs) => fs.readdir(`/proc/${pid}/task`)).catch(() => [] as string[])) {
    const children = await readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '');
    for (const c of children.split(' ').filter(Boolean)) out.push(...(await tree(Number(c))));
  }
  return out;
}

/** MB resident over the process tree; `peak` adds each process's high-water mark instead. */
async function rssMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): Promise<number> {
  let kb = 0;
  for (const p of await tree(pid)) {
    const status = await readFile(`/proc/${p}/status`, 'utf8').catch(() => '');
    kb += Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  }
  return kb / 1024;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const NODE = process.env.BENCH_NODE || process.execPath;
/** The unit's `Environment=` line (src/system/systemd-unit.ts writes the same). */
const UNIT_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '65536' };
const SERVICE_ENV = process.env.BENCH_SERVICE_ENV === '1' ? UNIT_ENV : {};
/** The node options the unit would name for the node the servers run on. */
const UNIT_NODE_FLAGS = serviceNodeFlags(execFileSync(NODE, ['-p', 'process.versions.v8'], { encoding: 'utf8' }).trim());
const loadavg = async () => (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');

/** CPU time (user + system, ms) the process has used so far: start cost that a busy machine does not inflate much. */
async function cpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // USER_HZ is 100 on Linux
}

const BARE_FASTIFY = `import Fastify from 'fastify';
  const app = Fastify();
  app.get('/api/version', async () => ({ api: '0.1', server: '1.9.3', text: 'OctoPrint 1.9.3' }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  console.log('listening ' + app.server.address().port);`;

/** Starts the bare Fastify server and waits for its first answer: the child, and spawn to first answer in ms. */
async function startBareFastify(): Promise<{ child: ReturnType<typeof spawn>; startMs: number }> {
  const t0 = performance.now();
  const child = spawn(NODE, ['--input-type=module', '-e', BARE_FASTIFY], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<string>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => { const m = /listening (\d+)/.exec(d.toString()); if (m) resolve(m[1]); });
      child.on('exit', (c) => reject(new Error(`bare Fastify exited with ${c}`)));
    });
    await (await fetch(`http://127.0.0.1:${port}/api/version`)).arrayBuffer();
    return { child, startMs: performance.now() - t0 };
  } catch (err) {
    child.kill();
    throw err;
  }
}

/** A bare Fastify server answering /api/version's JSON, on the same node: RSS 5, 15 and 35 s after its first answer, and its start. */
async function bareFastify(): Promise<{ rss: number; rss15: number; rss35: number; startMs: number; cpu: number }> {
  const { child, startMs } = await startBareFastify();
  try {
    const cpu = await cpuMs(child.pid!);
    await sleep(5000);
    const rss = await rssMb(child.pid!);
    await sleep(10_000);
    const rss15 = await rssMb(child.pid!);
    await sleep(20_000);
    return { rss, rss15, rss35: await rssMb(child.pid!), startMs, cpu };
  } finally {
    child.kill();
  }
}

/** Spawn to first answer of the bare Fastify server, in ms. */
async function bareFastifyStart(): Promise<number> {
  const { child, startMs } = await startBareFastify();
  child.kill();
  return startMs;
}

await ensureBuilt();
const loadBefore = await loadavg();
const bare = await bareFastify();
const dir = await mkdtemp(join(tmpdir(), 'gantry-bench-memory-'));
// The virtual printer at full speed (throttle 0), so streaming is limited by Gantry, not by simulated motion.
// fakefw's pty is linked in the base dir, where the server is told to look for ports.
await writeFile(join(dir, 'config.yaml'), `serial:\n  additionalPorts: ['${dir}/tty*']\ndevel:\n  virtualPrinter:\n    throttle: 0\n`);
const t0 = performance.now();
const g = await startGantryProcess(NODE, [join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', dir], SERVICE_ENV);
const pid = g.child.pid!;
const api = (path: string, init: RequestInit = {}) =>
  fetch(`${g.url}${path}`, { ...init, headers: { 'X-Api-Key': g.apiKey, ...(init.body && typeof init.body === 'string' ? { 'Content-Type': 'application/json' } : {}), ...init.headers } });
const rows: [string, number, string][] = [];
let streamCost: string | undefined;
/** The pace of the print to fakefw, as it measured it, and how much of the file went. */
let paceRate: string | undefined;
// To the first answer, not just the "is up" line.
const startMs = await api('/api/version').then(async (r) => { await r.arrayBuffer(); return performance.now() - t0; });
const startCpu = await cpuMs(pid);
try {
  await (await api('/api/version')).arrayBuffer();
  await sleep(5000); // let start-up garbage be collected and the warm worker (if any) settle
  rows.push(['idle, 5 s after start', await rssMb(pid), `${OCTOPRINT.idle} MB`]);
  // V8 shrinks an idle heap with its memory reducer's GCs, ≈ 8 s after start (bin/gantry.js sets that on Node 26 too,
  // which would wait 30 s; run with GANTRY_V8_FLAGS and the 35 s row shows them); a server idle all day sits there.
  await sleep(10_000);
  rows.push(['idle, 15 s after start', await rssMb(pid), `${OCTOPRINT.idle} MB`]);
  await sleep(20_000);
  rows.push(['idle, 35 s after start (after V8\'s idle-time GCs)', await rssMb(pid), `${OCTOPRINT.idle} MB`]);

  const form = new FormData();
  form.append('file', await openAsBlob(join(GCODE_DIR, BIG)), BIG);
  const a0 = performance.now();
  if ((await api('/api/files/local', { method: 'POST', body: form })).status !== 201) throw new Error('upload failed');
  let peak = 0;
  for (;;) {
    peak = Math.max(peak, await rssMb(pid));
    const info = (await (await api(`/api/files/local/${BIG}`)).json()) as { gcodeAnalysis?: unknown };
    if (info.gcodeAnalysis) break;
    await sleep(100);
  }
  const analyseS = (performance.now() - a0) / 1000;
  rows.push([`upload + analysis (${analyseS.toFixed(1)} s), highest sampled`, peak, '-']);
  await sleep(3000);
  rows.push(['3 s after the analysis', await rssMb(pid), '-']);

  /** Connects to `port`, then selects and prints the big file from its start. */
  const printOn = async (port: string, baudrate: number): Promise<void> => {
    const connect = await api('/api/connection', { method: 'POST', body: JSON.stringify({ command: 'connect', port, baudrate }) });
    if (connect.status !== 204) throw new Error(`connect to ${port}: ${connect.status} ${await connect.text()}`);
    let state = '';
    for (let i = 0; i < 100 && state !== 'Operational'; i++) {
      if (i > 0) await sleep(100);
      state = ((await (await api('/api/connection')).json()) as { current: { state: string } }).current.state;
    }
    if (state !== 'Operational') throw new Error(`${port}: ${state}, not Operational`);
    const print = await api(`/api/files/local/${BIG}`, { method: 'POST', body: JSON.stringify({ command: 'select', print: true }) });
    if (print.status !== 204) throw new Error(`print: ${print.status} ${await print.text()}`);
  };
  /** Cancels the print and waits until the printer is idle again. */
  const cancel = async (): Promise<void> => {
    await api('/api/job', { method: 'POST', body: JSON.stringify({ command: 'cancel' }) });
    for (let i = 0; i < 100; i++) {
      const res = await api('/api/job');
      if (res.status === 200 && !/Printing|Cancelling|Pausing|Paused/.test(((await res.json()) as { state: string }).state)) return;
      await sleep(100);
    }
  };
  const completion = async (): Promise<number | null> => {
    const res = await api('/api/job');
    if (res.status === 503) { await res.arrayBuffer(); return null; } // shed while the print saturates the loop (print-first.ts)
    return ((await res.json()) as { progress: { completion: number | null } }).progress.completion ?? 0;
  };
  const fileMb = (await stat(join(GCODE_DIR, BIG))).size / 1048576;

  // At a printer's pace: the reference firmware over the real serial path (a pty, serialport in the link thread). A
  // printer takes lines no faster than that (a 250000-baud wire carries ≈ 650 lines/s of typical G-code), and V8's
  // heaps grow and are collected over tens of seconds at this rate, so the window is long enough to see that.
  const fw = await startFakeFw(dir, ['-d', String(FW_DELAY_US)]);
  try {
    await printOn(fw.port, 250000);
    const pace: number[] = [];
    const p0 = performance.now();
    while (performance.now() - p0 < PACE_S * 1000) {
      await sleep(500);
      pace.push(await rssMb(pid));
    }
    const done = (await completion()) ?? 0;
    await cancel();
    await api('/api/connection', { method: 'POST', body: JSON.stringify({ command: 'disconnect' }) });
    const summary = await fw.stop();
    paceRate = `${Number(summary.lines_per_s ?? 0).toFixed(0)} lines/s, ${(fileMb * done / 100).toFixed(1)} MB`;
    pace.sort((x, y) => x - y);
    const label = `printing to fakefw -d ${FW_DELAY_US}, first ${PACE_S} s`;
    rows.push([`${label}: lowest`, pace[0], '-']);
    rows.push([`${label}: median`, pace[pace.length >> 1], `${OCTOPRINT.printing} MB`]);
    rows.push([`${label}: highest`, pace.at(-1)!, `${OCTOPRINT.printing} MB`]);
  } finally {
    await fw.stop();
  }

  // At full speed: the virtual printer answering at once (throttle 0), so the rate is Gantry's own (≈ 100,000 lines/s
  // here, far beyond any printer): a stress test of the heaps, whose sawtooth then runs every second or so.
  await printOn('VIRTUAL', 115200);
  const samples: number[] = [];
  const streamCpu0 = await cpuMs(pid);
  const s0 = performance.now();
  let progress = 0;
  while (performance.now() - s0 < STREAM_S * 1000) {
    await sleep(500);
    samples.push(await rssMb(pid));
    progress = (await completion()) ?? progress;
    if (progress >= 100) break;
  }
  // CPU per MB sent is the streaming cost on a machine whose load makes the rate itself unreliable.
  const streamedMb = fileMb * (progress / 100);
  streamCost = `${((await cpuMs(pid) - streamCpu0) / streamedMb).toFixed(0)} ms CPU per MB of G-code streamed (${streamedMb.toFixed(1)} MB)`;
  samples.sort((x, y) => x - y);
  rows.push([`full-speed streaming, first ${STREAM_S} s (${progress.toFixed(1)} % of the file): median`, samples[samples.length >> 1], `${OCTOPRINT.printing} MB`]);
  rows.push([`full-speed streaming, first ${STREAM_S} s: highest`, samples.at(-1)!, `${OCTOPRINT.printing} MB`]);
  await cancel();
  await sleep(3000);
  rows.push(['3 s after cancelling the print', await rssMb(pid), '-']);
  // V8's idle-time GCs (or, with the memory balancer, the launcher's) come once the server has been quiet for 8 s.
  await sleep(17_000);
  rows.push(['20 s after cancelling the print (after the idle-time GCs)', await rssMb(pid), '-']);
  rows.push(['high-water mark of the whole run (VmHWM)', await rssMb(pid, 'VmHWM'), '-']);
} finally {
  await g.stop();
}
// Restarts on the same base dir: what a service pays at every boot (the first start also creates the administrator
// account: a scrypt hash, whose 16 MB work area is most of that start's high-water mark). One start's wall time swings
// by ±20 % on a busy machine, so each way of starting is timed RESTARTS times, alternating, and bare Fastify with them.
const RESTARTS = Number(process.env.BENCH_RESTARTS ?? 5);
/**
 * As `node bin/gantry.js serve` starts; as the `gantry` command (bin/gantry, with NODE first on PATH) starts it; and as
 * the systemd unit install-service writes starts it (src/system/systemd-unit.ts).
 */
const launches: Record<'plain' | 'command' | 'unit', { command: string; args: string[]; env: NodeJS.ProcessEnv }> = {
  plain: { command: NODE, args: [join(ROOT, 'bin/gantry.js')], env: SERVICE_ENV },
  command: { command: join(ROOT, 'bin/gantry'), args: [], env: { ...SERVICE_ENV, PATH: `${dirname(NODE)}:${process.env.PATH}` } },
  unit: { command: NODE, args: [...UNIT_NODE_FLAGS, join(ROOT, 'bin/gantry.js')], env: UNIT_ENV },
};
const restartMs: Record<keyof typeof launches | 'bare', number[]> = { plain: [], command: [], unit: [], bare: [] };
let restart: { cpu: number; rss: number; rss15: number } | undefined;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
try {
  for (let i = 0; i < RESTARTS; i++) {
    for (const [name, how] of Object.entries(launches) as [keyof typeof launches, (typeof launches)['plain']][]) {
      const r0 = performance.now();
      const g2 = await startGantryProcess(how.command, [...how.args, 'serve', '--port', '0', '--basedir', dir], how.env);
      try {
        await (await fetch(`${g2.url}/api/version`, { headers: { 'X-Api-Key': g.apiKey } })).arrayBuffer();
        restartMs[name].push(performance.now() - r0);
        // RSS after one of them (the first plain one), as before. The first start above may have compiled every
        // module (a build's first start on this node: no compile cache yet, ≈ 1–2 MB more for good); this one has it.
        if (name === 'plain' && !restart) {
          const cpu = await cpuMs(g2.child.pid!);
          await sleep(5000);
          const rss = await rssMb(g2.child.pid!);
          await sleep(10_000);
          restart = { cpu, rss, rss15: await rssMb(g2.child.pid!) };
        }
      } finally {
        await g2.stop();
      }
    }
    restartMs.bare.push(await bareFastifyStart());
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}

const nodeVersion = execFileSync(NODE, ['--version'], { encoding: 'utf8' }).trim();
console.log(`Gantry built (bin/gantry.js on node ${nodeVersion}${'MALLOC_ARENA_MAX' in SERVICE_ENV ? ', with the systemd unit\'s malloc settings' : ''}), start to first answer ${Math.round(startMs)} ms wall, ${startCpu} ms CPU of the server process (process spawn included; goal ≤ 400 ms, OctoPrint 4–5 s)`);
const list = (xs: number[]) => `median ${Math.round(median(xs))} ms (${xs.map(Math.round).join(', ')})`;
console.log(`restarts on the same base dir, first answer, wall (goal ≤ 400 ms):`);
console.log(`  node bin/gantry.js serve${'MALLOC_ARENA_MAX' in SERVICE_ENV ? ' (malloc settings)' : ''}: ${list(restartMs.plain)}${restart ? `; ${restart.cpu} ms CPU the first time` : ''}`);
console.log(`  gantry serve (bin/gantry: node started once with the unit's options where node knows them, malloc settings): ${list(restartMs.command)}`);
console.log(`  as the systemd unit starts it (${[...UNIT_NODE_FLAGS, 'malloc settings'].join(', ')}): ${list(restartMs.unit)}`);
console.log(`  bare Fastify on the same node: ${list(restartMs.bare)}; its first start ${Math.round(bare.startMs)} ms wall, ${bare.cpu} ms CPU`);
console.log(`load average before / after: ${loadBefore} / ${await loadavg()} (wall-clock start figures on a busy machine are high; CPU time and RSS much less so)`);
console.log(`${'RSS, all processes'.padEnd(62)} ${'Gantry'.padStart(9)}  OctoPrint 1.9.3 (issue 18)`);
console.log(`${'bare Fastify server (one route), 5 s after start'.padEnd(62)} ${`${bare.rss.toFixed(1)} MB`.padStart(9)}  -`);
console.log(`${'bare Fastify server (one route), 15 s after start'.padEnd(62)} ${`${bare.rss15.toFixed(1)} MB`.padStart(9)}  -`);
console.log(`${'bare Fastify server (one route), 35 s after start'.padEnd(62)} ${`${bare.rss35.toFixed(1)} MB`.padStart(9)}  -`);
if (restart) rows.push(['idle, 5 s after a restart', restart.rss, `${OCTOPRINT.idle} MB`], ['idle, 15 s after a restart', restart.rss15, `${OCTOPRINT.idle} MB`]);
for (const [what, mb, octo] of rows) console.log(`${what.padEnd(62)} ${`${mb.toFixed(1)} MB`.padStart(9)}  ${octo}`);
console.log(`goal: idle ≤ ${GOAL.idle} MB, printing ≤ ${GOAL.printing} MB and flat`);
console.log(`printing to fakefw: ${paceRate ?? 'not measured'}`);
console.log(`full-speed streaming cost: ${streamCost ?? 'not measured'}`);
