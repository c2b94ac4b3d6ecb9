// The API over MQTT under attack, against a real Mosquitto: paths that leave /api/ by dot segments, bodies nested
// beyond what a serialiser can carry, messages far over the size cap, and request floods (every request answered).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { needs } from '../helpers/tools.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { Recorder, SKIP, startBroker, type Broker } from './helpers.ts';

const BASE = 'harden/p1/';

type Protocol = 'MQTTv31' | 'MQTTv311' | 'MQTTv5';

async function setUp(t: TestContext, protocol: Protocol = 'MQTTv31', gantry: Record<string, unknown> = {}): Promise<{ broker: Broker; server: TestServer; rec: Recorder }> {
  const broker = await startBroker(t);
  const server = await startTestServer(t, { settings: { plugins: { mqtt: {
    broker: { url: '127.0.0.1', port: broker.port, protocol }, publish: { baseTopic: BASE },
    gantry: { reconnectMin: 0.1, reconnectMax: 0.5, discovery: false, ...gantry },
  } } } });
  const rec = await Recorder.connect(t, broker.url, [`${BASE}api/response/#`, `${BASE}api/response`, `${BASE}mqtt`]);
  await rec.wait((m) => m.topic === `${BASE}mqtt` && m.text === 'connected', 'connected');
  return { broker, server, rec };
}

type Answer = { id: unknown; status: number; body: Record<string, unknown> };

function asker(rec: Recorder) {
  return async (req: Record<string, unknown>): Promise<Answer> => {
    await rec.client.publishAsync(`${BASE}api/request`, JSON.stringify(req), { qos: 1 });
    return (await rec.topic(`${BASE}api/response/${String(req.id)}`)).json() as Answer;
  };
}

test('API over MQTT: a path is confined to /api/ after decoding and resolving dot segments', { skip: SKIP }, async (t) => {
  const { server, rec } = await setUp(t);
  const ask = asker(rec);
  const key = server.apiKey;
  const hostile = [
    '/api/../downloads/logs/gantry.log',
    '/api/%2e%2e/downloads/logs/gantry.log',
    '/api/%2E%2E/downloads/logs/gantry.log',
    '/api/.%2e/downloads/logs/gantry.log',
    '/api/../plugin/appkeys/request',
    '/api/../apps/auth',
    '/api/..\\downloads/logs/gantry.log',
    '/api\\..\\plugin\\appkeys\\request',
    '/api//../../downloads/logs/gantry.log',
    '/api/files/../../downloads/logs/gantry.log',
    '/api/files/local/..%2f..%2fdownloads',
    '/api/..',
    '//api/../downloads/logs/gantry.log',
    '/apix',
    '/',
    'api/version',
    '\\\\evil\\api\\version',
    '/api/\u0000version',
  ];
  let n = 0;
  for (const path of hostile) {
    for (const apikey of [key, undefined]) {
      const id = `h${n++}`;
      const res = await ask({ id, method: apikey ? 'GET' : 'POST', path, apikey, body: apikey ? undefined : { app: 'evil' } });
      assert.equal(res.status, 400, `${path} (${apikey ? 'key' : 'no key'}) answered ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      assert.match(String(res.body.error), /under \/api\//);
    }
  }
  // Normalising is not refusing: a path that resolves inside /api/ is answered as its normal form.
  for (const path of ['/api/./version', '/api/files/../version', '/api//version', '/api\\version', '/api/%76ersion?x=1']) {
    const res = await ask({ id: `ok${n++}`, method: 'GET', path, apikey: key });
    assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
    assert.equal(typeof res.body.api, 'string');
  }
  // Encoded twice, the dots are a literal segment name to the router: an API 404, never the log.
  const twice = await ask({ id: `twice${n}`, method: 'GET', path: '/api/%252e%252e/downloads/logs/gantry.log', apikey: key });
  assert.equal(twice.status, 404);
  // No app key request was started through a hostile path.
  const pending = await server.api('/plugin/appkeys/request/nothing');
  assert.notEqual(pending.status, 500);
});

test('API over MQTT: a body nested 100,000 levels deep gets the same 413 as over HTTP, a deep small one a 400', { skip: SKIP }, async (t) => {
  const { server, rec } = await setUp(t);
  const ask = asker(rec);
  const key = server.apiKey;
  // Built as text: JSON.stringify itself cannot serialise these (that was the bridge's 500).
  const deep = (n: number) => `{"plugins":{"x":${'['.repeat(n)}${']'.repeat(n)}}}`;
  const askRaw = async (id: string, body: string): Promise<Answer> => {
    await rec.client.publishAsync(`${BASE}api/request`, `{"id":"${id}","method":"POST","path":"/api/settings","apikey":"${key}","body":${body}}`, { qos: 1 });
    return (await rec.topic(`${BASE}api/response/${id}`)).json() as Answer;
  };
  const body = deep(100_000);
  assert.ok(body.length > 200_000 && body.length < 1024 * 1024);
  const viaHttp = await server.api('/api/settings', { method: 'POST', body, headers: { 'content-type': 'application/json' } });
  const viaMqtt = await askRaw('deep', body);
  assert.equal(viaHttp.status, 413);
  assert.deepEqual([viaMqtt.status, viaMqtt.body], [413, await viaHttp.json()]);
  // Within the body limit but deeper than any route takes (and than a recursive serialiser can carry): a clear 400.
  const small = await askRaw('deep-small', deep(20_000));
  assert.equal(small.status, 400, JSON.stringify(small.body));
  assert.match(String(small.body.error), /nested deeper than/);
  // A route's own depth rule still answers for what the bridge lets through, as over HTTP.
  const route = await askRaw('deep-route', deep(100));
  const routeHttp = await server.api('/api/settings', { method: 'POST', body: deep(100), headers: { 'content-type': 'application/json' } });
  assert.deepEqual([route.status, route.body], [routeHttp.status, await routeHttp.json()]);
  assert.equal(route.status, 400);
  const fine = await ask({ id: 'fine', method: 'GET', path: '/api/version', apikey: key });
  assert.equal(fine.status, 200);
});

/** Publishes `bytes` on the request topic from a mosquitto_pub process (its memory is not the server's). */
async function publishFile(t: TestContext, broker: Broker, bytes: number, qos: 0 | 1): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-big-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'big.json');
  // One chunk written many times: the file is real, its making costs no large buffer here either.
  const chunk = Buffer.alloc(1024 * 1024, 'x');
  const fh = await open(file, 'w');
  try {
    await fh.write(Buffer.from('{"id":"big","method":"GET","path":"/api/version","pad":"'));
    for (let left = bytes; left > 0; left -= chunk.length) await fh.write(chunk, 0, Math.min(left, chunk.length));
    await fh.write(Buffer.from('"}'));
  } finally {
    await fh.close();
  }
  const pub = spawn('mosquitto_pub', ['-h', '127.0.0.1', '-p', String(broker.port), '-q', String(qos), '-t', `${BASE}api/request`, '-f', file],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  pub.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  const [code] = await once(pub, 'exit') as [number];
  assert.equal(code, 0, `mosquitto_pub: ${err}`);
}

for (const protocol of ['MQTTv31', 'MQTTv5'] as const) {
  test(`API over MQTT (${protocol}): a 60 MB request is skipped as it streams in, answered 413, memory stays flat and the link stays up`, { skip: SKIP || needs('mosquitto') }, async (t) => {
    const { broker, server, rec } = await setUp(t, protocol);
    const ask = asker(rec);
    assert.equal((await ask({ id: 'before', method: 'GET', path: '/api/version', apikey: server.apiKey })).status, 200);
    const connects = server.mqtt.status().connected;
    assert.equal(connects, true);
    const base = process.memoryUsage().arrayBuffers;
    let peak = base;
    const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().arrayBuffers); }, 10);
    t.after(() => clearInterval(sampler));
    const from = rec.messages.length;
    const size = protocol === 'MQTTv5' ? 12 * 1024 * 1024 : 60 * 1024 * 1024;
    await publishFile(t, broker, size, 1);
    const refused = await rec.wait((m) => m.topic === `${BASE}api/response` && m.json().status === 413, 'the 413 answer', 60_000, from);
    clearInterval(sampler);
    assert.deepEqual(refused.json(), { id: null, status: 413, body: { error: `Request larger than ${1024 * 1024 + 4096} bytes` } });
    // Read whole, the message alone lifted the server's buffers by its size (60 MB: 103 → 509 MB RSS at 200 MB).
    assert.ok(peak - base < 8 * 1024 * 1024, `buffers grew by ${Math.round((peak - base) / 1024 / 1024)} MB while a ${size / 1024 / 1024} MB message went by`);
    // Same connection (no reconnect), and it answers at once.
    assert.equal((await ask({ id: 'after', method: 'GET', path: '/api/version', apikey: server.apiKey })).status, 200);
    assert.equal(server.mqtt.status().connected, true);
    assert.equal(rec.messages.filter((m) => m.topic === `${BASE}mqtt` && m.text === 'connected').length, 1, 'no second session');
  });
}

/**
 * Floods `n` requests at `qos` from one client and collects the answers on another; resolves once every id has its
 * answer or nothing more came for `quietMs`.
 */
async function flood(t: TestContext, broker: Broker, key: string, n: number, qos: 0 | 1, quietMs = 8000): Promise<Map<string, Answer[]>> {
  const answers = new Map<string, Answer[]>();
  const sub = await Recorder.connect(t, broker.url, [`${BASE}api/response/#`, `${BASE}api/response`]);
  let last = Date.now();
  let done: () => void = () => {};
  const all = new Promise<void>((resolve) => { done = resolve; });
  sub.client.on('message', (topic, payload) => {
    const a = JSON.parse(payload.toString()) as Answer;
    const id = String(a.id);
    answers.set(id, [...(answers.get(id) ?? []), a]);
    last = Date.now();
    if (answers.size >= n) done();
  });
  const pub = await Recorder.connect(t, broker.url, 'nothing/at/all');
  for (let i = 0; i < n; i++) {
    pub.client.publish(`${BASE}api/request`, JSON.stringify({ id: `f${i}`, method: 'GET', path: '/api/version', apikey: key }), { qos });
  }
  await Promise.race([all, new Promise<void>((resolve) => {
    const timer = setInterval(() => { if (Date.now() - last > quietMs) { clearInterval(timer); resolve(); } }, 200);
    void all.then(() => clearInterval(timer));
  })]);
  return answers;
}

for (const [qos, n] of [[0, 10_000], [1, 5_000]] as const) {
  test(`API over MQTT: ${n} requests at QoS ${qos} in a burst: every one answered once, 200 or 503 with a retry hint; state messages keep their own budget`, { skip: SKIP }, async (t) => {
    // The broker's own per-client limits are not what is tested: they would drop answers on the way to the client.
    const broker = await startBroker(t, process.env.DEFAULT_BROKER ? {} : { extra: ['max_queued_messages 0', 'max_inflight_messages 0'] });
    const server = await startTestServer(t, { settings: { plugins: { mqtt: {
      broker: { url: '127.0.0.1', port: broker.port, protocol: 'MQTTv311' }, publish: { baseTopic: BASE },
      gantry: { reconnectMin: 0.1, reconnectMax: 0.5, discovery: false },
    } } } });
    const events = await Recorder.connect(t, broker.url, [`${BASE}event/#`, `${BASE}mqtt`]);
    await events.wait((m) => m.topic === `${BASE}mqtt` && m.text === 'connected', 'connected');
    const answers = await flood(t, broker, server.apiKey, n, qos);
    const missing = [...Array(n).keys()].map((i) => `f${i}`).filter((id) => !answers.has(id));
    const statuses = new Map<number, number>();
    for (const list of answers.values()) for (const a of list) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
    t.diagnostic(`answers: ${answers.size}/${n}, statuses ${JSON.stringify([...statuses])}, server ${JSON.stringify(server.mqtt.status())}`);
    assert.deepEqual(missing.slice(0, 5), [], `${missing.length} of ${n} requests got no answer`);
    for (const [id, list] of answers) {
      assert.equal(list.length, 1, `${id} answered ${list.length} times`);
      const a = list[0]!;
      assert.ok(a.status === 200 || a.status === 503, `${id}: ${a.status} ${JSON.stringify(a.body)}`);
      if (a.status === 503) {
        assert.equal(typeof a.body.retryAfter, 'number', `${id}: the 503 says when to retry: ${JSON.stringify(a.body)}`);
        assert.match(String(a.body.error), /try again/);
      }
    }
    assert.equal(server.mqtt.status().dropped, 0, 'nothing dropped from the outbox');
  });
}
