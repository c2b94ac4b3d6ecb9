// MQTT test helpers: Debian's mosquitto on a free loopback port (optionally with a password file or TLS), and a
// recording MQTT.js subscriber that tests wait on.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, connect as tcpConnect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';

export const MOSQUITTO = '/usr/sbin/mosquitto';
export const SKIP = existsSync(MOSQUITTO) ? false : `${MOSQUITTO} is not installed (apt-get install mosquitto)`;

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = tcpConnect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`broker did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface Broker {
  port: number;
  /** TLS listener port (when started with tls). */
  tlsPort?: number;
  dir: string;
  caFile?: string;
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export interface BrokerOptions {
  users?: Record<string, string>;
  tls?: boolean;
  /** More mosquitto.conf lines (limits such as `max_queued_messages 0`). */
  extra?: string[];
}

/** Self-signed CA plus a server certificate for 127.0.0.1/localhost, made with openssl. */
function makeCerts(dir: string): void {
  const run = (args: string[]) => {
    const r = spawnSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    if (r.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${r.stderr.toString()}`);
  };
  run(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=Gantry test CA', '-keyout', 'ca.key', '-out', 'ca.crt']);
  run(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', 'server.key', '-out', 'server.csr']);
  spawnSync('sh', ['-c', 'printf "subjectAltName=DNS:localhost,IP:127.0.0.1" > san.ext'], { cwd: dir });
  run(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1', '-extfile', 'san.ext', '-out', 'server.crt']);
}

export async function startBroker(t: { after: (fn: () => Promise<void>) => void }, opts: BrokerOptions = {}): Promise<Broker> {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-mqtt-'));
  const port = await freePort();
  // Run as root, mosquitto would switch to its own user, which cannot read the private temp dir.
  const lines = ['persistence false', 'log_dest stderr', 'log_type error', `user ${userInfo().username}`, `listener ${port} 127.0.0.1`];
  if (opts.users) {
    const pw = join(dir, 'passwd');
    await writeFile(pw, '');
    for (const [u, p] of Object.entries(opts.users)) {
      const r = spawnSync('mosquitto_passwd', ['-b', pw, u, p]);
      if (r.status !== 0) throw new Error(`mosquitto_passwd: ${r.stderr.toString()}`);
    }
    lines.push('allow_anonymous false', `password_file ${pw}`);
  } else {
    lines.push('allow_anonymous true');
  }
  let tlsPort: number | undefined;
  if (opts.tls) {
    makeCerts(dir);
    tlsPort = await freePort();
    lines.push(`listener ${tlsPort} 127.0.0.1`, `cafile ${join(dir, 'ca.crt')}`, `certfile ${join(dir, 'server.crt')}`,
      `keyfile ${join(dir, 'server.key')}`, opts.users ? 'allow_anonymous false' : 'allow_anonymous true');
  }
  lines.push(...(opts.extra ?? []));
  const conf = join(dir, 'mosquitto.conf');
  await writeFile(conf, lines.join('\n') + '\n');
  let child: ChildProcess | undefined;
  const broker: Broker = {
    port, tlsPort, dir, url: `mqtt://127.0.0.1:${port}`, caFile: opts.tls ? join(dir, 'ca.crt') : undefined,
    async start() {
      child = spawn(MOSQUITTO, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
      child.stderr?.resume();
      await waitForPort(port);
      if (tlsPort) await waitForPort(tlsPort);
    },
    async stop() {
      const c = child;
      child = undefined;
      if (!c || c.exitCode !== null) return;
      await new Promise<void>((resolve) => { c.once('exit', () => resolve()); c.kill('SIGKILL'); });
    },
  };
  await broker.start();
  t.after(async () => {
    await broker.stop();
    await rm(dir, { recursive: true, force: true });
  });
  return broker;
}

export interface Received { topic: string; text: string; retain: boolean; qos: number; at: number; json(): Record<string, unknown> }

/** A subscriber that records everything it receives and lets tests wait for a matching message. */
export class Recorder {
  readonly messages: Received[] = [];
  private waiters: Array<{ match: (m: Received) => boolean; resolve: (m: Received) => void }> = [];

  private constructor(readonly client: MqttClient) {
    client.on('message', (topic, payload, packet) => {
      const text = payload.toString('utf8');
      const m: Received = { topic, text, retain: packet.retain, qos: packet.qos, at: performance.now(), json: () => JSON.parse(text) as Record<string, unknown> };
      this.messages.push(m);
      for (const w of [...this.waiters]) {
        if (w.match(m)) {
          this.waiters = this.waiters.filter((x) => x !== w);
          w.resolve(m);
        }
      }
    });
  }

  static async connect(t: { after: (fn: () => Promise<void>) => void }, url: string, topics: string | string[] = '#', opts: IClientOptions = {}): Promise<Recorder> {
    const client = await mqtt.connectAsync(url, { reconnectPeriod: 100, ...opts });
    const r = new Recorder(client);
    await client.subscribeAsync(topics, { qos: 1 });
    t.after(async () => { await client.endAsync(true); });
    return r;
  }

  /** The first message (already received or still to come) that matches. */
  wait(match: (m: Received) => boolean, what: string, timeoutMs = 15_000, from = 0): Promise<Received> {
    const seen = this.messages.slice(from).find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x.resolve !== done);
        reject(new Error(`timed out waiting for ${what}; got ${this.messages.slice(-15).map((m) => `${m.topic}=${m.text.slice(0, 80)}`).join('\n')}`));
      }, timeoutMs);
      const done = (m: Received) => { clearTimeout(timer); resolve(m); };
      this.waiters.push({ match, resolve: done });
    });
  }

  topic(topic: string, what = topic, timeoutMs?: number, from = 0): Promise<Received> {
    return this.wait((m) => m.topic === topic, what, timeoutMs, from);
  }
}

export async function cleanup(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
