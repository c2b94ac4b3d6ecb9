// Route-table-driven HTTP fuzzer shared by test/http/fuzz.test.ts (CI, 20 s) and bench/fuzz.ts (long runs):
// walks every registered route and sends hostile shapes, seeded through fast-check, loopback only, bounded in time.
import { request as httpRequest, Agent } from 'node:http';
import fc from 'fast-check';
import { registeredRoutes, type RouteInfo } from '../../src/http/auth.ts';
import type { TestServer } from '../helpers/server.ts';

/** Names that live on Object.prototype: a lookup in a plain object finds them unless it checks own properties. */
export const PROTO_NAMES = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'prototype', '__defineGetter__',
  'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString', '__lookupGetter__'];

/** Path segments that try to escape, overflow or confuse (all relative: nothing here names a real file outside the base dir). */
const HOSTILE_SEGMENTS = ['..', '.', '%2e%2e', '..%2f..%2fcanary.gcode', '%00', 'a%00b', '%ff%fe', '%c0%af', 'x'.repeat(300),
  'é'.repeat(130), '%20', '~', 'con', 'cube.gcode', 'parts', 'parts%2Fcube.gcode', 'a:b', '*', '%5c..%5c', 'current', 'local', 'sdcard', 'cura', 'prusaslicer', 'en', '_default',
  ...PROTO_NAMES.map(encodeURIComponent)];

/** Settings sections the fuzzer may write: never folders, commands, event hooks or binaries (the fuzzer runs as root on CI),
 * nor `api` (api.enabled false would turn the rest of the run into 403s). */
const SAFE_SECTIONS = ['appearance', 'feature', 'serial', 'temperature', 'terminalFilters', 'printerParameters', 'gcodeAnalysis',
  'accessControl', 'devel', 'plugins', 'temperatureProfiles'];

const BOUNDARY = 'fuzzboundary42';

export interface FuzzRequest {
  method: string;
  url: string;
  route: string;
  kind: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface FuzzFinding {
  route: string;
  kind: string;
  status: number | string;
  example: { method: string; url: string; headers: Record<string, string>; body: string; answer: string };
}

export interface FuzzResult {
  requests: number;
  statuses: Map<number | string, number>;
  /** Distinct 5xx (and dropped connections) by route and input kind. */
  findings: Map<string, FuzzFinding>;
  seed: number;
  ms: number;
  /** Requests sent per route (method + url pattern), so a run can show that every route was reached. */
  perRoute: Map<string, number>;
  /** Every route the run drew from. */
  routes: string[];
}

export interface FuzzOptions {
  seconds: number;
  seed?: number;
  /** Parallel clients (races between routes are part of what is tested). */
  concurrency?: number;
  /** Largest body sent (the huge-body case); bounded so a run never exhausts memory. */
  maxBodyBytes?: number;
  /** Text that must never appear in an answer (the content of a file that links in served folders point to). */
  secret?: string;
  /** Routes left out (method + ' ' + url). */
  skip?: (r: RouteInfo) => boolean;
  onProgress?: (r: FuzzResult) => void;
}

const deep = (depth: number, open: string, close: string, inner = '1') => open.repeat(depth) + inner + close.repeat(depth);

const hostileCommand = fc.oneof(fc.constantFrom(...PROTO_NAMES), fc.string({ maxLength: 12 }), fc.constantFrom('', ' ', 'select', 'connect', 'target'));
const scalar = fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.string({ maxLength: 20 }), fc.constantFrom(...PROTO_NAMES));
const wrongValue = fc.oneof(scalar, fc.array(scalar, { maxLength: 4 }), fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom(...PROTO_NAMES)), scalar, { maxKeys: 4 }));

/** Field names routes read, so wrong types reach the code behind validation rather than stopping at "unknown field". */
const FIELDS = ['command', 'print', 'destination', 'path', 'name', 'foldername', 'target', 'offset', 'offsets', 'targets', 'tool', 'amount',
  'factor', 'axes', 'port', 'baudrate', 'printerProfile', 'action', 'commands', 'script', 'context', 'user', 'pass', 'password', 'current',
  'remember', 'passive', 'groups', 'permissions', 'active', 'admin', 'app', 'key', 'subgroups', 'default', 'profile', 'id', 'display',
  'displayName', 'description', 'data', 'select', 'extrude', 'enable', 'settings', 'key', 'apikey', 'options', 'url', 'method', 'timeout'];

const commandBody = fc.record({
  command: hostileCommand,
  extra: fc.dictionary(fc.constantFrom(...FIELDS), wrongValue, { maxKeys: 5 }),
}).map(({ command, extra }) => JSON.stringify({ ...extra, command }));

const safeSettings = fc.dictionary(fc.constantFrom(...SAFE_SECTIONS), fc.oneof(wrongValue, fc.dictionary(fc.oneof(fc.string({ maxLength: 10 }),
  fc.constantFrom(...PROTO_NAMES, 'key', 'enabled', 'timeout', 'port', 'color', 'name', 'model', 'volume', 'extruder')), wrongValue, { maxKeys: 4 })),
{ maxKeys: 3 }).map((o) => JSON.stringify(o));

const deepBody = fc.tuple(fc.integer({ min: 50, max: 20_000 }), fc.constantFrom(['[', ']'], ['{"a":', '}'], ['{"__proto__":', '}'], ['{"profile":', '}'],
  ['{"serial":', '}'], ['{"settings":', '}'])).map(([d, [o, c]]) => deep(d, o, c));

const multipart = (parts: string) => Buffer.from(parts.replace(/\n/g, '\r\n'));

/** Fields whose values are stored (upload userdata, settings and plugin data, profiles, user settings, slicer data). */
const STORED_FIELDS = ['userdata', 'settings', 'profile', 'data', 'plugins', 'metadata', 'appearance', 'display', 'name', 'options'];
const deepOrHuge = fc.oneof(
  fc.tuple(fc.integer({ min: 17, max: 8000 }), fc.constantFrom(['[', ']'], ['{"a":', '}'])).map(([d, [o, c]]) => deep(d, o, c)),
  fc.integer({ min: 65 * 1024, max: 200 * 1024 }).map((n) => JSON.stringify('x'.repeat(n))),
  fc.integer({ min: 2000, max: 20_000 }).map((n) => `[${Array(n).fill('{"k":[1,2,3]}').join(',')}]`),
);
/** A deep (past 16 levels) or huge (past 64 KiB) value in a stored field, beside a command the route may know. */
const storedBody = fc.tuple(hostileCommand, fc.constantFrom(...STORED_FIELDS), deepOrHuge, fc.boolean()).map(([command, field, value, nested]) =>
  nested ? `{"command":${JSON.stringify(command)},"plugins":{"someplugin":{"${field}":${value}}}}` : `{"command":${JSON.stringify(command)},"${field}":${value}}`);

/** Every field of the upload form, one of them deep or huge (userdata as JSON, the others as text). */
const FORM_FIELDS = ['userdata', 'path', 'filename', 'foldername', 'select', 'print', 'noOverwrite'];
const storedMultipart = fc.tuple(fc.constantFrom(...FORM_FIELDS), deepOrHuge, fc.boolean()).map(([field, value, withFile]) => multipart(
  `--${BOUNDARY}\nContent-Disposition: form-data; name="${field}"\n\n${value}\n` +
  (withFile ? `--${BOUNDARY}\nContent-Disposition: form-data; name="file"; filename="stored.gcode"\n\nG28\n` : '') + `--${BOUNDARY}--\n`));

/** Invalid UTF-8 inside otherwise well-formed JSON and form bodies. */
const badUtf8 = fc.constantFrom(
  Buffer.concat([Buffer.from('{"command":"'), Buffer.from([0xff, 0xfe, 0xc0, 0xaf]), Buffer.from('","name":"a"}')]),
  Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]),
  Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]),
  Buffer.from([0x80, 0x81, 0x82]),
);

const badMultipart = fc.constantFrom<{ type: string; body: Buffer }>(
  { type: 'multipart/form-data', body: multipart(`--${BOUNDARY}\nContent-Disposition: form-data; name="file"; filename="a.gcode"\n\nG28\n--${BOUNDARY}--\n`) },
  { type: 'multipart/form-data; boundary=', body: multipart(`--\nContent-Disposition: form-data; name="file"\n\nx\n----\n`) },
  { type: 'multipart/form-data; boundary=wrong', body: multipart(`--${BOUNDARY}\nContent-Disposition: form-data; name="file"; filename="a.zip"\n\nPK\n--${BOUNDARY}--\n`) },
  { type: `multipart/form-data; boundary=${BOUNDARY}`, body: multipart(`--${BOUNDARY}\nContent-Disposition: form-data; name="file"; filename="a.zip"\n\nPK\x03\x04trunc`) },
  { type: `multipart/form-data; boundary=${BOUNDARY}`, body: multipart(`--${BOUNDARY}\nContent-Disposition: form-data; name="file"; filename="p.ini"\n\nlayer_height = 0.2\n--${BOUNDARY}`) },
  { type: `multipart/form-data; boundary=${BOUNDARY}`, body: multipart(`--${BOUNDARY}\nContent-Disposition: form-data\n\n\n--${BOUNDARY}--\n`) },
  { type: `multipart/form-data; boundary=${BOUNDARY}`, body: multipart(`--${BOUNDARY}\nno header end`) },
  { type: `multipart/form-data; boundary=${BOUNDARY}`, body: multipart(`--${BOUNDARY}\nContent-Disposition: form-data; name="file"; filename="${'n'.repeat(300)}.gcode"\n\nG28\n--${BOUNDARY}--\n`) },
  { type: `multipart/form-data; boundary=${BOUNDARY}`, body: multipart(`--${BOUNDARY}\nContent-Disposition: form-data; name="foldername"\n\n${'f'.repeat(300)}\n--${BOUNDARY}--\n`) },
  { type: `multipart/form-data; boundary=${BOUNDARY}`, body: Buffer.alloc(0) },
  { type: `multipart/form-data; boundary="${'b'.repeat(200)}"`, body: multipart(`--${'b'.repeat(200)}\n\n--${'b'.repeat(200)}--\n`) },
);

type BodyCase = { kind: string; type?: string; body?: Buffer };

function bodyCases(maxBodyBytes: number): fc.Arbitrary<BodyCase> {
  const json = (kind: string, arb: fc.Arbitrary<string>) => arb.map((b): BodyCase => ({ kind, type: 'application/json', body: Buffer.from(b) }));
  return fc.oneof(
    { weight: 5, arbitrary: json('command', commandBody) },
    { weight: 2, arbitrary: json('wrong-type', fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v))) },
    { weight: 2, arbitrary: json('settings', safeSettings) },
    { weight: 2, arbitrary: json('deep', deepBody) },
    { weight: 2, arbitrary: json('stored-deep-huge', storedBody) },
    { weight: 2, arbitrary: storedMultipart.map((body): BodyCase => ({ kind: 'stored-multipart', type: `multipart/form-data; boundary=${BOUNDARY}`, body })) },
    { weight: 1, arbitrary: json('proto-keys', fc.constantFrom('{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"x":1}}}',
      '{"profile":{"__proto__":{"a":1}},"settings":{"constructor":1}}', '{"name":"__proto__","foldername":"constructor"}')) },
    { weight: 1, arbitrary: fc.integer({ min: 64 * 1024, max: maxBodyBytes }).map((n): BodyCase =>
      ({ kind: 'huge', type: 'application/json', body: Buffer.from(`{"command":"${'a'.repeat(n)}"}`) })) },
    { weight: 1, arbitrary: badUtf8.map((b): BodyCase => ({ kind: 'bad-utf8', type: 'application/json', body: b })) },
    { weight: 2, arbitrary: badMultipart.map(({ type, body }): BodyCase => ({ kind: 'bad-multipart', type, body })) },
    { weight: 1, arbitrary: fc.constantFrom<BodyCase>({ kind: 'no-body' }, { kind: 'empty-json', type: 'application/json', body: Buffer.alloc(0) },
      { kind: 'form', type: 'application/x-www-form-urlencoded', body: Buffer.from('command=__proto__&action=constructor&user=%ff') },
      { kind: 'text', type: 'text/plain', body: Buffer.from('{"command":"select"}') },
      { kind: 'bad-type', type: 'application/json; charset=bogus; ;;', body: Buffer.from('{}') }) },
  );
}

const segment = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 12 }).map(encodeURIComponent) });

function requests(routes: RouteInfo[], maxBodyBytes: number): fc.Arbitrary<FuzzRequest> {
  return fc.record({
    route: fc.constantFrom(...routes),
    segments: fc.array(segment, { minLength: 8, maxLength: 8 }),
    tail: fc.array(segment, { minLength: 0, maxLength: 3 }),
    query: fc.option(fc.dictionary(fc.constantFrom('recursive', 'force', 'filter', 'exclude', 'history', 'limit', 'level', 'path',
      '__proto__', 'constructor'), fc.oneof(fc.constantFrom('true', '-1', '1e999', '%ff', '', 'x'.repeat(3000)), fc.string({ maxLength: 6 }).map(encodeURIComponent))), { nil: undefined }),
    body: bodyCases(maxBodyBytes),
  }).map(({ route, segments, tail, query, body }) => {
    let i = 0;
    let path = route.url.replace(/:[^/]+/g, () => segments[i++ % segments.length]);
    path = path.replace(/\*/g, () => [segments[i++ % segments.length], ...tail].join('/'));
    const qs = query ? '?' + Object.entries(query).map(([k, v]) => `${encodeURIComponent(k)}=${v}`).join('&') : '';
    const bodyless = route.method === 'GET' || route.method === 'HEAD';
    const headers: Record<string, string> = {};
    if (!bodyless && body.type) headers['Content-Type'] = body.type;
    return { method: route.method, url: path + qs, route: `${route.method} ${route.url}`, kind: bodyless ? 'query' : body.kind, headers,
      body: bodyless ? undefined : body.body };
  });
}

interface Answer { status: number | string; text: string }

function send(base: URL, agent: Agent, r: FuzzRequest, key: string): Promise<Answer> {
  return new Promise((resolve) => {
    const headers = { ...r.headers, 'X-Api-Key': key, ...(r.body ? { 'Content-Length': String(r.body.length) } : {}) };
    const req = httpRequest({ host: base.hostname, port: base.port, path: r.url, method: r.method, headers, agent, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => { if (size < 2048) chunks.push(c); size += c.length; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8').slice(0, 300) }));
      res.on('error', (e) => resolve({ status: `response ${e.message}`, text: '' }));
    });
    req.on('timeout', () => { req.destroy(new Error('no answer in 30 s')); });
    // The server may answer (413, 400) and close before the whole body is written: an EPIPE/ECONNRESET after an
    // answer is normal, so only a request that never got a status line counts.
    req.on('error', (e) => resolve({ status: `dropped: ${(e as NodeJS.ErrnoException).code ?? e.message}`, text: '' }));
    if (r.body) req.end(r.body);
    else req.end();
  });
}

const printable = (b?: Buffer) => (b ? (b.length > 300 ? `${b.subarray(0, 300).toString('latin1')}… (${b.length} bytes)` : b.toString('latin1')) : '');

/** Runs the fuzzer against a started server for `seconds`; never throws for what it finds (the caller asserts). */
export async function fuzz(s: TestServer, opts: FuzzOptions): Promise<FuzzResult> {
  const seed = opts.seed ?? (Date.now() ^ (Math.random() * 0x7fffffff)) >>> 0;
  const routes = registeredRoutes(s.app).filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS' && !(opts.skip?.(r)));
  const arbs = routes.map((r) => requests([r], opts.maxBodyBytes ?? 2 * 1024 * 1024));
  const result: FuzzResult = { requests: 0, statuses: new Map(), findings: new Map(), seed, ms: 0, perRoute: new Map(),
    routes: routes.map((r) => `${r.method} ${r.url}`) };
  const base = new URL(s.url);
  if (base.hostname !== '127.0.0.1' && base.hostname !== 'localhost' && base.hostname !== '[::1]') throw new Error('the fuzzer runs on loopback only');
  const agent = new Agent({ keepAlive: true, maxSockets: opts.concurrency ?? 4 });
  const started = Date.now();
  const end = started + opts.seconds * 1000;
  let drawn = 0;
  // The fuzzer may regenerate or delete the global key (that is a legal request); keep testing with whatever is current.
  const key = () => s.config.current.api.key ?? s.apiKey;

  const worker = async () => {
    while (Date.now() < end) {
      // Routes in turn (every route is reached within the first routes.length requests), hostile shapes drawn per route.
      const n = drawn++;
      for (const r of fc.sample(arbs[n % arbs.length], { seed: seed + n, numRuns: 1 })) {
        if (!s.config.current.api.key) await s.access.regenerateGlobalKey().catch(() => {});
        const answer = await send(base, agent, r, key());
        result.requests++;
        result.perRoute.set(r.route, (result.perRoute.get(r.route) ?? 0) + 1);
        result.statuses.set(answer.status, (result.statuses.get(answer.status) ?? 0) + 1);
        const leaked = opts.secret !== undefined && answer.text.includes(opts.secret);
        const bad = leaked || (typeof answer.status === 'string' ? !answer.status.startsWith('dropped: EPIPE') && !answer.status.startsWith('dropped: ECONNRESET')
          : answer.status >= 500);
        if (bad) {
          const id = `${r.route} [${r.kind}] → ${answer.status}${leaked ? ' (served a linked file from outside its folder)' : ''}`;
          if (!result.findings.has(id)) {
            result.findings.set(id, { route: r.route, kind: r.kind, status: answer.status,
              example: { method: r.method, url: r.url.slice(0, 300), headers: r.headers, body: printable(r.body), answer: answer.text } });
          }
        }
      }
      opts.onProgress?.(result);
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 4 }, () => worker()));
  agent.destroy();
  result.ms = Date.now() - started;
  return result;
}

/** One line per finding, for test failures and the long-run report. */
export function describeFindings(r: FuzzResult): string {
  return [...r.findings.entries()].map(([id, f]) => `${id}\n    ${f.example.method} ${f.example.url}\n    ${JSON.stringify(f.example.headers)} ${f.example.body.slice(0, 200)}\n    ⇒ ${f.example.answer}`).join('\n');
}
