// ReplySpin: spins the event loop after a ping-pong send only when replies usually come within the window.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplySpin } from '../../src/transports/reply-spin.ts';

const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

function clocked(maxMs: number) {
  let t = 1000;
  const spin = new ReplySpin({ maxMs, now: () => t });
  return { spin, advance: (ms: number) => { t += ms; } };
}

test('spins after a send once replies have come quickly, and stops when the reply arrives', async () => {
  const { spin, advance } = clocked(1);
  spin.awaiting();
  assert.equal(spin.spinning, false, 'nothing learnt yet: no spin');
  advance(0.2);
  spin.replied();
  assert.ok(Math.abs(spin.typicalReplyMs - 0.2) < 1e-9);
  spin.awaiting();
  assert.equal(spin.spinning, true);
  await turn();
  await turn();
  assert.equal(spin.spinning, true, 'still spinning while the reply is due');
  advance(0.25);
  spin.replied();
  await turn();
  await turn();
  assert.equal(spin.spinning, false);
  assert.equal(spin.spins, 1);
});

test('the spin ends on its own when no reply comes within twice the usual time', async () => {
  const { spin, advance } = clocked(1);
  spin.awaiting();
  advance(0.3);
  spin.replied();
  spin.awaiting();
  assert.equal(spin.spinning, true);
  advance(0.7);
  await turn();
  await turn();
  assert.equal(spin.spinning, false);
});

test('never spins for a firmware slower than the window, or when switched off', () => {
  const slow = clocked(1);
  for (let i = 0; i < 5; i++) {
    slow.spin.awaiting();
    slow.advance(3);
    slow.spin.replied();
  }
  slow.spin.awaiting();
  assert.equal(slow.spin.spinning, false);
  const off = clocked(0);
  off.spin.awaiting();
  off.advance(0.1);
  off.spin.replied();
  off.spin.awaiting();
  assert.equal(off.spin.spinning, false);
  assert.equal(off.spin.spins + slow.spin.spins, 0);
});
