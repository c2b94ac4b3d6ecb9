// Unit tests: the depth and size bounds for stored JSON values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertBoundedJson, jsonBoundsViolation } from './bounded-json.ts';
import { DomainError } from './errors.ts';

const nested = (n: number): unknown => JSON.parse('['.repeat(n) + ']'.repeat(n));

test('depth is bounded without recursion, also for 100,000 levels', () => {
  assert.equal(jsonBoundsViolation(nested(32)), undefined);
  assert.match(jsonBoundsViolation(nested(33)) ?? '', /deeper than 32/);
  assert.match(jsonBoundsViolation(nested(100_000)) ?? '', /deeper/);
  assert.equal(jsonBoundsViolation({ a: { b: { c: 1 } } }, { maxDepth: 3 }), undefined);
  assert.match(jsonBoundsViolation({ a: { b: { c: {} } } }, { maxDepth: 3 }) ?? '', /deeper than 3/);
  assert.equal(jsonBoundsViolation('scalar', { maxDepth: 0 }), undefined);
});

test('size counts like JSON and stops at the bound', () => {
  for (const v of [{}, [], { a: 'é', b: [1, 2.5, null, true, 'x'], c: { d: '' } }, 'plain', 42]) {
    assert.equal(jsonBoundsViolation(v, { maxBytes: Buffer.byteLength(JSON.stringify(v)) }), undefined, JSON.stringify(v));
    assert.ok(jsonBoundsViolation(v, { maxBytes: Buffer.byteLength(JSON.stringify(v)) - 1 }), JSON.stringify(v));
  }
  assert.match(jsonBoundsViolation({ big: 'x'.repeat(300_000) }) ?? '', /larger than 262144 bytes/);
});

test('cycles are refused as too deep; assertBoundedJson throws a DomainError naming the value', () => {
  const loop: Record<string, unknown> = {};
  loop.self = loop;
  assert.ok(jsonBoundsViolation(loop));
  assert.throws(() => assertBoundedJson(nested(40), {}, 'User settings'),
    (e: unknown) => e instanceof DomainError && e.code === 'INVALID_REQUEST' && /^User settings is nested deeper/.test(e.message));
});
