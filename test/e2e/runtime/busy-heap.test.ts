// While requests keep the main thread busy, the launcher gives V8's heaps room: the young generation grows to the ceiling it set on node's command line, and full GCs come seconds apart, not once a second.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ROOT, ensureBuilt, startGantryProcess } from '../../helpers/built-server.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { waitFor } from '../../helpers/wait.ts';

before(ensureBuilt);

/** MB each scavenge freed, from the lines V8 prints for --trace-gc ("Scavenge 16.4 (19.2) -> 15.5 (19.2) MB, …"). */
function scavenged(trace: string): number[] {
  return [...trace.matchAll(/Scavenge ([\d.]+) \([\d.]+\) -> ([\d.]+) \(/g)].map((m) => Number(m[1]) - Number(m[2]));
}

/** When each full GC began, in ms of V8's clock, from the --trace-gc lines ("[pid:0x…]  6360 ms: Mark-Compact …"). */
function fullGcTimes(trace: string): number[] {
  return [...trace.matchAll(/\]\s+(\d+) ms: Mark-Compact/g)].map((m) => Number(m[1]));
}

/** The time of the last line V8 printed for --trace-gc, in ms of its clock. */
function lastTraceTime(trace: string): number | undefined {
  const times = [...trace.matchAll(/\]\s+(\d+) ms: /g)];
  return times.length ? Number(times[times.length - 1][1]) : undefined;
}

/** GET over a kept-alive connection (node:http costs the client less than fetch). */
function get(agent: Agent, url: string, key: string): Promise<void> {
  return new Promise((resolve, reject) => {
    request(url, { agent, headers: { 'X-Api-Key': key } }, (res) => { res.resume(); res.on('end', resolve); }).on('error', reject).end();
  });
}

/**
 * Five thousand G-code commands for a printer that is not connected: the server parses and checks the whole body before
 * it answers 409, while the client only writes the same bytes again. Busy work for the server even when a loaded
 * machine leaves this process little of the CPU.
 */
const COMMANDS = Buffer.from(JSON.stringify({ commands: Array.from({ length: 5_000 }, (_, i) => `G1 X${i % 200} Y${i % 150} F3000`) }));
function postCommands(agent: Agent, url: string, key: string): Promise<void> {
  return new Promise((resolve, reject) => {
    request(url, { agent, method: 'POST', headers: { 'X-Api-Key': key, 'Content-Type': 'application/json', 'Content-Length': COMMANDS.length } },
      (res) => { res.resume(); res.on('end', resolve); }).on('error', reject).end(COMMANDS);
  });
}

const NO_REEXECUTION = typeof (process as { execve?: unknown }).execve !== 'function' || process.platform !== 'linux'
  ? 'needs Linux and Node ≥ 22.15 (the launcher sets the ceiling and the balancer by re-executing itself)' : false;

function skipReason(): string | false {
  if (NO_REEXECUTION) return NO_REEXECUTION;
  // V8 14 keeps the young generation at its --optimize-for-size size whatever the growth factor: the switch does nothing.
  if (Number(process.versions.v8.split('.')[0]) >= 14) return 'V8 ≥ 14 (Node 26) does not grow the young generation under --optimize-for-size';
  return false;
}

test('the young generation grows past its first 1 MB only while requests keep the server busy', { skip: skipReason() }, async (t) => {
  const dir = await tempDir(t, 'gantry-young-');
  const g = await startGantryProcess(process.execPath, ['--trace-gc', join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', dir]);
  t.after(() => g.stop());
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  t.after(() => agent.destroy());
  const url = `${g.url}/api/settings`;

  // A client polling every 5 ms: scavenges, but the server is mostly idle.
  let mark = g.stdout().length;
  for (const end = Date.now() + 3_000; Date.now() < end;) {
    await get(agent, url, g.apiKey);
    await delay(5);
  }
  const slow = scavenged(g.stdout().slice(mark));
  assert.ok(slow.length > 0, 'the slow client made the server scavenge');
  assert.ok(Math.max(...slow) < 1.3, `at a slow pace no scavenge freed more than the first 1 MB: ${slow.join(' ')}`);

  // Eight clients back to back keep the server's event loop busy, until a scavenge shows the young generation grown.
  mark = g.stdout().length;
  const busy = () => scavenged(g.stdout().slice(mark));
  let done = false;
  const clients = Promise.all(Array.from({ length: 8 }, async () => {
    while (!done) await postCommands(agent, `${g.url}/api/printer/command`, g.apiKey);
  }));
  try {
    await waitFor('a scavenge freeing more than the first 1 MB while the server is busy', () => busy().some((mb) => mb > 1.3), { timeoutMs: 30_000, intervalMs: 200 })
      .catch((err: Error) => { throw new Error(`${err.message}; scavenges freed ${busy().slice(-20).join(' ')} MB`); });
  } finally {
    done = true;
    await clients;
  }
});

test('while requests keep the server busy, full GCs come seconds apart, not at every heartbeat of the memory balancer', { skip: NO_REEXECUTION }, async (t) => {
  const dir = await tempDir(t, 'gantry-busy-gc-');
  const g = await startGantryProcess(process.execPath, ['--trace-gc', join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', dir]);
  t.after(() => g.stop());
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  t.after(() => agent.destroy());

  // The balancer recomputes each heap's limit once a second, and with V8's own constant that limit fell to 2 MB over
  // the live data: under this load a full GC followed at nearly every one of them. The launcher looks at the event
  // loop once a second, so the window starts 2 s into the load; 8 s of V8's clock go by, however slow the machine.
  const mark = g.stdout().length;
  const trace = () => g.stdout().slice(mark);
  let done = false;
  const clients = Promise.all(Array.from({ length: 8 }, async () => {
    while (!done) await postCommands(agent, `${g.url}/api/printer/command`, g.apiKey);
  }));
  let from = 0;
  try {
    const first = await waitFor('a GC once the load began', () => lastTraceTime(trace()), { timeoutMs: 30_000, intervalMs: 100 });
    from = first + 2_000;
    await waitFor('8 s of load in V8\'s clock', () => (lastTraceTime(trace()) ?? 0) >= from + 8_000, { timeoutMs: 60_000, intervalMs: 200 });
  } finally {
    done = true;
    await clients;
  }
  const inWindow = fullGcTimes(trace()).filter((at) => at >= from && at < from + 8_000);
  assert.ok(inWindow.length <= 3, `at most 3 full GCs in 8 s of load, not one a second: ${inWindow.length} at ${inWindow.map((at) => at - from).join(', ')} ms`);
});
