// Push channel end to end with the built-in virtual printer: temperatures, serial lines and the firmware's raw lines
// reach authenticated clients through `current`, events of the link arrive as `event`, and clients without the
// terminal permission see the status but no serial lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { rawClient, sockjsClient, userWithKey } from './push-clients.ts';

type Current = { temps: Array<Record<string, unknown>>; logs?: string[]; state: { text: string; flags: Record<string, boolean> } };

test('temperatures and serial lines of the virtual printer arrive through current', async (t) => {
  const server = await startTestServer(t);
  const { auth } = await userWithKey(server, 'farm');
  const { auth: statusOnly } = await userWithKey(server, 'watcher', { groups: [], permissions: ['STATUS'] });
  const c = await rawClient(server);
  const s = await sockjsClient(server);
  const w = await rawClient(server);
  t.after(() => { c.close(); s.close(); w.close(); });
  c.send({ auth });
  s.send({ auth });
  w.send({ auth: statusOnly });
  await Promise.all([c.next('history'), s.next('history'), w.next('history')]);

  const res = await server.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL', baudrate: 115200 } });
  assert.equal(res.status, 204);
  await c.next('event', (e: { type: string }) => e.type === 'Connected', { timeoutMs: 20_000 });
  const operational = (await c.next('current', (x: Current) => x.state.flags.operational, { timeoutMs: 20_000 })) as Current;
  assert.equal(operational.state.text, 'Operational');

  assert.equal((await server.api('/api/printer/command', { method: 'POST', json: { command: 'M117 hello push' } })).status, 204);
  await c.next('current', (x: Current) => !!x.logs?.some((l) => l.startsWith('Send:') && l.includes('M117 hello push')), { timeoutMs: 20_000 });
  await s.next('current', (x: Current) => !!x.logs?.some((l) => l.includes('M117 hello push')), { timeoutMs: 20_000 });
  await c.next('current', (x: Current) => !!x.logs?.some((l) => l.startsWith('Recv:')), { timeoutMs: 20_000 });

  // Temperature points: an array of {time, tool0: {actual, target}, bed: {...}}.
  const withTemps = (await c.next('current', (x: Current) => x.temps.length > 0, { timeoutMs: 20_000 })) as Current;
  const point = withTemps.temps[0];
  assert.equal(typeof point.time, 'number');
  assert.equal(typeof (point.tool0 as { actual: number }).actual, 'number');
  await w.next('current', (x: Current) => x.temps.length > 0, { timeoutMs: 20_000 });
  assert.ok((w.ofType('current') as Current[]).every((x) => !('logs' in x) && !('messages' in x)));

  // A client that authenticates now gets the history: recent serial lines and the temperature history.
  const late = await rawClient(server);
  t.after(() => late.close());
  late.send({ auth });
  const history = (await late.next('history')) as { temps: unknown[]; logs: string[] };
  assert.ok(history.temps.length > 0);
  assert.ok(history.logs.some((l) => l.includes('M117 hello push')));

  assert.equal((await server.api('/api/connection', { method: 'POST', json: { command: 'disconnect' } })).status, 204);
  await c.next('event', (e: { type: string }) => e.type === 'Disconnected', { timeoutMs: 20_000 });
});

test('current.messages carries the raw lines the firmware sent (history: the newest 300)', async (t) => {
  const server = await startTestServer(t, { settings: { devel: { virtualPrinter: { throttle: 0 } } } });
  const { auth } = await userWithKey(server, 'raw-reader');
  const c = await rawClient(server);
  t.after(() => c.close());
  c.send({ auth });
  await c.next('history');
  const res = await server.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL', baudrate: 115200 } });
  assert.equal(res.status, 204);
  await c.next('event', (e: { type: string }) => e.type === 'Connected', { timeoutMs: 20_000 });

  assert.equal((await server.api('/api/printer/command', { method: 'POST', json: { commands: ['M117 raw line check', 'G28', 'M114'] } })).status, 204);
  type WithLines = { logs?: string[]; messages?: string[] };
  await c.next('current', (x: WithLines) => !!x.messages?.some((m) => m.startsWith('X:')), { timeoutMs: 20_000 });
  const currents = c.ofType('current') as WithLines[];
  const messages = currents.flatMap((x) => x.messages ?? []);
  const received = currents.flatMap((x) => x.logs ?? []).filter((l) => l.startsWith('Recv: ')).map((l) => l.slice(6));
  // Every received line, unchanged and in order (echo: kept, no Recv: prefix), and nothing the host made up itself.
  assert.deepEqual(messages, received);
  assert.ok(messages.includes('echo:raw line check'), messages.join(' | '));
  assert.ok(messages.includes('ok'));
  assert.ok(messages.some((m) => /^X:0\.00 Y:0\.00 Z:0\.00 E:/.test(m)), messages.join(' | '));
  assert.ok(messages.some((m) => m.startsWith('FIRMWARE_NAME:')), 'the M115 answer of the handshake');
  assert.ok(!messages.some((m) => m.startsWith('Send:') || m.startsWith('Recv:') || m.startsWith('Changing monitoring state')));

  // 400 more replies: a client arriving now gets the newest 300 raw lines in its history.
  const many = Array.from({ length: 200 }, (_, i) => `M117 flood ${i}`);
  assert.equal((await server.api('/api/printer/command', { method: 'POST', json: { commands: many } })).status, 204);
  await c.next('current', (x: WithLines) => !!x.messages?.includes('echo:flood 199'), { timeoutMs: 20_000 });
  const late = await rawClient(server);
  t.after(() => late.close());
  late.send({ auth });
  const history = (await late.next('history')) as { messages: string[] };
  assert.equal(history.messages.length, 300);
  // The newest lines (temperature polls may have come after the flood).
  const last = history.messages.lastIndexOf('echo:flood 199');
  assert.ok(last > 250, `flood ends at ${last}`);
  assert.equal(history.messages[last + 1], 'ok');
  assert.ok(!history.messages.includes('echo:raw line check'), 'older lines dropped');
});
