// Push `subscribe` patterns for terminal lines: matched in time linear in the line (a pattern that backtracks for
// ever in JavaScript's RegExp cannot hold the server), unsupported ones refused, a client's subscribes applied in order.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { rawClient, userWithKey, sleep } from './push-clients.ts';
import { startScriptedPush } from './scripted-printer.ts';
import { waitFor } from '../helpers/wait.ts';

/** The client's `current` logs from message `from` on. */
const logsSince = (c: { ofType(type: string): unknown[] }, from: number): string[] =>
  (c.ofType('current') as Array<{ logs: string[] }>).slice(from).flatMap((m) => m.logs);

/** Logs `probe` (and a line the pattern refuses) until a `current` carries only the probe: the filter is in effect. */
async function filterInEffect(sp: Awaited<ReturnType<typeof startScriptedPush>>, c: { ofType(type: string): unknown[] }, probe: string): Promise<number> {
  await waitFor('the subscription in effect', () => {
    sp.printer.log('Send: M117 refused', probe);
    return (c.ofType('current') as Array<{ logs: string[] }>).some((m) => m.logs.length > 0 && m.logs.every((l) => l === probe)) || undefined;
  }, { intervalMs: 50 });
  await sleep(600); // one throttle period: what the probes sent is out
  return c.ofType('current').length;
}

/** A server with a scripted printer and `count` raw push clients of one user, each authenticated and past its history. */
async function authedClients(t: TestContext, user: string, count: number) {
  const server = await startTestServer(t);
  const sp = await startScriptedPush(t, server);
  const { auth } = await userWithKey(server, user);
  const clients = await Promise.all(Array.from({ length: count }, () => rawClient(sp)));
  t.after(() => { for (const c of clients) c.close(); });
  for (const c of clients) {
    c.send({ auth });
    await c.next('history');
  }
  return { server, sp, clients };
}

test('a pattern that backtracks for ever in a JavaScript RegExp filters in linear time; the API answers meanwhile', async (t) => {
  const { server, sp, clients: [evil, same] } = await authedClients(t, 'eve', 2);
  // (a|a)+$ against 40 a's and a "!" is 2^40 steps of backtracking for JavaScript's RegExp.
  for (const c of [evil, same]) c.send({ subscribe: { state: { logs: '(a|a)+$', messages: false } } });
  await filterInEffect(sp, evil, 'Recv: aa');
  await filterInEffect(sp, same, 'Recv: aa');
  const seenEvil = evil.ofType('current').length;
  const seenSame = same.ofType('current').length;
  const evilLine = `Send: M117 ${'a'.repeat(40)}!`;
  const matching = `Recv: echo:${'a'.repeat(40)}`;
  sp.printer.log(evilLine, matching, 'Recv: ok');
  const before = Date.now();
  assert.equal((await server.api('/api/version')).status, 200);
  await waitFor('the matching line', () => logsSince(evil, seenEvil).includes(matching) || undefined);
  assert.ok(Date.now() - before < 5_000, `took ${Date.now() - before} ms`);
  assert.deepEqual(logsSince(evil, seenEvil), [matching]);
  await waitFor('the matching line at the second client', () => logsSince(same, seenSame).includes(matching) || undefined);
  assert.deepEqual(logsSince(same, seenSame), [matching]);
});

test('a pattern with look-around or a back-reference is refused like an invalid one: the client keeps its filter', async (t) => {
  const { sp, clients: [c] } = await authedClients(t, 'gil', 1);
  c.send({ subscribe: { state: { logs: '^Recv:', messages: false } } });
  const seen = await filterInEffect(sp, c, 'Recv: probe');
  for (const logs of ['Recv:(?=ok)', '(Recv)\\1', '(?<!Send)x', '[']) c.send({ subscribe: { state: { logs, messages: false } } });
  await sleep(300);
  sp.printer.log('Send: G28', 'Recv: ok', 'Recv: x');
  await waitFor('the lines after the refused subscribes', () => logsSince(c, seen).includes('Recv: x') || undefined);
  assert.deepEqual(logsSince(c, seen), ['Recv: ok', 'Recv: x']);
});

test("a client's subscribes apply in the order sent", async (t) => {
  const { sp, clients: [c] } = await authedClients(t, 'fay', 1);
  c.send({ subscribe: { state: { logs: '^Recv:', messages: false } } });
  c.send({ subscribe: { state: false } });
  c.send({ subscribe: { state: { logs: 'second', messages: false } } });
  await waitFor('the last subscription in effect', () => {
    sp.printer.log('Recv: first', 'Send: second');
    const logs = logsSince(c, 0);
    return logs.includes('Send: second') || undefined;
  }, { intervalMs: 50 });
  await sleep(600);
  assert.ok(logsSince(c, 0).every((l) => l === 'Send: second'), JSON.stringify(logsSince(c, 0).slice(0, 5)));
});
