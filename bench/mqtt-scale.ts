// MQTT at farm scale: one Mosquitto, N Gantry processes each printing on its virtual printer, one subscriber to `#`.
// Reports messages/s through the broker, event→subscriber latency (p50/p99, from the MQTT 5 `ts` user property),
// Gantry CPU per instance with MQTT on vs off, and the print's streaming rate (file bytes/s) with MQTT off, on, and on
// while another client floods the broker (the printer must not wait on the broker: ratio ≥ 0.95).
// The same processes keep printing throughout; MQTT is switched off and on through /api/settings (applied live), and
// the windows alternate (off, on, flood, then the reverse order) so a change in the machine's load hits both sides of
// each ratio alike. Each window also records the load average and how long each Gantry's main thread sat runnable but
// not running (run-queue wait from /proc/<pid>/schedstat): that tells "waiting for a CPU" from "waiting on something".
// N from MQTT_SCALE_N (default 5), window from MQTT_SCALE_SECONDS, rounds from MQTT_SCALE_ROUNDS (default 2).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, connect as tcpConnect } from 'node:net';
import { loadavg, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import mqtt from 'mqtt';

const N = Number(process.env.MQTT_SCALE_N ?? 5);
const WINDOW_S = Number(process.env.MQTT_SCALE_SECONDS ?? 20);
const ROUNDS = Number(process.env.MQTT_SCALE_ROUNDS ?? 2);
/** Virtual printer time scale: 0.2 runs a print five times faster than real (about a layer a second here); 0 as fast as the link allows. */
const THROTTLE = Number(process.env.MQTT_SCALE_THROTTLE ?? 0.2);
/** The built server (plain node, as users run it): N tsx start-ups would cost minutes on a small machine. */
const CLI = new URL('../bin/gantry.js', import.meta.url).pathname;
const ROOT = new URL('..', import.meta.url).pathname;
const KEY = 'MQTTSCALEBENCHKEY';
const CLK_TCK = 100;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

async function waitPort(port: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = tcpConnect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`nothing listens on ${port}`);
}

/** CPU seconds (user + system) a process used so far. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/**
 * fetch that tries a second time when the connection dropped before an answer (a kept-alive socket the server closed
 * just then: under heavy load the idle timeout races the next request). Only for the bench's idempotent reads and
 * settings writes.
 */
async function fetchAgain(url: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch {
    return fetch(url, init);
  }
}

/** Main-thread run-queue wait in seconds (second field of /proc/<pid>/schedstat, ns). */
async function runQueueWait(pid: number): Promise<number> {
  return Number((await readFile(`/proc/${pid}/schedstat`, 'utf8')).split(' ')[1]) / 1e9;
}

/** A print long enough to outlast every window: many layers of short moves. */
function longGcode(): string {
  const lines = ['G28', 'G90', 'M83', 'M104 S200', 'M140 S60'];
  // At throttle 0 one instance alone streams about 600 layers a second: enough to outlast two windows (a print that
  // ends is started again before the next window, and a window it ended in is marked invalid).
  const layers = THROTTLE === 0 ? 1200 * WINDOW_S : 600;
  for (let layer = 1; layer <= layers; layer++) {
    lines.push(`G1 Z${(layer * 0.2).toFixed(1)} F600`);
    for (let i = 0; i < 8; i++) lines.push(`G1 X${10 + (i % 2) * 80} Y${10 + i * 10} E0.8 F6000`);
  }
  return lines.join('\n') + '\n';
}

interface Instance { child: ChildProcess; dir: string; url: string }

/** Every Gantry and the broker, killed when the bench is interrupted (a `finally` does not run on a signal). */
const children = new Set<ChildProcess>();
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    for (const c of children) c.kill('SIGKILL');
    process.exit(130);
  });
}

async function startInstance(i: number, brokerPort: number): Promise<Instance> {
  const dir = await mkdtemp(join(tmpdir(), `gantry-mqtt-scale-${i}-`));
  await writeFile(join(dir, 'config.yaml'), stringify({
    api: { key: KEY },
    devel: { virtualPrinter: { throttle: THROTTLE } },
    gcodeAnalysis: { runAt: 'never' },
    plugins: { mqtt: { broker: { url: '', port: brokerPort, protocol: 'MQTTv5' } } },
  }));
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--basedir', dir], { stdio: ['ignore', 'pipe', 'ignore'] });
  children.add(child);
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /is up at (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', () => reject(new Error(`instance ${i} exited: ${out}`)));
  });
  child.stdout!.resume();
  child.once('exit', (code, signal) => { if (!stopping) console.log(`  instance ${i} exited early (${code ?? signal})`); });
  const api = (path: string, init: RequestInit = {}) => fetch(url + path, { ...init, headers: { 'X-Api-Key': KEY, ...(init.headers ?? {}) } });
  const conn = await api('/api/connection', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ command: 'connect', port: 'VIRTUAL' }) });
  if (conn.status !== 204) throw new Error(`connect: ${conn.status}`);
  for (let t = 0; t < 200; t++) {
    const s = (await (await api('/api/connection')).json()) as { current: { state: string } };
    if (s.current.state === 'Operational') break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const form = new FormData();
  form.append('file', new Blob([longGcode()]), 'long.gcode');
  form.append('select', 'true');
  const up = await api('/api/files/local', { method: 'POST', body: form });
  if (up.status !== 201) throw new Error(`upload: ${up.status} ${await up.text()}`);
  return { child, dir, url };
}

/** All printers start together once every instance is up. */
async function startPrint(url: string): Promise<void> {
  const r = await fetch(`${url}/api/job`, { method: 'POST', headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/json' }, body: JSON.stringify({ command: 'start' }) });
  if (r.status !== 204) throw new Error(`start: ${r.status} ${await r.text()}`);
}

let stopping = false;

async function stopInstances(list: Instance[]): Promise<void> {
  stopping = true;
  await Promise.all(list.map(async ({ child, dir }) => {
    if (child.exitCode === null) await new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); setTimeout(() => child.kill('SIGKILL'), 5000).unref(); });
    await rm(dir, { recursive: true, force: true });
  }));
}

const pct = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);

async function filepos(url: string): Promise<number> {
  const job = (await (await fetchAgain(`${url}/api/job`, { headers: { 'X-Api-Key': KEY } })).json()) as { progress: { filepos: number | null } };
  return job.progress.filepos ?? 0;
}

/** Another client publishing as fast as the broker takes it, to see that a busy broker holds up no printer. */
async function flood(brokerPort: number): Promise<() => Promise<number>> {
  const c = await mqtt.connectAsync(`mqtt://127.0.0.1:${brokerPort}`);
  let stop = false;
  let sent = 0;
  const payload = Buffer.alloc(1024, 'f');
  const loop = () => {
    if (stop) return;
    for (let i = 0; i < 200; i++) { c.publish(`flood/${i % 16}`, payload, { qos: 0 }); sent++; }
    if (c.stream.writableLength > 4 * 1024 * 1024) setTimeout(loop, 5);
    else setImmediate(loop);
  };
  loop();
  return async () => { stop = true; await c.endAsync(true); return sent; };
}

type Mode = 'off' | 'on' | 'flood';

interface Window { mode: Mode; load: number; cpu: number[]; wait: number[]; msgs: number; latencies: number[]; bytesPerS: number[]; flooded: number; printing: boolean }

/** MQTT on (the broker's address) or off (no broker) on every instance, through the API as a user would. */
async function setMqtt(list: Instance[], on: boolean): Promise<void> {
  await Promise.all(list.map(async (x) => {
    const r = await fetchAgain(`${x.url}/api/settings`, { method: 'POST', headers: { 'X-Api-Key': KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ plugins: { mqtt: { broker: { url: on ? '127.0.0.1' : '' } } } }) });
    if (r.status !== 200) throw new Error(`settings: ${r.status} ${await r.text()}`);
  }));
}

async function printing(url: string): Promise<boolean> {
  const job = (await (await fetchAgain(`${url}/api/job`, { headers: { 'X-Api-Key': KEY } })).json()) as { state: string };
  return job.state === 'Printing';
}

async function measure(mode: Mode, instances: Instance[], brokerPort: number, sub: mqtt.MqttClient): Promise<Window> {
  await setMqtt(instances, mode !== 'off');
  await Promise.all(instances.map(async (x) => { if (!(await printing(x.url))) await startPrint(x.url); }));
  await new Promise((r) => setTimeout(r, 1000)); // connected, discovery and retained state sent
  const stopFlood = mode === 'flood' ? await flood(brokerPort) : undefined;
  let msgs = 0;
  const latencies: number[] = [];
  const onMessage = (topic: string, _payload: Buffer, packet: mqtt.IPublishPacket) => {
    if (packet.retain || topic.startsWith('flood/')) return;
    msgs++;
    const ts = packet.properties?.userProperties?.ts;
    if (typeof ts === 'string') latencies.push(Date.now() - Number(ts));
  };
  // Each instance's position, CPU and run-queue wait are read together and timed on their own: under heavy load the
  // reads of 20 instances take seconds, which a single window-wide time would count against the rates.
  const sample = async (x: Instance) => {
    const pos = await filepos(x.url);
    const pid = x.child.pid!;
    return { at: performance.now(), pos, cpu: await cpuSeconds(pid), wait: await runQueueWait(pid) };
  };
  const before = await Promise.all(instances.map(sample));
  sub.on('message', onMessage);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, WINDOW_S * 1000));
  sub.off('message', onMessage);
  const elapsed = (performance.now() - t0) / 1000;
  const after = await Promise.all(instances.map(sample));
  const per = (f: (a: Awaited<ReturnType<typeof sample>>) => number) => after.map((a, i) => (f(a) - f(before[i])) / ((a.at - before[i].at) / 1000));
  const stillPrinting = (await Promise.all(instances.map((x) => printing(x.url)))).every(Boolean);
  const flooded = stopFlood ? await stopFlood() : 0;
  return { mode, load: loadavg()[0], cpu: per((x) => x.cpu), wait: per((x) => x.wait), msgs: msgs / elapsed,
    latencies: latencies.sort((a, b) => a - b), bytesPerS: per((x) => x.pos), flooded: flooded / elapsed, printing: stillPrinting };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length ? (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2 : NaN; };

function line(w: Window, off?: Window): string {
  const rate = mean(w.bytesPerS);
  return `${w.mode.padEnd(5)} load ${w.load.toFixed(1).padStart(4)}  CPU/instance ${(mean(w.cpu) * 100).toFixed(1).padStart(5)} %  `
    + `run-queue wait ${(mean(w.wait) * 100).toFixed(0).padStart(3)} %  streams ${rate.toFixed(0).padStart(7)} B/s`
    + (off ? `  ratio ${(rate / mean(off.bytesPerS)).toFixed(2)}` : '')
    + (w.mode !== 'off' ? `  ${w.msgs.toFixed(0)} msgs/s  p50/p99 ${pct(w.latencies, 50)}/${pct(w.latencies, 99)} ms` : '')
    + (w.flooded ? `  flood ${w.flooded.toFixed(0)}/s` : '') + (w.printing ? '' : '  (a print ended: window invalid)');
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-mqtt-scale-broker-'));
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  await writeFile(conf, ['persistence false', `user ${userInfo().username}`, `listener ${port} 127.0.0.1`, 'allow_anonymous true', ''].join('\n'));
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'inherit' });
  const broker = spawn('/usr/sbin/mosquitto', ['-c', conf], { stdio: 'ignore' });
  children.add(broker);
  const instances: Instance[] = [];
  try {
    await waitPort(port);
    console.log(`${N} Gantry instances printing on virtual printers (throttle ${THROTTLE}), ${ROUNDS} rounds of ${WINDOW_S} s windows, one subscriber to #`);
    // Four at a time: all N at once would swamp a small machine.
    for (let i = 0; i < N; i += 4) {
      instances.push(...await Promise.all(Array.from({ length: Math.min(4, N - i) }, (_, k) => startInstance(i + k, port))));
      console.log(`  ${instances.length} of ${N} up (load ${loadavg()[0].toFixed(1)})`);
    }
    const sub = await mqtt.connectAsync(`mqtt://127.0.0.1:${port}`, { protocolVersion: 5 });
    await sub.subscribeAsync('#', { qos: 0 });
    await Promise.all(instances.map((x) => startPrint(x.url)));
    await new Promise((r) => setTimeout(r, 2000)); // past the start-up burst (homing, heating, first layers)
    const modes: Mode[] = process.env.MQTT_SCALE_FLOOD === '0' ? ['off', 'on'] : ['off', 'on', 'flood'];
    const windows: Window[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      // off, on, flood, then flood, on, off: a load trend during the run tilts neither side.
      const order = r % 2 === 0 ? modes : [...modes].reverse();
      const round: Window[] = [];
      for (const mode of order) round.push(await measure(mode, instances, port, sub));
      const off = round.find((w) => w.mode === 'off')!;
      console.log(`round ${r + 1}:`);
      for (const w of round) console.log('  ' + line(w, w.mode === 'off' ? undefined : off));
      windows.push(...round);
    }
    await sub.endAsync(true);
    const valid = windows.filter((w) => w.printing);
    const of = (mode: Mode) => valid.filter((w) => w.mode === mode);
    const ratios = (mode: Mode) => {
      const out: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const round = windows.slice(r * modes.length, (r + 1) * modes.length);
        const off = round.find((w) => w.mode === 'off');
        const w = round.find((x) => x.mode === mode);
        if (off?.printing && w?.printing) out.push(mean(w.bytesPerS) / mean(off.bytesPerS));
      }
      return out;
    };
    console.log('summary (medians over rounds; the ratio is print streaming with MQTT ÷ without, paired within each round):');
    for (const mode of modes) {
      const ws = of(mode);
      if (!ws.length) continue;
      const rs = ratios(mode);
      console.log(`  ${mode.padEnd(5)} CPU per instance ${(median(ws.map((w) => mean(w.cpu))) * 100).toFixed(1)} % of a core, run-queue wait `
        + `${(median(ws.map((w) => mean(w.wait))) * 100).toFixed(0)} %, streams ${median(ws.map((w) => mean(w.bytesPerS))).toFixed(0)} B/s per printer`
        + (mode === 'off' ? '' : `, ratio ${median(rs).toFixed(2)} (pairs: ${rs.map((x) => x.toFixed(2)).join(', ')})`)
        + (mode === 'off' ? '' : `, ${median(ws.map((w) => w.msgs)).toFixed(0)} msgs/s through the broker (${(median(ws.map((w) => w.msgs)) / N).toFixed(1)}/s per printer)`));
    }
    const lat = of('on').flatMap((w) => w.latencies).sort((a, b) => a - b);
    console.log(`  event→subscriber latency with MQTT on: p50 ${pct(lat, 50)} ms, p99 ${pct(lat, 99)} ms (${lat.length} messages)`);
  } finally {
    await stopInstances(instances);
    broker.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
