// collectYoungGarbage: a real scavenge frees the memory of dead young Buffers now, without putting gc on the global object.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { collectYoungGarbage } from '../../src/core/young-gc.ts';
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
