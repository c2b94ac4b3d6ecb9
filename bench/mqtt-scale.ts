// MQTT at farm scale: one Mosquitto, N Gantry processes each printing on its virtual printer, one subscriber to `#`.
// Reports messages/s through the broker, event→subscriber latency (p50/p99, from the MQTT 5 `ts` user property),
// Gantry CPU per instance with MQTT on vs off, and the print's streaming rate (file bytes/s) with MQTT off, on, and on
// while another client floods the broker (the printer must not wait on the broker: ratio ≥ 0.95).
// N from MQTT_SCALE_N (default 5), window from MQTT_SCALE_SECONDS.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, connect as tcpConnect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import mqtt from 'mqtt';

const N = Number(process.env.MQTT_SCALE_N ?? 5);
const WINDOW_S = Number(process.env.MQTT_SCALE_SECONDS ?? 20);
/** Virtual printer time scale: 0.2 runs a print five times faster than real (about a layer a second here); 0 as fast as the link allows. */
const THROTTLE = Number(process.env.MQTT_SCALE_THROTTLE ?? 0.2);
const CLI = new URL('../src/cli.ts', import.meta.url).pathname;
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

/** A print long enough to outlast the window: many layers of short moves. */
function longGcode(): string {
  const lines = ['G28', 'G90', 'M83', 'M104 S200', 'M140 S60'];
  // At throttle 0 the link streams a few thousand lines a second: enough layers to outlast the window either way.
  for (let layer = 1; layer <= (THROTTLE === 0 ? 6000 : 600); layer++) {
    lines.push(`G1 Z${(layer * 0.2).toFixed(1)} F600`);
    for (let i = 0; i < 8; i++) lines.push(`G1 X${10 + (i % 2) * 80} Y${10 + i * 10} E0.8 F6000`);
  }
  return lines.join('\n') + '\n';
}

interface Instance { child: ChildProcess; dir: string; url: string }

async function startInstance(i: number, brokerPort: number | null): Promise<Instance> {
  const dir = await mkdtemp(join(tmpdir(), `gantry-mqtt-scale-${i}-`));
  await writeFile(join(dir, 'config.yaml'), stringify({
    api: { key: KEY },
    devel: { virtualPrinter: { throttle: THROTTLE } },
    gcodeAnalysis: { runAt: 'never' },
    ...(brokerPort ? { plugins: { mqtt: { broker: { url: '127.0.0.1', port: brokerPort, protocol: 'MQTTv5' } } } } : {}),
  }));
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve', '--port', '0', '--basedir', dir], { stdio: ['ignore', 'pipe', 'ignore'] });
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

async function stopInstances(list: Instance[]): Promise<void> {
  await Promise.all(list.map(async ({ child, dir }) => {
    if (child.exitCode === null) await new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); setTimeout(() => child.kill('SIGKILL'), 5000).unref(); });
    await rm(dir, { recursive: true, force: true });
  }));
}

const pct = (sorted: number[], p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);

async function filepos(url: string): Promise<number> {
  const job = (await (await fetch(`${url}/api/job`, { headers: { 'X-Api-Key': KEY } })).json()) as { progress: { filepos: number | null } };
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

async function run(mode: Mode, brokerPort: number): Promise<{ cpu: number[]; msgs: number; latencies: number[]; bytesPerS: number[]; flooded: number }> {
  const instances: Instance[] = [];
  try {
    // Started one after another: N tsx start-ups at once would swamp a small machine.
    for (let i = 0; i < N; i++) instances.push(await startInstance(i, mode === 'off' ? null : brokerPort));
    const sub = await mqtt.connectAsync(`mqtt://127.0.0.1:${brokerPort}`, { protocolVersion: 5 });
    let msgs = 0;
    let measuring = false;
    const latencies: number[] = [];
    sub.on('message', (topic, _payload, packet) => {
      if (!measuring || packet.retain || topic.startsWith('flood/')) return;
      msgs++;
      const ts = packet.properties?.userProperties?.ts;
      if (typeof ts === 'string') latencies.push(Date.now() - Number(ts));
    });
    await sub.subscribeAsync('#', { qos: 0 });
    await Promise.all(instances.map((x) => startPrint(x.url)));
    await new Promise((r) => setTimeout(r, 2000)); // past the start-up burst (homing, heating, first layers)
    const stopFlood = mode === 'flood' ? await flood(brokerPort) : undefined;
    const before = await Promise.all(instances.map((x) => cpuSeconds(x.child.pid!)));
    const posBefore = await Promise.all(instances.map((x) => filepos(x.url)));
    measuring = true;
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, WINDOW_S * 1000));
    measuring = false;
    const elapsed = (performance.now() - t0) / 1000;
    const after = await Promise.all(instances.map((x) => cpuSeconds(x.child.pid!)));
    const posAfter = await Promise.all(instances.map((x) => filepos(x.url)));
    const flooded = stopFlood ? await stopFlood() : 0;
    await sub.endAsync(true);
    return { cpu: after.map((a, i) => (a - before[i]) / elapsed), msgs: msgs / elapsed, latencies: latencies.sort((a, b) => a - b),
      bytesPerS: posAfter.map((p, i) => (p - posBefore[i]) / elapsed), flooded: flooded / elapsed };
  } finally {
    await stopInstances(instances);
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-mqtt-scale-broker-'));
  const port = await freePort();
  const conf = join(dir, 'mosquitto.conf');
  await writeFile(conf, ['persistence false', `user ${userInfo().username}`, `listener ${port} 127.0.0.1`, 'allow_anonymous true', ''].join('\n'));
  const broker = spawn('/usr/sbin/mosquitto', ['-c', conf], { stdio: 'ignore' });
  try {
    await waitPort(port);
    console.log(`${N} Gantry instances printing on virtual printers (throttle ${THROTTLE}), ${WINDOW_S} s window each, one subscriber to #`);
    const off = await run('off', port);
    const on = await run('on', port);
    const flooded = process.env.MQTT_SCALE_FLOOD === '0' ? undefined : await run('flood', port);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const rate = (r: { bytesPerS: number[] }) => mean(r.bytesPerS);
    console.log(`MQTT off: Gantry CPU per instance ${(mean(off.cpu) * 100).toFixed(1)} % of a core, print streams ${rate(off).toFixed(0)} B/s per printer`);
    console.log(`MQTT on:  Gantry CPU per instance ${(mean(on.cpu) * 100).toFixed(1)} % of a core, print streams ${rate(on).toFixed(0)} B/s per printer (ratio ${(rate(on) / rate(off)).toFixed(2)})`);
    if (flooded) {
      console.log(`MQTT on, broker flooded (${flooded.flooded.toFixed(0)} msgs/s of 1 KB from another client): CPU ${(mean(flooded.cpu) * 100).toFixed(1)} %, `
        + `print streams ${rate(flooded).toFixed(0)} B/s per printer (ratio ${(rate(flooded) / rate(off)).toFixed(2)}), `
        + `latency p50 ${pct(flooded.latencies, 50)} ms p99 ${pct(flooded.latencies, 99)} ms`);
    }
    console.log(`messages through the broker: ${on.msgs.toFixed(1)}/s in total, ${(on.msgs / N).toFixed(1)}/s per printer`);
    console.log(`event→subscriber latency: p50 ${pct(on.latencies, 50)} ms, p99 ${pct(on.latencies, 99)} ms (${on.latencies.length} messages)`);
  } finally {
    broker.kill('SIGTERM');
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
