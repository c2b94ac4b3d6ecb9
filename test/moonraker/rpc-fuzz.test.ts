// Malformed JSON-RPC fuzzed with fast-check, on the socket and on POST /server/jsonrpc and the HTTP mirror: whatever
// arrives (text that is not JSON, wrong envelopes and types, prototype names as methods and keys, deep nesting, huge
// bodies under the frame limit), each reply is a well-formed JSON-RPC answer with a client-side error code (never a
// 500 or an internal error), the server keeps answering, and nothing reaches Object.prototype.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestServer } from '../helpers/server.ts';
import { RpcClient } from './rpc-client.ts';
import { waitFor } from '../helpers/wait.ts';
import { MAX_FRAME_BYTES } from '../../src/moonraker/moonraker-service.ts';

type Reply = { jsonrpc?: unknown; id?: unknown; error?: { code?: unknown; message?: unknown }; result?: unknown };

const PROTO = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];
const KEYS = [...PROTO, 'path', 'filename', 'objects', 'namespace', 'key', 'value', 'script', 'root', 'source', 'dest', 'device', 'action', 'uid',
  'name', 'refresh_token', 'username', 'password', 'count', 'start', 'limit', 'include_monitors', 'extended', 'force', 'printer', 'client_name'];
/** Methods that would end the test's own session or reconnect a printer the fuzz has no use for. */
const SKIP = new Set(['access.logout', 'printer.restart', 'printer.firmware_restart']);

function deep(n: number, open: string, close: string, inner = '1'): string {
  return open.repeat(n) + inner + close.repeat(n);
}

function arbitraries(methods: string[]) {
  const method = fc.oneof(fc.constantFrom(...methods), fc.constantFrom(...PROTO), fc.string({ maxLength: 30 }), fc.constant(''));
  const value = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constantFrom(...PROTO), fc.integer({ min: 10_000, max: 300_000 }).map((n) => 'x'.repeat(n)));
  const params = fc.oneof(
    { weight: 6, arbitrary: fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 5 }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  );
  const id = fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null), fc.jsonValue({ maxDepth: 1 }));
  const envelope = fc.record({ jsonrpc: fc.oneof({ weight: 8, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 0 }) }),
    method, params, id }, { requiredKeys: ['method'] });
  // Text frames: an envelope, a batch, JSON that is not an envelope, not JSON at all, deep nesting, an envelope with a deep value.
  return fc.oneof(
    { weight: 8, arbitrary: envelope.map((e) => JSON.stringify(e)) },
    { weight: 2, arbitrary: fc.array(envelope, { maxLength: 5 }).map((b) => JSON.stringify(b)) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 100_000 }).map((n) => deep(n, '[', ']')) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...methods), fc.integer({ min: 50, max: 50_000 }), fc.boolean()).map(([m, n, arr]) =>
      `{"jsonrpc":"2.0","method":"${m}","params":{"namespace":"fuzz","key":"k","value":${arr ? deep(n, '[', ']') : deep(n, '{"a":', '}')},"objects":${deep(Math.min(n, 500), '{"a":', '}', 'null')}},"id":1}`) },
  );
}

function wellFormed(r: Reply, where: string): void {
  assert.equal(r.jsonrpc, '2.0', `${where}: ${JSON.stringify(r).slice(0, 300)}`);
  assert.ok('id' in r, where);
  if (r.error !== undefined) {
    assert.equal(typeof r.error.code, 'number', where);
    assert.equal(typeof r.error.message, 'string', where);
    assert.ok(r.error.code !== 500 && r.error.code !== -32603 && !((r.error.code as number) >= 500 && (r.error.code as number) < 600 && r.error.code !== 502),
      `${where}: server-side error ${JSON.stringify(r.error).slice(0, 300)}`);
  } else assert.ok('result' in r, where);
}

test('fuzzed JSON-RPC frames on the socket: well-formed client errors only, the socket and the server live on', async (t) => {
  const server = await startTestServer(t);
  const c = await RpcClient.open(`${server.url}/websocket`, { 'X-Api-Key': server.apiKey });
  t.after(() => c.close());
  await c.call('server.connection.identify', { client_name: 'fuzz', version: '1', type: 'other', url: 'x' });
  const methods = server.moonraker!.methodNames().filter((m) => !SKIP.has(m));
  let n = 0;
  await fc.assert(fc.asyncProperty(arbitraries(methods), async (frame) => {
    if (frame.includes('access.logout') || frame.includes('printer.restart') || frame.includes('firmware_restart')) return;
    // Frames over the limit close the socket (robustness.test.ts checks that): these stay under it.
    fc.pre(Buffer.byteLength(frame) <= MAX_FRAME_BYTES);
    assert.ok(!c.closed, 'the socket is open');
    const from = c.raw.length;
    c.ws.send(frame);
    // A sentinel after each frame: the socket still answers (frames without an id get no reply, by the spec).
    const sentinel = `sentinel-${n++}`;
    c.ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'server.websocket.id', id: sentinel }));
    await waitFor('the sentinel', () => c.raw.slice(from).some((m) => !Array.isArray(m) && (m as Reply).id === sentinel), { timeoutMs: 20_000 });
    for (const m of c.raw.slice(from)) {
      if (Array.isArray(m)) for (const r of m as Reply[]) wellFormed(r, frame.slice(0, 200));
      else if ((m as { method?: unknown }).method === undefined || 'id' in (m as object)) wellFormed(m as Reply, frame.slice(0, 200));
    }
  }), { numRuns: 400, ...(process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {}) });
  assert.ok(!c.closed);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  for (const k of ['a', 'k', 'value', 'x']) assert.equal((Object.prototype as Record<string, unknown>)[k], undefined, `Object.prototype.${k}`);
  assert.equal(typeof (await c.call<{ klippy_state: string }>('server.info')).klippy_state, 'string');
});

test('fuzzed bodies on POST /server/jsonrpc and on the HTTP mirror: never a 5xx, always JSON', async (t) => {
  const server = await startTestServer(t);
  const methods = server.moonraker!.methodNames().filter((m) => !SKIP.has(m));
  const path = (m: string) => `/${m.split('.').map((p) => p.replace(/^(get|post|delete)_/, '')).join('/')}`;
  await fc.assert(fc.asyncProperty(arbitraries(methods), fc.constantFrom(...methods), fc.constantFrom('GET', 'POST', 'DELETE'), async (frame, m, verb) => {
    if (frame.includes('access.logout') || frame.includes('restart')) return;
    const rpc = await server.api('/server/jsonrpc', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: frame });
    assert.ok(rpc.status < 500, `/server/jsonrpc ${rpc.status} for ${frame.slice(0, 200)}`);
    const text = await rpc.text();
    if (rpc.status === 200 && text) {
      const body = JSON.parse(text) as Reply | Reply[];
      for (const r of Array.isArray(body) ? body : [body]) wellFormed(r, frame.slice(0, 200));
    }
    const res = await server.api(path(m), verb === 'GET' ? { method: 'GET' } : { method: verb, headers: { 'Content-Type': 'application/json' }, body: frame });
    assert.ok(res.status < 500 || res.status === 502, `${verb} ${path(m)} → ${res.status} for ${frame.slice(0, 200)}`);
    const out = await res.text();
    if (out) JSON.parse(out);
  }), { numRuns: 250 });
  assert.equal((await server.api('/server/info')).status, 200);
});
