// The launcher's heap tuning under load, as figures with goals: while requests keep the main thread busy the young
// generation grows past its first 1 MB (and stays at it while the server idles), and full GCs come seconds apart, not
// at every heartbeat of the memory balancer. A property of the runtime under a given load, so it lives here rather
// than in a timed test: on a machine loaded by something else the "idle" server is CPU-starved and looks busy.
import { Agent, request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ROOT, ensureBuilt, startGantryProcess } from '../test/helpers/built-server.ts';

/** MB each scavenge freed, from the lines V8 prints for --trace-gc ("Scavenge 16.4 (19.2) -> 15.5 (19.2) MB, …"). */
function scavenged(trace: string): number[] {
  return [...trace.matchAll(/Scavenge ([\d.]+) \([\d.]+\) -> ([\d.]+) \(/g)].map((m) => Number(m[1]) - Number(m[2]));
}
/** When each full GC began, in ms of V8's clock ("[pid:0x…]  6360 ms: Mark-Compact …"). */
function fullGcTimes(trace: string): number[] {
  return [...trace.matchAll(/\]\s+(\d+) ms: Mark-Compact/g)].map((m) => Number(m[1]));
}
function lastTraceTime(trace: string): number | undefined {
  const times = [...trace.matchAll(/\]\s+(\d+) ms: /g)];
  return times.length ? Number(times[times.length - 1][1]) : undefined;
}
async function until<T>(what: string, check: () => T | undefined | false, timeoutMs: number): Promise<T> {
  for (const end = Date.now() + timeoutMs; Date.now() < end;) {
    const v = check();
    if (v !== undefined && v !== false) return v;
    await delay(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

function get(agent: Agent, url: string, key: string): Promise<void> {
  return new Promise((resolve, reject) => {
    request(url, { agent, headers: { 'X-Api-Key': key } }, (res) => { res.resume(); res.on('end', resolve); }).on('error', reject).end();
  });
}
/** Five thousand commands for a printer that is not connected: the server parses and checks the body, then 409. */
const COMMANDS = Buffer.from(JSON.stringify({ commands: Array.from({ length: 5_000 }, (_, i) => `G1 X${i % 200} Y${i % 150} F3000`) }));
function postCommands(agent: Agent, url: string, key: string): Promise<void> {
  return new Promise((resolve, reject) => {
    request(url, { agent, method: 'POST', headers: { 'X-Api-Key': key, 'Content-Type': 'application/json', 'Content-Length': COMMANDS.length } },
      (res) => { res.resume(); res.on('end', resolve); }).on('error', reject).end(COMMANDS);
  });
}

if (typeof (process as { execve?: unknown }).execve !== 'function' || process.platform !== 'linux') {
  console.log('skipped: needs Linux and Node ≥ 22.15 (the launcher sets the ceiling and the balancer by re-executing itself)');
  process.exit(0);
}
await ensureBuilt();
const dir = await mkdtemp(join(tmpdir(), 'gantry-busy-heap-'));
const g = await startGantryProcess(process.execPath, ['--trace-gc', join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', dir]);
const agent = new Agent({ keepAlive: true, maxSockets: 8 });
let failed = 0;
const goal = (ok: boolean, text: string) => { console.log(`${ok ? 'ok  ' : 'MISS'} ${text}`); if (!ok) failed++; };
console.log(`load average before: ${loadavg()[0].toFixed(2)} (figures are meaningful on a quiet machine only)`);
try {
  // A client polling every 5 ms: scavenges, but the server is mostly idle.
  let mark = g.stdout().length;
  for (const end = Date.now() + 3_000; Date.now() < end;) {
    await get(agent, `${g.url}/api/settings`, g.apiKey);
    await delay(5);
  }
  const slow = scavenged(g.stdout().slice(mark));
  goal(slow.length > 0 && Math.max(...slow) < 1.3, `slow client: largest scavenge ${Math.max(...slow).toFixed(1)} MB of ${slow.length} (goal < 1.3: the first 1 MB)`);

  // Eight clients back to back: the young generation grows, and full GCs stay seconds apart.
  mark = g.stdout().length;
  const trace = () => g.stdout().slice(mark);
  let done = false;
  const clients = Promise.all(Array.from({ length: 8 }, async () => {
    while (!done) await postCommands(agent, `${g.url}/api/printer/command`, g.apiKey);
  }));
  let grown = false;
  let from = 0;
  try {
    grown = await until('a scavenge over 1.3 MB', () => scavenged(trace()).some((mb) => mb > 1.3), 30_000).catch(() => false);
    const first = await until('a GC once the load began', () => lastTraceTime(trace()), 30_000);
    // The launcher looks at the event loop once a second, so the window starts 2 s into the load; 8 s of V8's clock.
    from = first + 2_000;
    await until('8 s of load in V8\'s clock', () => (lastTraceTime(trace()) ?? 0) >= from + 8_000, 60_000);
  } finally {
    done = true;
    await clients;
  }
  const busy = scavenged(trace());
  // V8 14 (Node 26) keeps the young generation at its --optimize-for-size size whatever the growth factor.
  if (Number(process.versions.v8.split('.')[0]) >= 14) console.log(`n/a  busy: largest scavenge ${Math.max(0, ...busy).toFixed(1)} MB (V8 ≥ 14 does not grow the young generation under --optimize-for-size)`);
  else goal(grown, `busy: largest scavenge ${Math.max(0, ...busy).toFixed(1)} MB (goal > 1.3: the young generation grew)`);
  const inWindow = fullGcTimes(trace()).filter((at) => at >= from && at < from + 8_000);
  goal(inWindow.length <= 3, `busy: ${inWindow.length} full GCs in 8 s of load (goal ≤ 3, not one a second)`);
} finally {
  agent.destroy();
  await g.stop();
  await rm(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
