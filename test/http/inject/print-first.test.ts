// Load shedding in the app (src/http/app.ts + print-first.ts): status GETs are shed while printing on a saturated loop only when the printer link shares that loop.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { injectApp, type InjectApp } from '../../helpers/inject-app.ts';
import { HOUR_MS, jumpClock } from '../../helpers/clock-jump.ts';
import { waitFor } from '../../helpers/wait.ts';

/** Busy until the sampler's next reading (every 200 ms) has seen the loop saturated. */
async function saturate(s: InjectApp): Promise<void> {
  const pressure = s.app.loopPressure!;
  for (let i = 0; i < 20; i++) {
    const until = Date.now() + 300;
    while (Date.now() < until) { /* busy: the loop cannot turn */ }
    await new Promise((r) => setImmediate(r));
    if (pressure.saturated) return;
  }
  assert.fail('the loop was never seen saturated');
}

async function statuses(s: InjectApp, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await s.request('GET', '/api/version')).status);
  return out;
}

test('printing on a saturated loop: nothing is shed with the link in its own thread; beyond the budget with the link on the main thread', async (t) => {
  const s = await injectApp(t);
  s.printer.busy = true;
  assert.equal(s.config.current.serial.linkThread, 'worker');
  const worker = await statuses(s, 80);
  assert.deepEqual([...new Set(worker)], [200], 'a link thread does not need the API shed');
  assert.equal(s.app.loopPressure!.reading().sampling, false, 'and its event loop is not even sampled');

  await s.config.patch({ serial: { linkThread: 'main' } });
  await statuses(s, 1); // a status poll during the print wakes the sampler
  await saturate(s);
  const main = await statuses(s, 80);
  assert.ok(main.includes(503), `with the link on the main thread status GETs beyond the budget are shed: ${main.join(' ')}`);
});

test('after the wall clock jumps back an hour, the budget of status polls still renews every second', async (t) => {
  const s = await injectApp(t);
  s.printer.busy = true;
  await s.config.patch({ serial: { linkThread: 'main' } });
  await statuses(s, 1);
  await saturate(s);
  assert.ok((await statuses(s, 80)).includes(503), 'the budget was spent');
  jumpClock(t, -HOUR_MS);
  // Before, the spent budget stayed spent until the clock caught up: every status poll shed for an hour.
  await waitFor('a status poll answered on the saturated loop', async () => {
    await saturate(s);
    const status = (await s.request('GET', '/api/version')).status;
    return status === 200 && s.app.loopPressure!.saturated;
  }, 15_000);
});
