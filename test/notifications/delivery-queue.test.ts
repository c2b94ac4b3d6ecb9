// One target's queue (src/notifications/delivery-queue.ts): retries with a doubling delay, the rate limit, the bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeliveryQueue, type DeliveryOutcome } from '../../src/notifications/delivery-queue.ts';
import { systemClock } from '../../src/core/clock.ts';

function recorder() {
  const outcomes: DeliveryOutcome<string>[] = [];
  let wake: (() => void) | null = null;
  return {
    outcomes,
    done: (o: DeliveryOutcome<string>) => { outcomes.push(o); wake?.(); },
    async until(n: number) { while (outcomes.length < n) await new Promise<void>((r) => { wake = r; }); },
  };
}

test('a failing delivery is tried again, up to the retries, then reported with its reason', async () => {
  const r = recorder();
  let calls = 0;
  const q = new DeliveryQueue<string>(async (item) => {
    calls++;
    if (item === 'flaky' && calls < 3) throw new Error(`refused ${calls}`);
    if (item === 'dead') throw new Error('connection refused');
  }, () => ({ perMinute: 100, queueSize: 10, retries: 2, retryDelayMs: 5 }), r.done, systemClock);
  q.push('flaky');
  await r.until(1);
  assert.deepEqual(r.outcomes[0], { item: 'flaky', ok: true, attempts: 3 });
  q.push('dead');
  await r.until(2);
  assert.deepEqual(r.outcomes[1], { item: 'dead', ok: false, attempts: 3, error: 'connection refused' });
  q.stop();
});

test('the rate limit holds messages back, and a full queue drops the oldest', async () => {
  const r = recorder();
  const sent: string[] = [];
  const now = 1_000_000;
  const clock = { now: () => now, monotonic: () => now };
  const q = new DeliveryQueue<string>(async (item) => { sent.push(item); }, () => ({ perMinute: 2, queueSize: 2, retries: 0, retryDelayMs: 1 }), r.done, clock);
  for (const m of ['a', 'b', 'c', 'd']) q.push(m);
  // a is being sent at once; b, c wait; d pushed out b (queue of 2).
  await r.until(3);
  assert.deepEqual(sent, ['a', 'c']);
  assert.equal(r.outcomes.find((o) => o.item === 'b')?.dropped, true);
  assert.equal(q.length, 1, 'd waits for the minute to pass');
  q.stop();
  assert.equal(r.outcomes.find((o) => o.item === 'd')?.dropped, true);
});
