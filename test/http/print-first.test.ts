// Load shedding while printing (src/http/print-first.ts): a saturated event loop sheds status GETs with 503 + Retry-After, never commands; nothing samples the loop while no print could be shed for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify from 'fastify';
import { registerPrintFirst, type LoopPressure } from '../../src/http/print-first.ts';
import type { GantryApp } from '../../src/http/types.ts';

/** Keeps the event loop busy (as 64 wrk connections do) until the sampler's next reading has seen it saturated. */
async function saturate(pressure: LoopPressure): Promise<void> {
  for (let i = 0; i < 40; i++) {
    const until = Date.now() + 300;
    while (Date.now() < until) { /* busy: the loop cannot turn */ }
    await new Promise((r) => setImmediate(r));
    if (pressure.saturated) return;
  }
  assert.fail(`the loop was never seen saturated: ${JSON.stringify(pressure.reading())}`);
}

test('while printing on a saturated loop, GET /api/* answers 503 with Retry-After; commands, UI files and an idle printer are served', async (t) => {
  let printing = true;
  const app = Fastify();
  // A long sample interval: the reading taken while the loop was blocked stays in force for the requests below.
  const pressure = registerPrintFirst(app as unknown as GantryApp, { printing: () => printing, sampleIntervalMs: 1000, budgetPerSecond: 2 });
  app.get('/api/printer', async () => ({ state: 'Printing' }));
  app.post('/api/job', async () => ({ ok: true }));
  app.get('/static/app.js', async () => 'js');
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());

  assert.equal((await fetch(`${url}/api/printer`)).status, 200, 'an idle loop sheds nothing');
  assert.equal(pressure.reading().sampling, true, 'a status poll during a print starts the sampler');
  await saturate(pressure);
  // The budget's polls are answered, the rest of the second's are shed (a new second may start midway: 8 tries).
  const answers = [];
  for (let i = 0; i < 8; i++) answers.push(await fetch(`${url}/api/printer`));
  const statuses = answers.map((r) => r.status);
  const shed = answers.find((r) => r.status === 503);
  assert.ok(shed, `none shed: ${statuses.join(' ')}`);
  assert.ok(statuses.filter((x) => x === 200).length <= 4, `at most the budget answered per second: ${statuses.join(' ')}`);
  assert.equal(shed.headers.get('retry-after'), '1');
  assert.match(shed.headers.get('content-type') ?? '', /application\/json/);
  assert.match(((await shed.json()) as { error: string }).error, /printing/i);
  assert.equal((await fetch(`${url}/api/job`, { method: 'POST' })).status, 200, 'a command is never shed');
  assert.equal((await fetch(`${url}/static/app.js`)).status, 200, 'the UI is not shed');
  printing = false;
  assert.equal((await fetch(`${url}/api/printer`)).status, 200, 'nothing is shed while not printing');
});

test('utilisation is judged per sample, not since start: a loop saturated after an idle spell is seen as saturated', async (t) => {
  const app = Fastify();
  const pressure = registerPrintFirst(app as unknown as GantryApp, { printing: () => true, sampleIntervalMs: 250 });
  app.get('/api/printer', async () => ({ state: 'Printing' }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  assert.equal((await fetch(`${url}/api/printer`)).status, 200);
  // The idle spell is the scenario itself: three times the sample interval with nothing to do.
  await new Promise((r) => setTimeout(r, 750));
  assert.ok(pressure.reading().utilization < 0.9, `an idle loop read ${pressure.reading().utilization.toFixed(2)}`);
  let seen = 0;
  // Busy for ~2.4 s, one 300 ms stretch at a time: averaged since start (≈ 0.7 at most) it never passes 0.9.
  for (let i = 0; i < 8 && seen <= 0.9; i++) {
    const until = Date.now() + 300;
    while (Date.now() < until) { /* busy */ }
    await new Promise((r) => setImmediate(r));
    seen = pressure.reading().utilization;
  }
  assert.ok(seen > 0.9, `utilisation after the idle spell read ${seen.toFixed(2)}`);
});

test('nothing samples the loop while no print runs, and sampling stops once the print ends', async (t) => {
  let printing = false;
  const app = Fastify();
  const pressure = registerPrintFirst(app as unknown as GantryApp, { printing: () => printing, sampleIntervalMs: 50 });
  app.get('/api/printer', async () => ({ state: 'Operational' }));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  for (let i = 0; i < 5; i++) assert.equal((await fetch(`${url}/api/printer`)).status, 200);
  assert.equal(pressure.reading().sampling, false, 'status polls without a print start no sampler (no 10 ms wake-ups all day)');

  printing = true;
  await (await fetch(`${url}/api/printer`)).arrayBuffer();
  assert.equal(pressure.reading().sampling, true);
  printing = false;
  // The sampler's next tick sees the print over and stops for good (bounded wait, one tick is 50 ms).
  for (let i = 0; i < 100 && pressure.reading().sampling; i++) await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(pressure.reading(), { sampling: false, delayMs: 0, utilization: 0 });
});
