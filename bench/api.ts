// API throughput benchmark: the built server against a bare Fastify route answering the same bytes, measured with wrk in one run, per workload of issue 18, with ratios.
// Usage: npm run bench -- api   Env: BENCH_API_S (seconds per workload and server, default 10; BENCH_QUICK=1: 3),
// BENCH_API_CONNS (wrk connections, default 8), BENCH_NODE (the node binary both servers run on, default this one).
// Needs wrk (apt-get install wrk).
// Besides req/s, each server's CPU time per request is printed (µs/req, from /proc): on a shared, loaded machine
// req/s follow the load, the CPU a request costs much less so.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, ensureBuilt, startGantryProcess } from '../test/helpers/built-server.ts';

const SECONDS = Number(process.env.BENCH_API_S ?? (process.env.BENCH_QUICK ? 3 : 10));
const CONNS = Number(process.env.BENCH_API_CONNS ?? 8);
const NODE = process.env.BENCH_NODE || process.execPath;
const WARMUP_SECONDS = 2;
const MIXED = ['/api/job', '/api/printer', '/api/version', '/api/connection', '/api/files'];
/** Issue 18's figures (same kind of 2-core machine) and goals. */
const WORKLOADS = [
  { name: 'GET /api/version', paths: ['/api/version'], octoprint: '≈ 700', goal: '≥ 0.5 × bare' },
  { name: 'mixed (job, printer, version, connection, files)', paths: MIXED, octoprint: '≈ 590', goal: '≥ 15,000 req/s, p99 < 5 ms' },
  { name: 'GET /api/settings', paths: ['/api/settings'], octoprint: '12', goal: '≥ 5,000 req/s' },
];

if (spawnSync('wrk', ['--version']).error) {
  console.log('bench/api.ts skipped: wrk is not installed (apt-get install wrk)');
  process.exit(0);
}

interface WrkResult { rps: number; p50: number; p99: number; errors: string; requests: number }

/** CPU time (user + system, ms) a process has used so far. */
async function cpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 1000 / 100;
}

/** wrk against `base`, with the server's CPU time per request (µs) over the run. */
async function measured(pid: number, base: string, paths: string[], key: string, dir: string): Promise<WrkResult & { cpuUs: number }> {
  const before = await cpuMs(pid);
  const r = await wrk(base, paths, key, dir);
  return { ...r, cpuUs: ((await cpuMs(pid)) - before) * 1000 / r.requests };
}

function ms(s: string): number {
  const m = /([\d.]+)(us|ms|s)/.exec(s);
  if (!m) return NaN;
  return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
}

async function wrk(base: string, paths: string[], key: string, dir: string, seconds = SECONDS): Promise<WrkResult> {
  const script = join(dir, `paths-${paths.length}.lua`);
  await writeFile(script, `local paths = {${paths.map((p) => JSON.stringify(p)).join(', ')}}\nlocal i = 0\n` +
    'request = function()\n  i = i % #paths + 1\n  return wrk.format("GET", paths[i])\nend\n');
  const out = spawnSync('wrk', ['-t', '2', '-c', String(CONNS), '-d', `${seconds}s`, '--latency', '-H', `X-Api-Key: ${key}`, '-s', script, base],
    { encoding: 'utf8' });
  const text = out.stdout;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? NaN);
  const p50 = ms(/^\s+50%\s+(\S+)/m.exec(text)?.[1] ?? '');
  const p99 = ms(/^\s+99%\s+(\S+)/m.exec(text)?.[1] ?? '');
  const errors = [/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[0], /Socket errors: .*/.exec(text)?.[0]].filter(Boolean).join('; ');
  return { rps, p50, p99, errors, requests: Number(/(\d+) requests in/.exec(text)?.[1] ?? NaN) };
}

/** A bare Fastify (no logger, no hooks) answering each path with the bytes and content type Gantry sent for it. */
async function startBare(bodies: Record<string, { type: string; body: string; status: number }>): Promise<{ url: string; pid: number; stop(): void }> {
  const code = `
    import Fastify from 'fastify';
    const bodies = ${JSON.stringify(bodies)};
    const app = Fastify();
    for (const [path, r] of Object.entries(bodies)) app.get(path, async (_q, reply) => reply.code(r.status).type(r.type).send(r.body));
    await app.listen({ port: 0, host: '127.0.0.1' });
    console.log('bare at http://127.0.0.1:' + app.server.address().port);`;
  const child = spawn(NODE, ['--input-type=module', '-e', code], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /bare at (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', (c) => reject(new Error(`bare server exited with ${c}`)));
  });
  return { url, pid: child.pid!, stop: () => child.kill() };
}

await ensureBuilt();
const dir = await mkdtemp(join(tmpdir(), 'gantry-bench-api-'));
const nodeVersion = spawnSync(NODE, ['--version'], { encoding: 'utf8' }).stdout.trim();
const g = await startGantryProcess(NODE, [join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', join(dir, 'base')]);
let bare: { url: string; pid: number; stop(): void } | undefined;
try {
  const headers = { 'X-Api-Key': g.apiKey, 'Content-Type': 'application/json' };
  // The virtual printer connected, so /api/printer and /api/job answer as while a printer is attached.
  await fetch(`${g.url}/api/connection`, { method: 'POST', headers, body: JSON.stringify({ command: 'connect', port: 'VIRTUAL' }) });
  for (let i = 0; i < 100; i++) {
    const c = (await (await fetch(`${g.url}/api/connection`, { headers })).json()) as { current: { state: string } };
    if (c.current.state === 'Operational') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const bodies: Record<string, { type: string; body: string; status: number }> = {};
  for (const path of new Set(WORKLOADS.flatMap((w) => w.paths))) {
    const res = await fetch(`${g.url}${path}`, { headers });
    bodies[path] = { status: res.status, type: res.headers.get('content-type') ?? 'application/json', body: await res.text() };
  }
  bare = await startBare(bodies);

  // Both servers warm up first (JIT, lazily compiled schemas): otherwise the first workload measured pays for it alone.
  const all = [...new Set(WORKLOADS.flatMap((w) => w.paths))];
  for (const url of [bare.url, g.url]) await wrk(url, all, g.apiKey, dir, WARMUP_SECONDS);
  console.log(`wrk -t2 -c${CONNS}, ${SECONDS} s per run after a ${WARMUP_SECONDS} s warm-up; Gantry built (node ${nodeVersion}) vs a bare Fastify route sending the same bytes`);
  console.log('CPU µs/req: the server process\'s CPU time per answered request; cpu ratio = bare µs / Gantry µs (robust to load)');
  console.log(`${'workload'.padEnd(50)} ${'bare req/s'.padStart(11)} ${'Gantry req/s'.padStart(13)} ${'ratio'.padStart(6)} ${'p50'.padStart(8)} ${'p99'.padStart(8)} ` +
    `${'bare µs'.padStart(8)} ${'Gantry µs'.padStart(10)} ${'cpu ratio'.padStart(9)}  ${'load'.padStart(5)}  OctoPrint  goal`);
  for (const w of WORKLOADS) {
    const b = await measured(bare.pid, bare.url, w.paths, g.apiKey, dir);
    const r = await measured(g.child.pid!, g.url, w.paths, g.apiKey, dir);
    console.log(`${w.name.padEnd(50)} ${b.rps.toFixed(0).padStart(11)} ${r.rps.toFixed(0).padStart(13)} ${(r.rps / b.rps).toFixed(2).padStart(6)} ` +
      `${`${r.p50.toFixed(2)}ms`.padStart(8)} ${`${r.p99.toFixed(2)}ms`.padStart(8)} ${b.cpuUs.toFixed(1).padStart(8)} ${r.cpuUs.toFixed(1).padStart(10)} ` +
      `${(b.cpuUs / r.cpuUs).toFixed(2).padStart(9)}  ${loadavg()[0].toFixed(1).padStart(5)}  ${w.octoprint.padEnd(9)}  ${w.goal}${r.errors ? `  (Gantry: ${r.errors})` : ''}`);
  }
} finally {
  bare?.stop();
  await g.stop();
  await rm(dir, { recursive: true, force: true });
}
