// Malformed JSON-RPC never crashes the edge: each bad frame gets its error (or a closed socket for an oversized one),
// prototype names are unknown methods, hostile keys do not reach Object.prototype, every method survives odd params.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { RpcClient } from './rpc-client.ts';
import { waitFor } from '../helpers/wait.ts';

type Reply = { jsonrpc?: string; id?: unknown; error?: { code: number; message: string }; result?: unknown };

test('malformed frames get JSON-RPC errors and the socket stays usable', async (t) => {
  const server = await startTestServer(t);
  const c = await RpcClient.open(`${server.url}/websocket`, { 'X-Api-Key': server.apiKey });
  t.after(() => c.close());
  const code = async (text: string) => ((await c.sendRaw(text)) as Reply).error?.code;
  assert.equal(await code('{not json'), -32700);
  assert.equal(await code('[]'), -32600);
  assert.equal(await code('42'), -32600);
  assert.equal(await code('{"method":"server.info","id":1}'), -32600);
  assert.equal(await code('{"jsonrpc":"2.0","method":5,"id":1}'), -32600);
  assert.equal(await code('{"jsonrpc":"2.0","method":"server.info","params":[1],"id":1}'), -32602);
  assert.equal(await code('{"jsonrpc":"2.0","method":"server.info","id":{"a":1}}'), -32600);
  for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'no.such.method', '']) {
    assert.equal(await code(JSON.stringify({ jsonrpc: '2.0', method: name, id: 7 })), -32601, name);
  }
  // ids come back as sent, string or number.
  assert.equal(((await c.sendRaw('{"jsonrpc":"2.0","method":"server.info","id":"abc"}')) as Reply).id, 'abc');
  // A batch is answered with an array, each reply in its place; an oversized batch is refused whole.
  const batch = (await c.sendRaw(JSON.stringify([{ jsonrpc: '2.0', method: 'printer.objects.list', id: 1 }, { jsonrpc: '2.0', method: 'nope', id: 2 }, 'x']))) as Reply[];
  assert.deepEqual(batch.map((r) => [r.id, r.error?.code ?? 'ok']), [[1, 'ok'], [2, -32601], [null, -32600]]);
  assert.equal(await code(JSON.stringify(Array.from({ length: 300 }, (_, i) => ({ jsonrpc: '2.0', method: 'server.info', id: i })))), -32600);
  // Deep nesting: in the frame, and as a stored value.
  assert.equal(await code('['.repeat(200_000)), -32700);
  let deep: unknown = 1;
  for (let i = 0; i < 100; i++) deep = { a: deep };
  assert.equal(await code(JSON.stringify({ jsonrpc: '2.0', method: 'server.database.post_item', params: { namespace: 'x', key: 'k', value: deep }, id: 3 })), 400);
  // Prototype names as keys stay plain data.
  const r = (await c.sendRaw(JSON.stringify({ jsonrpc: '2.0', method: 'server.database.post_item', params: { namespace: 'x', key: '__proto__.polluted', value: 'yes' }, id: 4 }))) as Reply;
  assert.ok(r.result !== undefined || r.error !== undefined);
  await c.sendRaw('{"jsonrpc":"2.0","method":"server.database.post_item","params":{"namespace":"x","key":"constructor.prototype.polluted","value":"yes"},"id":5}');
  await c.sendRaw('{"jsonrpc":"2.0","method":"printer.objects.query","params":{"objects":{"__proto__":null,"constructor":["x"]}},"id":6}');
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  // A probe the bed mesh refuses (no printer connected): an error answer, nothing left waiting (the next test runs on).
  assert.equal(await code(JSON.stringify({ jsonrpc: '2.0', method: 'printer.gcode.script', params: { script: 'BED_MESH_CALIBRATE' }, id: 8 })), 400);
  assert.equal((await c.call<{ klippy_state: string }>('server.info')).klippy_state, 'error');
});

test('an oversized frame closes that socket only; odd params for every method never crash the server', async (t) => {
  const server = await startTestServer(t);
  const big = await RpcClient.open(`${server.url}/websocket`, { 'X-Api-Key': server.apiKey });
  big.ws.send(JSON.stringify({ jsonrpc: '2.0', method: 'server.info', params: { pad: 'x'.repeat(2 * 1024 * 1024) }, id: 1 }));
  await waitFor('the oversized socket closed', () => big.closed);

  const c = await RpcClient.open(`${server.url}/websocket`, { 'X-Api-Key': server.apiKey });
  t.after(() => c.close());
  const methods = server.moonraker!.methodNames().filter((m) => !['printer.restart', 'printer.firmware_restart', 'access.logout'].includes(m));
  const odd: Array<Record<string, unknown>> = [{}, { path: 1 }, { path: '../../etc/passwd' }, { path: 'gcodes/../../x' }, { filename: {} },
    { filename: '../x.gcode' }, { objects: [] }, { objects: { toolhead: 5 } }, { namespace: '__proto__', key: '__proto__' }, { script: 5 },
    { script: 'FOO BAR=1' }, { source: 'gcodes/a', dest: 'config/b' }, { root: 'logs' }, { count: 'x' }, { uid: null }, { start: -5, limit: 1e9 }];
  for (const m of methods) {
    for (const params of odd) {
      const reply = (await c.sendRaw(JSON.stringify({ jsonrpc: '2.0', method: m, params, id: 1 }))) as Reply;
      assert.ok(reply.result !== undefined || (reply.error && typeof reply.error.code === 'number' && reply.error.code !== 500), `${m} ${JSON.stringify(params)}: ${JSON.stringify(reply)}`);
    }
  }
  // The HTTP mirror: a body that is not JSON is a 400 in Moonraker's shape.
  const bad = await fetch(`${server.url}/server/database/item`, { method: 'POST', headers: { 'X-Api-Key': server.apiKey, 'Content-Type': 'application/json' }, body: '{nope' });
  assert.equal(bad.status, 400);
  assert.equal(((await bad.json()) as { error: { code: number } }).error.code, 400);
  assert.equal((await server.api('/server/no/such')).status, 404);
  // Deep nesting over HTTP: a JSON-RPC error, or a 400, never a 500.
  const deep = await server.api('/server/jsonrpc', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '['.repeat(5000) + ']'.repeat(5000) });
  assert.equal(deep.status, 200);
  assert.equal(((await deep.json()) as Array<{ error: { code: number } }>)[0].error.code, -32600);
  const deepItem = await server.api('/server/database/item', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: `{"namespace":"x","key":"k","value":${'['.repeat(5000)}${']'.repeat(5000)}}` });
  assert.equal(deepItem.status, 400);
  assert.equal((await c.call<{ klippy_state: string }>('server.info')).klippy_state, 'error');
});
