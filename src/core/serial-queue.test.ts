// SerialQueue: operations run one at a time in the order asked for, and one that fails holds up none after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SerialQueue } from './serial-queue.ts';

test('operations never overlap, run in order, and a failure is its caller\'s alone', async () => {
  const queue = new SerialQueue();
  const log: string[] = [];
  let running = 0;
  const op = (name: string, fail = false) => queue.run(async () => {
    running++;
    assert.equal(running, 1, `${name} overlapped another`);
    log.push(`start ${name}`);
    await new Promise((r) => setTimeout(r, 5));
    log.push(`end ${name}`);
    running--;
    if (fail) throw new Error(`${name} failed`);
    return name;
  });
  const results = await Promise.allSettled([op('a'), op('b', true), op('c')]);
  assert.deepEqual(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)), ['a', 'b failed', 'c']);
  assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
});
