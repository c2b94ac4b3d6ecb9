// The MQTT bridge fuzzer's engine (test/mqtt/fuzz.test.ts briefly, `npm run bench -- fuzz` long): hostile paths,
// bursts, packets over the cap, deep and malformed bodies on <base>api/request of a real Mosquitto. Every request
// with an id must get exactly one answer and none may be a 5xx other than the shedding 503 with its retry hint.
import mqtt, { type MqttClient } from 'mqtt';

export interface MqttFuzzOptions {
  url: string;
  base: string;
  apikey: string;
  seconds: number;
  /** Stop after this many requests even if time is left. */
  maxRequests?: number;
  seed?: number;
  /** How long to wait for the last answers after the run (ms). */
  settleMs?: number;
}

export interface MqttFuzzResult {
  seed: number;
  requests: number;
  /** Requests without a usable id (malformed, oversized): each gets one answer with id null. */
  anonymous: number;
  anonymousAnswers: number;
  statuses: Map<number, number>;
  unanswered: string[];
  duplicated: string[];
  /** 5xx answers other than a 503 with retryAfter, and 503s without it. */
  findings: string[];
  ms: number;
}

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PATHS = ['/api/version', '/api/settings', '/api/job', '/api/printer', '/api/files', '/api/files/local/x.gcode',
  '/api/printerprofiles', '/api/users', '/api/currentuser', '/api/connection', '/api/system/commands', '/api/login',
  '/api/timelapse', '/api/slicing', '/api/plugin/recovery', '/api/settings/apikey'];
const HOSTILE = ['/api/../downloads/logs/gantry.log', '/api/%2e%2e/plugin/appkeys/request', '/api/..\\apps\\auth',
  '/api//../../x', '/api/.%2E/downloads', '//api/../x', '/api/%252e%252e/x', '/api/files/local/..%2f..%2fetc%2fpasswd',
  '/api/\u0000', '/api/' + 'a'.repeat(5000), 'api/version', '/apix', '/api/%zz', '/api?x=' + '%'.repeat(100)];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'get', 'OPTIONS', 'TRACE', ''];

function deepText(n: number): string {
  return '['.repeat(n) + ']'.repeat(n);
}

/** One request as raw text; `id` undefined when it cannot be answered by id. */
function makeRequest(r: () => number, n: number, apikey: string): { text: string | Buffer; id?: string } {
  const id = `z${n}`;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const path = r() < 0.4 ? pick(HOSTILE) : pick(PATHS);
  const method = pick(METHODS);
  const key = r() < 0.7 ? apikey : r() < 0.5 ? 'wrong' : undefined;
  const roll = r();
  if (roll < 0.03) return { text: '{"id": "' + id + '", "method": ' }; // malformed: answered with id null
  if (roll < 0.04) return { text: Buffer.alloc(2 * 1024 * 1024 + Math.floor(r() * 1024 * 1024), '{') }; // over the cap
  let body: string;
  if (roll < 0.12) body = `{"plugins":{"x":${deepText(1000 + Math.floor(r() * 150_000))}}}`;
  else if (roll < 0.16) body = `{"command":["resume"],"x":"${'y'.repeat(Math.floor(r() * 300_000))}"}`;
  else if (roll < 0.2) body = '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}';
  else body = JSON.stringify(pick([{ command: 'pause', action: 'toggle' }, { command: 'connect' }, {}, [], null, 'x', 1e308, { profile: { id: 'f' } }]));
  const head = JSON.stringify({ id, method, path, ...(key !== undefined ? { apikey: key } : {}) });
  return { text: `${head.slice(0, -1)},"body":${body}}`, id };
}

export async function mqttFuzz(opts: MqttFuzzOptions): Promise<MqttFuzzResult> {
  const seed = opts.seed ?? Math.floor(Math.random() * 2 ** 31);
  const r = rng(seed);
  const answers = new Map<string, number>();
  const result: MqttFuzzResult = { seed, requests: 0, anonymous: 0, anonymousAnswers: 0, statuses: new Map(), unanswered: [],
    duplicated: [], findings: [], ms: 0 };
  const sub: MqttClient = await mqtt.connectAsync(opts.url, { reconnectPeriod: 0 });
  const pub: MqttClient = await mqtt.connectAsync(opts.url, { reconnectPeriod: 0 });
  let lastAnswer = Date.now();
  sub.on('message', (_topic, payload) => {
    lastAnswer = Date.now();
    let a: { id: unknown; status: number; body: Record<string, unknown> | null };
    try {
      a = JSON.parse(payload.toString()) as typeof a;
    } catch {
      result.findings.push(`an answer that is not JSON: ${payload.toString().slice(0, 200)}`);
      return;
    }
    result.statuses.set(a.status, (result.statuses.get(a.status) ?? 0) + 1);
    if (a.id === null) result.anonymousAnswers++;
    else answers.set(String(a.id), (answers.get(String(a.id)) ?? 0) + 1);
    const shed = a.status === 503 && typeof a.body?.retryAfter === 'number';
    if (a.status >= 500 && !shed) result.findings.push(`${a.status} for ${String(a.id)}: ${JSON.stringify(a.body).slice(0, 300)}`);
  });
  await sub.subscribeAsync([`${opts.base}api/response/#`, `${opts.base}api/response`], { qos: 1 });
  const ids: string[] = [];
  const start = Date.now();
  const end = start + opts.seconds * 1000;
  const max = opts.maxRequests ?? Number.POSITIVE_INFINITY;
  while (Date.now() < end && result.requests < max) {
    // Now and then a burst of cheap requests far beyond the concurrency, else one at a time with a little pause.
    const burst = r() < 0.05 ? 200 + Math.floor(r() * 800) : 1;
    for (let i = 0; i < burst && result.requests < max; i++) {
      const req = burst > 1
        ? { text: JSON.stringify({ id: `z${result.requests}`, method: 'GET', path: '/api/version', apikey: opts.apikey }), id: `z${result.requests}` }
        : makeRequest(r, result.requests, opts.apikey);
      result.requests++;
      if (req.id) ids.push(req.id);
      else result.anonymous++;
      pub.publish(`${opts.base}api/request`, req.text, { qos: r() < 0.5 ? 1 : 0 });
    }
    // Bounded in flight: the broker's own queue limits are not what this tests.
    while (ids.length - answers.size > 2000 && Date.now() - lastAnswer < 10_000) await new Promise((res) => setTimeout(res, 20));
    await new Promise((res) => setImmediate(res));
  }
  const settle = opts.settleMs ?? 15_000;
  while ((answers.size < ids.length || result.anonymousAnswers < result.anonymous) && Date.now() - lastAnswer < settle) {
    await new Promise((res) => setTimeout(res, 50));
  }
  result.ms = Date.now() - start;
  for (const id of ids) {
    const c = answers.get(id) ?? 0;
    if (c === 0) result.unanswered.push(id);
    else if (c > 1) result.duplicated.push(id);
  }
  await Promise.all([sub.endAsync(true), pub.endAsync(true)]);
  return result;
}

export function describeMqttFuzz(r: MqttFuzzResult): string {
  return `seed ${r.seed}: ${r.requests} MQTT requests in ${(r.ms / 1000).toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries(r.statuses))}; `
    + `unanswered ${r.unanswered.length}, answered twice ${r.duplicated.length}, anonymous ${r.anonymousAnswers}/${r.anonymous}, findings ${r.findings.length}`
    + (r.findings.length ? `\n${[...new Set(r.findings)].slice(0, 20).join('\n')}` : '');
}
