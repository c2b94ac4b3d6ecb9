// The short-lived shared value behind polled device and disk reads (serial ports, scripts folder): one load per window, shared by concurrent callers.
import test from 'node:test';
import assert from 'node:assert/strict';
import { shortLived } from '../../src/http/short-lived.ts';

test('concurrent and later callers within the window share one load; clear() and the end of the window load again', async () => {
  let loads = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  const value = shortLived(async () => { loads++; await gate; return { n: loads }; }, 60_000);
  const a = value.get();
  const b = value.get();
  release();
  assert.equal(await a, await b);
  assert.equal(loads, 1);
  assert.equal(await value.get(), await a);
  value.clear();
  assert.deepEqual(await value.get(), { n: 2 });

  const expired = shortLived(() => ++loads, 0);
  const first = await expired.get();
  assert.equal(await expired.get(), first + 1, 'a zero window never reuses');
});

test('a failed load is not kept: the next caller loads again', async () => {
  let calls = 0;
  const value = shortLived(() => {
    calls++;
    if (calls === 1) throw new Error('scan failed');
    return 'ports';
  }, 60_000);
  await assert.rejects(value.get(), /scan failed/);
  assert.equal(await value.get(), 'ports');
  assert.equal(calls, 2);
});
