// core/gc.ts: a real scavenge frees the memory of dead young Buffers now, without putting gc on the global object; a capped heap stays within its headroom.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { once } from 'node:events';
import { collectYoungGarbage } from '../../src/core/gc.ts';
import { startThread } from '../../src/core/thread-code.ts';
import { waitFor } from '../helpers/wait.ts';

test('collectYoungGarbage frees the memory of dead Buffers at once and leaves no global gc', async () => {
  const hadGc = 'gc' in globalThis;
  collectYoungGarbage();
  await tick();
  const base = process.memoryUsage().arrayBuffers;
  let sum = 0;
  for (let i = 0; i < 64; i++) sum += Buffer.alloc(64 * 1024, 1)[i]; // 4 MB, dead at once
  assert.equal(sum, 64);
  assert.ok(process.memoryUsage().arrayBuffers - base >= 3 * 1024 * 1024, 'nothing collected them yet');
  collectYoungGarbage();
  // V8 frees backing stores on a background thread after the scavenge: on a busy machine that takes a moment (over
  // 3 s once, with the whole suite running on Node 24 and 2 cores), and without the scavenge (nothing here allocates
  // enough to start one) they would stay.
  await waitFor('the dead Buffers\' memory freed', () => process.memoryUsage().arrayBuffers - base < 1024 * 1024 || undefined, 15_000)
    .catch(() => assert.fail(`${process.memoryUsage().arrayBuffers - base} bytes left`));
  assert.equal('gc' in globalThis, hadGc);
});

/** Runs the steady-allocation thread (fixtures/steady-allocation.ts) and returns what it reports. */
async function steadyAllocation(headroomMb: number): Promise<{ grewMb: number; forced: number }> {
  const thread = await startThread(new URL('./fixtures/steady-allocation.ts', import.meta.url), 'unused', { workerData: { headroomMb, rounds: 1100 } });
  const exited = once(thread, 'exit');
  const [report] = await once(thread, 'message') as [{ grewMb: number; forced: number }];
  await exited;
  return report;
}

test('capHeapHeadroom keeps a steadily allocating heap within its headroom, where V8 alone lets it grow by 8 MB', async () => {
  const alone = await steadyAllocation(0);
  const capped = await steadyAllocation(2);
  assert.equal(alone.forced, 0);
  assert.ok(alone.grewMb > 7, `left to V8, the old generation grew ${alone.grewMb.toFixed(1)} MB`);
  assert.ok(capped.forced > 0, 'full GCs of its own');
  // 2 MB of headroom, plus what is promoted until the next check (every 250 ms here) and what the sweeper has not yet
  // given back when sampled (3.2–4.8 MB in all on Node 20 to 26).
  assert.ok(capped.grewMb < 6, `capped at 2 MB, the old generation grew ${capped.grewMb.toFixed(1)} MB`);
});
