// Push channel end to end with the built-in virtual printer: temperatures and serial lines reach authenticated
// clients through `current`, events of the link arrive as `event`, and clients without the terminal permission see
// the status but no serial lines.
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
