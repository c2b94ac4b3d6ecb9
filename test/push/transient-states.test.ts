// States that last less than a `current` period (Finishing, Cancelling, Starting) still reach every push client, each
// in a `current` of its own and in order, whatever the client's throttle: farm managers close their print records on
// flags.finishing / flags.cancelling.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { rawClient, sockjsClient, userWithKey, type PushTestClient } from './push-clients.ts';

type Current = { state: { text: string; flags: Record<string, boolean> } };
type Ev = { type: string };

/** The states the client was sent, in order, with consecutive repeats folded. */
function states(c: PushTestClient, from = 0): Current['state'][] {
  const out: Current['state'][] = [];
  for (const m of c.messages.slice(from)) {
    if (!('current' in m)) continue;
    const s = (m.current as Current).state;
    if (out.at(-1)?.text !== s.text) out.push(s);
  }
  return out;
}

function indexOf(c: PushTestClient, payload: unknown): number {
  return c.messages.findIndex((m) => m.current === payload);
}

function gcode(moves: number): Blob {
  const lines = ['G28', 'G90'];
  for (let i = 0; i < moves; i++) lines.push(`G1 X${(i % 100) + 1} Y${(i * 3) % 100} F6000`);
  return new Blob([lines.join('\n') + '\n']);
}

test('a finished and a cancelled print: Finishing and Cancelling each reach throttled clients in a current of their own, then Operational', async (t) => {
  const server = await startTestServer(t, { settings: { devel: { virtualPrinter: { throttle: 0 } } } });
  const { auth, key } = await userWithKey(server, 'farm-manager');
  const raw = await rawClient(server);
  const sjs = await sockjsClient(server);
  t.after(() => { raw.close(); sjs.close(); });
  for (const c of [raw, sjs]) {
    // 1000 × 500 ms: without state changes nothing more would come during this test.
    c.send({ auth });
    c.send({ throttle: 1000 });
  }
  await Promise.all([raw.next('history'), sjs.next('history')]);

  assert.equal((await server.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL' } })).status, 204);
  for (const c of [raw, sjs]) await c.next('current', (x: Current) => x.state.text === 'Operational', { timeoutMs: 20_000 });

  // A print that runs to its end.
  const mark = raw.messages.length;
  const markS = sjs.messages.length;
  const form = new FormData();
  form.append('file', gcode(50), 'short.gcode');
  form.append('print', 'true');
  assert.equal((await server.api('/api/files/local', { method: 'POST', body: form, key })).status, 201);
  await raw.next('event', (e: Ev) => e.type === 'PrintDone', { timeoutMs: 30_000, from: mark });
  for (const [c, from] of [[raw, mark], [sjs, markS]] as const) {
    const finishing = await c.next('current', (x: Current) => x.state.flags.finishing, { timeoutMs: 10_000, from });
    assert.equal((finishing as Current).state.text, 'Finishing');
    await c.next('current', (x: Current) => x.state.text === 'Operational', { timeoutMs: 10_000, from: indexOf(c, finishing) + 1 });
    const seen = states(c, from).map((s) => s.text);
    assert.deepEqual(seen.slice(-3), ['Printing', 'Finishing', 'Operational'], seen.join(' → '));
    assert.ok(seen.indexOf('Starting') < seen.indexOf('Printing'), seen.join(' → '));
  }

  // A print cancelled while it runs.
  const mark2 = raw.messages.length;
  const mark2S = sjs.messages.length;
  const form2 = new FormData();
  form2.append('file', gcode(50_000), 'long.gcode');
  form2.append('print', 'true');
  assert.equal((await server.api('/api/files/local', { method: 'POST', body: form2, key })).status, 201);
  await raw.next('current', (x: Current) => x.state.text === 'Printing', { timeoutMs: 20_000, from: mark2 });
  assert.equal((await server.api('/api/job', { method: 'POST', json: { command: 'cancel' }, key })).status, 204);
  await raw.next('event', (e: Ev) => e.type === 'PrintCancelled', { timeoutMs: 30_000, from: mark2 });
  for (const [c, from] of [[raw, mark2], [sjs, mark2S]] as const) {
    const cancelling = await c.next('current', (x: Current) => x.state.flags.cancelling, { timeoutMs: 10_000, from });
    assert.equal((cancelling as Current).state.text, 'Cancelling');
    await c.next('current', (x: Current) => x.state.text === 'Operational', { timeoutMs: 10_000, from: indexOf(c, cancelling) + 1 });
    const seen = states(c, from);
    const i = seen.findIndex((s) => s.flags.cancelling);
    assert.deepEqual(seen.slice(i - 1).map((s) => s.text), ['Printing', 'Cancelling', 'Operational'], seen.map((s) => s.text).join(' → '));
  }
});
