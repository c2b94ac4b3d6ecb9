// Load shedding while printing (src/http/print-first.ts): a saturated event loop sheds status GETs with 503 + Retry-After, never commands.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { registerPrintFirst } from '../../src/http/print-first.ts';
import type { GantryApp } from '../../src/http/types.ts';

/** Keeps the event loop busy (as 64 wrk connections do) until under-pressure's next sample has seen it saturated. */
async function saturate(app: { memoryUsage(): { eventLoopUtilized: number } }): Promise<void> {
  for (;;) {
    const until = Date.now() + 300;
    while (Date.now() < until) { /* busy: the loop cannot turn */ }
    await new Promise((r) => setImmediate(r));
    if (app.memoryUsage().eventLoopUtilized > 0.9) return;
  }
}

test('while printing on a saturated loop, GET /api/* answers 503 with Retry-After; commands, UI files and an idle printer are served', async (t) => {
  let printing = true;
  const app = Fastify();
  // A long sample interval: the reading taken while the loop was blocked stays in force for the requests below.
  await registerPrintFirst(app as unknown as GantryApp, { printing: () => printing, sampleIntervalMs: 5000, budgetPerSecond: 2 });
  app.get('/api/printer', async () => ({ state: 'Printing' }));
  app.post('/api/job', async () => ({ ok: true }));
  app.get('/static/app.js', async () => 'js');
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const mem = app as unknown as { memoryUsage(): { eventLoopUtilized: number } };

  assert.equal((await fetch(`${url}/api/printer`)).status, 200, 'an idle loop sheds nothing');
  await saturate(mem);
  // The budget's polls are answered, the rest of the second's are shed (a new second may start midway: 8 tries).
  const answers = [];
  for (let i = 0; i < 8; i++) answers.push(await fetch(`${url}/api/printer`));
  const statuses = answers.map((r) => r.status);
  const shed = answers.find((r) => r.status === 503);
  assert.ok(shed, `none shed: ${statuses.join(' ')}`);
  assert.ok(statuses.filter((x) => x === 200).length <= 4, `at most the budget answered per second: ${statuses.join(' ')}`);
  assert.equal(shed.headers.get('retry-after'), '1');
  assert.match(((await shed.json()) as { error: string }).error, /printing/i);
  assert.equal((await fetch(`${url}/api/job`, { method: 'POST' })).status, 200, 'a command is never shed');
  assert.equal((await fetch(`${url}/static/app.js`)).status, 200, 'the UI is not shed');
  printing = false;
  assert.equal((await fetch(`${url}/api/printer`)).status, 200, 'nothing is shed while not printing');
});

test('utilisation is judged per sample, not since start: a loop saturated after an idle spell is seen as saturated', async (t) => {
  const app = Fastify();
  await registerPrintFirst(app as unknown as GantryApp, { printing: () => true, sampleIntervalMs: 250 });
  app.get('/api/printer', async () => ({ state: 'Printing' }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  const mem = app as unknown as { memoryUsage(): { eventLoopUtilized: number } };
  // The idle spell is the scenario itself: three times the sample interval with nothing to do.
  await new Promise((r) => setTimeout(r, 750));
  let seen = 0;
  // Busy for ~2.4 s, one 300 ms stretch at a time: averaged since start (≈ 0.7 at most) it never passes 0.9.
  for (let i = 0; i < 8 && seen <= 0.9; i++) {
    const until = Date.now() + 300;
    while (Date.now() < until) { /* busy */ }
    await new Promise((r) => setImmediate(r));
    seen = mem.memoryUsage().eventLoopUtilized;
  }
  assert.ok(seen > 0.9, `utilisation after the idle spell read ${seen.toFixed(2)}`);
});
