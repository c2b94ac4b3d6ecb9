// The listener list behind the services' onX(fn) methods: order, removal, and what a throwing listener does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Listeners } from '../../src/core/listeners.ts';

test('listeners run in the order added and stop after their removal', () => {
  const list = new Listeners<[number]>();
  const seen: string[] = [];
  const offA = list.add((n) => seen.push(`a${n}`));
  list.add((n) => seen.push(`b${n}`));
  list.emit(1);
  offA();
  list.emit(2);
  assert.deepEqual(seen, ['a1', 'b1', 'b2']);
});

test('with an error handler a throwing listener is reported and the rest still run; without one the throw propagates', () => {
  const errors: unknown[] = [];
  const guarded = new Listeners<[]>((err) => errors.push(err));
  let after = 0;
  guarded.add(() => { throw new Error('boom'); });
  guarded.add(() => { after++; });
  guarded.emit();
  assert.equal(after, 1);
  assert.match(String(errors[0]), /boom/);

  const plain = new Listeners<[]>();
  plain.add(() => { throw new Error('loud'); });
  assert.throws(() => plain.emit(), /loud/);
});
