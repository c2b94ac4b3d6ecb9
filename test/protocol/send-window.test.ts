// The flow-control parts on their own: the in-flight ring against a plain array model, the three window strategies,
// and the resend history ring.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  InFlight, PingPong, SendAhead, AdvancedOkWindow, LineHistory, FLAG_LONG, FLAG_HEATING, FLAG_PROBE, FLAG_TEMP_QUERY,
} from '../../src/protocol/send-window.ts';

type Entry = { n: number; bytes: number; flags: number; epoch: number };

test('InFlight behaves like a FIFO array through growth and wrap-around (count, bytes, flags, epochs, peeks)', () => {
  const op = fc.oneof(
    fc.record({ push: fc.record({ n: fc.integer({ min: -1, max: 1e6 }), bytes: fc.integer({ min: 1, max: 96 }), flags: fc.integer({ min: 0, max: 15 }), epoch: fc.nat(1000) }) }),
    fc.constant({ shift: true as const }),
    fc.constant({ clear: true as const }),
  );
  fc.assert(fc.property(fc.integer({ min: 1, max: 8 }), fc.array(op, { maxLength: 300 }), (capacity, ops) => {
    const f = new InFlight(capacity);
    const model: Entry[] = [];
    for (const o of ops) {
      if ('push' in o) {
        f.push(o.push.n, o.push.bytes, o.push.flags, o.push.epoch);
        model.push(o.push);
      } else if ('shift' in o) {
        const m = model.shift();
        assert.equal(f.shift(), m ? m.flags : -1);
      } else {
        f.clear();
        model.length = 0;
      }
      assert.equal(f.count, model.length);
      assert.equal(f.totalBytes, model.reduce((s, e) => s + e.bytes, 0));
      assert.equal(f.peekNumber(), model.length ? model[0].n : -2);
      assert.equal(f.peekEpoch(), model.length ? model[0].epoch : -1);
      assert.equal(f.peekFlags(), model.length ? model[0].flags : -1);
      assert.equal(f.flagsInFlight(), model.reduce((s, e) => s | e.flags, 0));
      for (const flag of [FLAG_LONG, FLAG_HEATING, FLAG_TEMP_QUERY, FLAG_PROBE]) {
        assert.equal(f.has(flag), model.some((e) => (e.flags & flag) !== 0));
      }
    }
  }), { numRuns: 300, seed: 15 });
});

test('ping-pong allows one line at a time, whatever its size', () => {
  const f = new InFlight();
  const w = new PingPong();
  assert.equal(w.canSend(f), true);
  f.push(1, 500, 0);
  assert.equal(w.canSend(f), false);
  f.shift();
  assert.equal(w.canSend(f), true);
});

test('send-ahead keeps the bytes in flight within the receive buffer and the lines within the limit; one line always may go', () => {
  const w = new SendAhead(64, 3);
  const f = new InFlight();
  assert.equal(w.canSend(f, 200), true, 'an oversized line still goes when nothing is in flight');
  f.push(1, 30, 0);
  assert.equal(w.canSend(f, 34), true);
  assert.equal(w.canSend(f, 35), false, '30 + 35 > 64');
  f.push(2, 20, 0);
  assert.equal(w.canSend(f, 14), true);
  f.push(3, 10, 0);
  assert.equal(w.canSend(f, 1), false, 'three lines is the limit');
  f.shift();
  assert.equal(w.canSend(f, 34), true);
});

test('ADVANCED_OK window: one slot until the firmware tells more, never above the configured limit or the byte budget', () => {
  const w = new AdvancedOkWindow(100, 4);
  const f = new InFlight();
  f.push(1, 10, 0);
  assert.equal(w.canSend(f, 10), false, 'one slot before any B value');
  w.bufferFree(7);
  assert.equal(w.canSend(f, 10), true);
  f.push(2, 10, 0);
  f.push(3, 10, 0);
  f.push(4, 10, 0);
  assert.equal(w.canSend(f, 10), false, 'capped at maxLines = 4 although the firmware said 7');
  f.shift();
  assert.equal(w.canSend(f, 71), false, '30 + 71 > 100');
  assert.equal(w.canSend(f, 70), true);
  w.bufferFree(1);
  assert.equal(w.canSend(f, 10), true, 'a smaller B later (a busy queue) does not shrink the learned size');
});

test('each strategy owns its branching: ping-pong awaits the reply and turns into the ADVANCED_OK window only when allowed', () => {
  const f = new InFlight();
  const pp = new PingPong();
  assert.equal(pp.awaitsReply(f), false, 'nothing in flight');
  f.push(1, 10, 0);
  assert.equal(pp.awaitsReply(f), true);
  assert.equal(pp.bufferFree(3, { advancedOk: false, rxBufferSize: 0, maxLinesInFlight: 4 }), pp, 'advancedOk off: stays');
  const adv = pp.bufferFree(3, { advancedOk: true, rxBufferSize: 0, maxLinesInFlight: 4 });
  assert.equal(adv.name, 'advanced-ok');
  assert.equal(adv.awaitsReply(f), false);
  f.push(2, 10, 0);
  f.push(3, 10, 0);
  assert.equal(adv.canSend(f, 10), false, 'the 3 free slots told at the switch are the window');
  f.shift();
  assert.equal(adv.canSend(f, 10), true);
  const sa = new SendAhead(127, 8);
  assert.equal(sa.bufferFree(5, { advancedOk: true, rxBufferSize: 127, maxLinesInFlight: 8 }), sa, 'send-ahead keeps counting bytes');
  assert.equal(sa.awaitsReply(f), false);
});

test('LineHistory keeps the last `capacity` lines by number; older, future and negative numbers are unknown', () => {
  const h = new LineHistory(4);
  for (let n = 1; n <= 10; n++) h.add(n, `N${n} G1`);
  assert.equal(h.get(10), 'N10 G1');
  assert.equal(h.get(7), 'N7 G1');
  assert.equal(h.get(6), undefined, 'overwritten by line 10');
  assert.equal(h.get(11), undefined, 'not sent yet');
  assert.equal(h.get(-1), undefined);
  h.add(0, 'N0 M110 N0');
  assert.equal(h.get(0), 'N0 M110 N0');
  h.clear();
  assert.equal(h.get(0), undefined);
  assert.equal(h.get(10), undefined);
});
