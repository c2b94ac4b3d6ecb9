// Streaming benchmark: Gantry's engine over the real serialport path to fakefw on a pty, next to idealhost in the same run,
// as ratios (ping-pong / send-ahead at -d 200 and -d 0, under 100 polling HTTP clients), -c 1000 integrity, RSS on 36 MB.
// Usage: npm run bench [-- streaming]   Env: BENCH_FILES=small,benchy (substrings), BENCH_QUICK=1 (two files, cut to
// 20k lines; RSS on the first 300k lines of the big file), BENCH_SCENARIOS (see below), BENCH_POLL_MS (pause between a
// client's polls, default 1000 ms: a dashboard or phone app polling once a second; 100 is a stress test),
// BENCH_PUSH_CLIENTS (200) and BENCH_WRK_CONNS (64): issue 18's loaded print ('push+wrk' scenarios, needs wrk; the load itself: bench/print-load.ts),
// BENCH_PIN=1 (pin fakefw and the host to CPU 1; on 2 shared cores ping-pong rates otherwise swing with scheduling),
// BENCH_REPEATS (default 3): every figure is the median of that many interleaved idealhost/Gantry pairs, and the ratio
// the median of the pairs' ratios — one pair swings by ±20 % on a shared 2-core machine. BENCH_FLOOR=1: for the
// ping-pong scenarios also the least a Node.js host can do (bench/floor-host.ts), on the event loop and blocking.
// BENCH_LINK_THREAD=worker,main: the push+wrk scenarios once per serial.linkThread, in the same run (default: the
// configured default only). BENCH_LOAD_NICE=19: the push clients and wrk run at that nice level, so on a shared machine
// the load takes CPU from others before it takes it from the server it loads.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { startGantry, type Gantry } from '../src/main.ts';
import { fileLineSource } from '../src/printer/job/file-line-source.ts';
import { stripComment } from '../src/gcode/line.ts';
import { BENCH_SRC_DIR, GCODE_DIR } from '../test/helpers/shared-data.ts';
import { LOAD_NICE, POLL_MS, POLLERS, PUSH_CLIENTS, WRK_CONNS, withPollers, withPushAndWrk } from './print-load.ts';

const run = promisify(execFile);
const BENCH_SRC = BENCH_SRC_DIR;
const DATA = GCODE_DIR;
const BIG = 'prusaslicer-2.5.0-debian_vase_0.1mm_generated.gcode';
const QUICK = process.env.BENCH_QUICK === '1';
const PIN = process.env.BENCH_PIN === '1';
const REPEATS = Math.max(1, Number(process.env.BENCH_REPEATS ?? 3));
const FLOOR = process.env.BENCH_FLOOR === '1';
const LINK_THREADS: Array<'worker' | 'main' | undefined> = (process.env.BENCH_LINK_THREAD ?? '').split(',').map((s) => s.trim())
  .filter((s): s is 'worker' | 'main' => s === 'worker' || s === 'main');
if (LINK_THREADS.length === 0) LINK_THREADS.push(undefined);
/** serial.linkThread for the runs that follow (undefined: the configured default). */
let linkThread: 'worker' | 'main' | undefined;
/**
 * BENCH_SCENARIOS=substring,... runs only matching scenarios ('-d 200', 'ping-pong', 'pollers', '-c 1000', 'rss'); an
 * entry starting with '=' matches one label exactly ('=-d 0 ping-pong': not its pollers or push+wrk variants).
 */
const SCENARIOS = (process.env.BENCH_SCENARIOS ?? '').split(',').map((s) => s.trim()).filter(Boolean);
const wanted = (label: string): boolean => SCENARIOS.length === 0 || SCENARIOS.some((s) => (s.startsWith('=') ? label === s.slice(1) : label.includes(s)));

type Mode = 'pingpong' | 'sendahead';
type Summary = Record<string, string>;

// ------------------------------------------------------------------------------------------------ tools

async function build(dir: string): Promise<{ fakefw: string; idealhost: string }> {
  const fakefw = join(dir, 'fakefw');
  const idealhost = join(dir, 'idealhost');
  await run('cc', ['-O2', '-o', fakefw, join(BENCH_SRC, 'fakefw.c')]);
  await run('cc', ['-O2', '-o', idealhost, join(BENCH_SRC, 'idealhost.c')]);
  return { fakefw, idealhost };
}

const pinArgs = (cmd: string, args: string[]): [string, string[]] => (PIN ? ['taskset', ['-c', '1', cmd, ...args]] : [cmd, args]);

async function startFakeFw(bin: string, dir: string, moves: number, args: string[]): Promise<{ port: string; proc: ChildProcess; summary: () => Promise<Summary> }> {
  const port = join(dir, `tty${Math.random().toString(36).slice(2, 8)}`);
  const out = join(dir, `${basename(port)}.summary`);
  const [cmd, argv] = pinArgs(bin, ['-p', port, '-e', String(moves), '-o', out, ...args]);
  const proc = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((resolve, reject) => {
    let buf = '';
    proc.stdout!.on('data', (d: Buffer) => { buf += d.toString(); if (buf.includes('FAKEFW_PTY')) resolve(); });
    proc.once('exit', (c) => reject(new Error(`fakefw exited ${c}`)));
  });
  return {
    port,
    proc,
    async summary() {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGTERM');
        await exited;
      }
      const text = await readFile(out, 'utf8').catch(() => '');
      const first = text.split('\n')[0] ?? '';
      return Object.fromEntries([...first.matchAll(/(\w+)=(\S*)/g)].map((m) => [m[1], m[2]]));
    },
  };
}

/** G0–G3 after stripping comments: what fakefw counts as moves (its -e end marker). */
async function countMoves(file: string): Promise<number> {
  let n = 0;
  const rl = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of rl) if (/^[Gg]0?[0-3](?![0-9])/.test(line.replace(/;.*/, '').trim())) n++;
  return n;
}

/**
 * The most bytes one line of the file can take on the wire (numbered and checksummed, newline included): in ping-pong
 * the firmware's count of bytes received and not yet acknowledged (fakefw's max_inflight_bytes) never exceeds it.
 */
async function longestWireLine(file: string): Promise<number> {
  let longest = 0, lines = 0;
  const rl = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of rl) {
    lines++;
    longest = Math.max(longest, stripComment(line).length);
  }
  // `N<n> ` before, `*<checksum>\n` after; connect-time commands (M110 N0, M115, M21, M105) are shorter.
  return longest + `N${lines + 1000} `.length + '*255\n'.length;
}

/** Ping-pong means one line in flight: more bytes than one line's at the firmware at once is a window bug. */
function oneLineInFlight(s: Summary, longest: number): string | null {
  const max = Number(s.max_inflight_bytes ?? NaN);
  return Number.isFinite(max) && max <= longest ? null : `IN FLIGHT ${s.max_inflight_bytes} bytes > one line (${longest})`;
}

async function truncated(file: string, maxLines: number, dir: string): Promise<string> {
  const out = join(dir, `cut-${basename(file)}`);
  const lines: string[] = [];
  const rl = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of rl) {
    lines.push(line);
    if (lines.length >= maxLines) break;
  }
  rl.close();
  await writeFile(out, lines.join('\n') + '\n');
  return out;
}

// ------------------------------------------------------------------------------------------------ hosts

async function runIdeal(tools: { fakefw: string; idealhost: string }, dir: string, file: string, moves: number, mode: Mode, fw: string[]): Promise<Summary> {
  const f = await startFakeFw(tools.fakefw, dir, moves, fw);
  const [cmd, argv] = pinArgs(tools.idealhost, ['-m', mode, f.port, file]);
  await run(cmd, argv, { maxBuffer: 1 << 20 }).catch((err: Error) => console.error(`  idealhost failed: ${err.message}`));
  return f.summary();
}

async function runFloor(tools: { fakefw: string }, dir: string, file: string, moves: number, kind: 'loop' | 'blocking', fw: string[]): Promise<Summary> {
  const f = await startFakeFw(tools.fakefw, dir, moves, fw);
  const host = fileURLToPath(new URL('./floor-host.ts', import.meta.url));
  const [cmd, argv] = pinArgs(process.execPath, ['--import', 'tsx', host, kind, f.port, file]);
  await run(cmd, argv, { maxBuffer: 1 << 20 }).catch((err: Error) => console.error(`  floor host failed: ${err.message}`));
  return f.summary();
}

interface GantryRun { summary: Summary; outcome: string; rss: number[] }

async function runGantry(g: Gantry, bin: string, dir: string, file: string, moves: number, mode: Mode, fw: string[], sampleRss = false): Promise<GantryRun> {
  await g.config.patch({ serial: { rxBufferSize: mode === 'sendahead' ? 127 : 0, log: false, ...(linkThread ? { linkThread } : {}) } });
  const f = await startFakeFw(bin, dir, moves, fw);
  await g.printer.connect({ port: f.port, baudrate: 250000 });
  const deadline = Date.now() + 20_000;
  while (g.printer.state().text !== 'Operational') {
    if (Date.now() > deadline) throw new Error(`not operational: ${g.printer.state().text} ${g.printer.state().error}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const rss: number[] = [];
  const sampler = sampleRss ? setInterval(() => rss.push(process.memoryUsage().rss), 1000) : null;
  const outcome = await new Promise<string>((resolve) => {
    g.printer.streamJob(fileLineSource(file), { finished: (o, _pos, err) => resolve(err ? `${o}: ${err}` : o) });
  });
  if (sampler) clearInterval(sampler);
  await g.printer.disconnect();
  return { summary: await f.summary(), outcome, rss };
}

// ------------------------------------------------------------------------------------------------ report

const rate = (s: Summary): number => Number(s.lines_per_s ?? 0);
const median = (xs: number[]): number => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length === 0 ? 0 : v.length % 2 ? v[v.length >> 1] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

/** REPEATS interleaved pairs (reference first); medians of each side and of the pairs' ratios. */
async function pairs(reference: () => Promise<number>, candidate: () => Promise<number>): Promise<{ ref: number; cand: number; ratio: number }> {
  const refs: number[] = [], cands: number[] = [], ratios: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const r = await reference();
    const c = await candidate();
    refs.push(r);
    cands.push(c);
    if (r > 0) ratios.push(c / r);
  }
  return { ref: median(refs), cand: median(cands), ratio: median(ratios) };
}
const fmtRate = (n: number): string => n.toFixed(0).padStart(7);

function check(s: Summary, moves: number): string {
  return s.why === 'expected_moves' && Number(s.moves) >= moves ? 'complete' : `INCOMPLETE (${s.why} moves=${s.moves}/${moves})`;
}

/** Issue 57's table: each row's ratio per file (in the order the files ran) against its goal. */
function printTable(totals: Record<string, number[]>): void {
  const rows: Array<[string, (k: string) => boolean, number]> = [
    ['`-d 200` ping-pong', (k) => k === '-d 200 ping-pong', 0.95],
    ['`-d 200` send-ahead', (k) => k === '-d 200 send-ahead', 0.95],
    ['`-d 0` ping-pong', (k) => k === '-d 0 ping-pong', 0.95],
    ['`-d 0` send-ahead', (k) => k === '-d 0 send-ahead', 0.9],
    ['loaded (push + wrk) ÷ unloaded', (k) => k.includes('push +wrk'), 0.95],
  ];
  const lines = rows.flatMap(([row, match, goal]) => {
    const keys = Object.keys(totals).filter(match);
    if (keys.length === 0) return [];
    const cells = keys.map((k) => totals[k].map((v) => v.toFixed(2)).join(' / ')).join(' · ');
    const all = keys.flatMap((k) => totals[k]);
    return [`| ${row} | ${cells} | ≥ ${goal} | ${all.every((v) => v >= goal) ? 'met' : 'not met'} |`];
  });
  if (lines.length === 0) return;
  console.log('\n| scenario | ratio (per file) | goal | |\n|---|---|---|---|');
  for (const l of lines) console.log(l);
}

export async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'gantry-bench-'));
  const tools = await build(work);
  const filter = (process.env.BENCH_FILES ?? (QUICK ? 'small,benchy_mini' : '')).split(',').map((s) => s.trim()).filter(Boolean);
  let files = (await readdir(DATA)).filter((f) => f.endsWith('.gcode') && f !== BIG).sort();
  if (filter.length) files = files.filter((f) => filter.some((x) => f.includes(x)));
  const g = await startGantry({ baseDir: join(work, 'base'), host: '127.0.0.1', port: 0, settings: { serial: { additionalPorts: [`${work}/tty*`] } } });
  if (PIN) await run('taskset', ['-a', '-p', '-c', '1', String(process.pid)]).catch(() => {});
  console.log(`streaming benchmark: ${files.length} file(s)${QUICK ? ' (quick: cut to 20k lines)' : ''}, 250000 baud pty, pinned=${PIN}`);
  console.log(`every figure: median of ${REPEATS} interleaved pair(s); ratio = median of the pairs' ratios`);
  const totals: Record<string, number[]> = {};
  const add = (k: string, ratio: number) => { (totals[k] ??= []).push(ratio); };
  try {
    for (const name of files) {
      const file = QUICK ? await truncated(join(DATA, name), 20_000, work) : join(DATA, name);
      const moves = await countMoves(file);
      const longest = await longestWireLine(file);
      console.log(`\n${name}: ${moves} moves, longest line ${longest} bytes on the wire`);
      for (const [label, fw, mode] of ([
        ['-d 200 ping-pong', ['-d', '200'], 'pingpong'],
        ['-d 200 send-ahead', ['-d', '200'], 'sendahead'],
        ['-d 0 ping-pong', [], 'pingpong'],
        ['-d 0 send-ahead', [], 'sendahead'],
      ] as [string, string[], Mode][]).filter(([l]) => wanted(l))) {
        const problems = new Set<string>();
        let maxFlight = 0;
        const r = await pairs(
          async () => rate(await runIdeal(tools, work, file, moves, mode, fw)),
          async () => {
            const gan = await runGantry(g, tools.fakefw, work, file, moves, mode, fw);
            const c = check(gan.summary, moves);
            if (c !== 'complete' || gan.outcome !== 'done') problems.add(`${c} ${gan.outcome}`);
            const flight = mode === 'pingpong' ? oneLineInFlight(gan.summary, longest) : null;
            if (flight) problems.add(flight);
            else if (mode === 'pingpong') maxFlight = Math.max(maxFlight, Number(gan.summary.max_inflight_bytes));
            return rate(gan.summary);
          });
        add(label, r.ratio);
        const flightNote = mode === 'pingpong' && maxFlight > 0 ? `, one line in flight (≤ ${maxFlight} bytes)` : '';
        console.log(`  ${label.padEnd(30)} gantry ${fmtRate(r.cand)} l/s  idealhost ${fmtRate(r.ref)} l/s  ratio ${r.ratio.toFixed(2)}  ${problems.size ? [...problems].join('; ') : `complete done${flightNote}`}`);
        if (!FLOOR || mode !== 'pingpong') continue;
        for (const kind of ['loop', 'blocking'] as const) {
          const name = `${label} node floor (${kind})`;
          const fr = await pairs(
            async () => rate(await runIdeal(tools, work, file, moves, mode, fw)),
            async () => rate(await runFloor(tools, work, file, moves, kind, fw)));
          add(name, fr.ratio);
          console.log(`  ${name.padEnd(30)} minimal ${fmtRate(fr.cand)} l/s  idealhost ${fmtRate(fr.ref)} l/s  ratio ${fr.ratio.toFixed(2)}`);
        }
      }
      for (const [label, fw, mode] of ([
        ['-d 200 ping-pong', ['-d', '200'], 'pingpong'],
        ['-d 0 ping-pong', [], 'pingpong'],
        ['-d 0 send-ahead', [], 'sendahead'],
      ] as [string, string[], Mode][]).filter(([l]) => wanted(`${l} pollers`))) {
        const name = `${label} +${POLLERS} pollers/${POLL_MS}ms`;
        const problems = new Set<string>();
        let requests = 0, errors = 0, seconds = 0;
        const r = await pairs(
          async () => rate((await runGantry(g, tools.fakefw, work, file, moves, mode, fw)).summary),
          async () => {
            const loaded = await withPollers(g, () => runGantry(g, tools.fakefw, work, file, moves, mode, fw));
            requests += loaded.requests;
            errors += loaded.errors;
            seconds += loaded.seconds;
            const c = check(loaded.result.summary, moves);
            if (c !== 'complete') problems.add(c);
            const flight = mode === 'pingpong' ? oneLineInFlight(loaded.result.summary, longest) : null;
            if (flight) problems.add(flight);
            return rate(loaded.result.summary);
          });
        add(name, r.ratio);
        console.log(`  ${name.padEnd(30)} gantry ${fmtRate(r.cand)} l/s  unloaded ${fmtRate(r.ref)} l/s  ratio ${r.ratio.toFixed(2)}  ` +
          `(${(requests / seconds).toFixed(0)} req/s, ${errors} errors) ${problems.size ? [...problems].join('; ') : 'complete'}`);
      }
      // Issue 18: "the print comes first". wrk's requests were sent during the print (503s are shed load, counted).
      const hasWrk = spawnSync('wrk', ['--version']).error === undefined;
      for (const [label, fw, mode, lt] of ([
        ['-d 200 ping-pong', ['-d', '200'], 'pingpong'],
        ['-d 200 send-ahead', ['-d', '200'], 'sendahead'],
      ] as [string, string[], Mode][]).filter(([l]) => hasWrk && wanted(`${l} push+wrk`)).flatMap((s) => LINK_THREADS.map((lt) => [...s, lt] as const))) {
        linkThread = lt;
        const name = `${label} +${PUSH_CLIENTS} push +wrk c${WRK_CONNS}${lt ? ` [${lt}]` : ''}${LOAD_NICE !== null ? ` nice ${LOAD_NICE}` : ''}`;
        const problems = new Set<string>();
        let requests = 0, errors = 0, seconds = 0, messages = 0;
        const r = await pairs(
          async () => rate((await runGantry(g, tools.fakefw, work, file, moves, mode, fw)).summary),
          async () => {
            const loaded = await withPushAndWrk(g, () => runGantry(g, tools.fakefw, work, file, moves, mode, fw));
            requests += loaded.requests;
            errors += loaded.errors;
            seconds += loaded.seconds;
            messages += loaded.messages;
            const c = check(loaded.result.summary, moves);
            if (c !== 'complete') problems.add(c);
            const flight = mode === 'pingpong' ? oneLineInFlight(loaded.result.summary, longest) : null;
            if (flight) problems.add(flight);
            return rate(loaded.result.summary);
          });
        add(name, r.ratio);
        console.log(`  ${name.padEnd(30)} gantry ${fmtRate(r.cand)} l/s  unloaded ${fmtRate(r.ref)} l/s  ratio ${r.ratio.toFixed(2)} (goal ≥ 0.9)  ` +
          `(wrk ${(requests / seconds).toFixed(0)} req/s, ${errors} non-2xx: 409 before connect and after the print, 503 shed; ${(messages / seconds).toFixed(0)} push msgs/s) ${problems.size ? [...problems].join('; ') : 'complete'}`);
      }
      linkThread = undefined;
      if (!wanted('-c 1000')) continue;
      const c = await runGantry(g, tools.fakefw, work, file, moves, 'sendahead', ['-c', '1000']);
      const ci = await runIdeal(tools, work, file, moves, 'sendahead', ['-c', '1000']);
      console.log(`  ${'-c 1000 send-ahead'.padEnd(30)} gantry ${fmtRate(rate(c.summary))} l/s  ${check(c.summary, moves)} (${c.summary.injected} corrupted, ${c.summary.resends} resends) ${c.outcome}; idealhost ${check(ci, moves)}`);
      const cp = await runGantry(g, tools.fakefw, work, file, moves, 'pingpong', ['-c', '1000']);
      console.log(`  ${'-c 1000 ping-pong'.padEnd(30)} gantry ${fmtRate(rate(cp.summary))} l/s  ${check(cp.summary, moves)} (${cp.summary.injected} corrupted) ${cp.outcome}`);
    }
    console.log('\nper scenario over the files (median of the per-file ratios, range):');
    for (const [k, v] of Object.entries(totals)) console.log(`  ${k.padEnd(40)} ratio ${median(v).toFixed(2)}  (${Math.min(...v).toFixed(2)}–${Math.max(...v).toFixed(2)}, ${v.length} file(s))`);
    printTable(totals);

    const big = QUICK ? await truncated(join(DATA, BIG), 300_000, work) : join(DATA, BIG);
    if ((!process.env.BENCH_FILES || filter.some((x) => BIG.includes(x)) || QUICK) && wanted('rss')) {
      const moves = await countMoves(big);
      const r = await runGantry(g, tools.fakefw, work, big, moves, 'sendahead', [], true);
      const mb = (n: number) => (n / 1048576).toFixed(0);
      const half = Math.floor(r.rss.length / 2);
      const firstHalf = Math.max(...r.rss.slice(0, half || 1));
      const secondHalf = Math.max(...r.rss.slice(half));
      console.log(`\nRSS streaming ${basename(big)} (${moves} moves, -d 0 send-ahead): ${rate(r.summary).toFixed(0)} l/s, ` +
        `rss min ${mb(Math.min(...r.rss))} MB, max ${mb(Math.max(...r.rss))} MB, max first half ${mb(firstHalf)} MB, max second half ${mb(secondHalf)} MB ` +
        `(${secondHalf <= firstHalf * 1.1 ? 'flat' : 'GROWING'}), ${check(r.summary, moves)} ${r.outcome}`);
    }
  } finally {
    await g.stop();
    await rm(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
