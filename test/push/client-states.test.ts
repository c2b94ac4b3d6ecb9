// One push client's queue of status deltas: whatever its throttle, a state change is due at once and every state keeps
// a `current` of its own, also when a slow client's queue is folded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PushClient, DEFAULT_LIMITS } from '../../src/push/push-client.ts';
import { stateKey, type StatusDelta } from '../../src/push/status-monitor.ts';
import type { PushConnection } from '../../src/push/transports.ts';
import { fullAdminIdentity } from '../../src/access/identity.ts';

function delta(text: string, log: string): StatusDelta {
  const state = { text, flags: { finishing: text === 'Finishing', operational: true }, error: '' };
  return {
    base: { state, job: {}, progress: {}, currentZ: null, offsets: {}, resends: { count: 0, transmitted: 0, ratio: 0 }, markings: [], busyFiles: [] },
    stateKey: stateKey(state), temps: [], logs: [log], messages: [], serverTime: 0,
  };
}

function client(): PushClient {
  const conn = { bufferedBytes: () => 0 } as unknown as PushConnection;
  const c = new PushClient(conn, fullAdminIdentity(), DEFAULT_LIMITS, () => assert.fail('not dropped'));
  c.throttle = 1000;
  c.lastStateKey = delta('Printing', '').stateKey;
  return c;
}

test('throttled: deltas of the same state wait; a new state is due at once, one group per state, in order', () => {
  const c = client();
  c.addDelta(delta('Printing', 'a'));
  assert.ok(c.takeDue(1000, 500) !== undefined, 'the first current is due (no current sent yet)');
  c.addDelta(delta('Printing', 'b'));
  assert.equal(c.takeDue(2000, 500), undefined, 'throttle 1000 × 500 ms');
  c.addDelta(delta('Finishing', 'c'));
  c.addDelta(delta('Operational', 'd'));
  c.addDelta(delta('Operational', 'e'));
  const due = c.takeDue(2001, 500);
  assert.deepEqual(due?.map((g) => g.map((d) => `${d.base.state.text}:${d.logs[0]}`)), [['Printing:b'], ['Finishing:c'], ['Operational:d', 'Operational:e']]);
  assert.equal(c.takeDue(2002, 500), undefined);
  c.addDelta(delta('Operational', 'f'));
  assert.equal(c.takeDue(2003, 500), undefined, 'the same state as the last current sent: the throttle applies again');
});

test('a long queue is folded per state: the states in between survive', () => {
  const c = client();
  c.addDelta(delta('Printing', 'first'));
  c.takeDue(0, 500);
  for (let i = 0; i < 10; i++) c.addDelta(delta('Printing', `p${i}`));
  c.addDelta(delta('Finishing', 'f'));
  for (let i = 0; i < 10; i++) c.addDelta(delta('Operational', `o${i}`));
  const due = c.takeDue(1, 500)!;
  assert.deepEqual(due.map((g) => g[0].base.state.text), ['Printing', 'Finishing', 'Operational']);
  assert.deepEqual(due.flatMap((g) => g.flatMap((d) => d.logs)), [...Array.from({ length: 10 }, (_, i) => `p${i}`), 'f', ...Array.from({ length: 10 }, (_, i) => `o${i}`)]);
});
