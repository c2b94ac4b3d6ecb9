// Saving recomputes defaults and validation only for the sections a change touched: the result must be what a whole
// recomputation gives (values, key order — the effective hash — and the first problem), for any sequence of changes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { changedEffective, effectiveConfig, firstProblem } from '../../src/config/config-store.ts';
import { deepMerge } from '../../src/core/deep-merge.ts';
import type { Plain } from '../../src/core/plain.ts';

// Settings of several sections, valid and invalid values, a new section, an unknown one and a removal.
const change = fc.oneof(
  fc.record({ server: fc.record({ port: fc.oneof(fc.integer({ min: 1, max: 65535 }), fc.constant(-3), fc.constant('x')) }) }),
  fc.record({ api: fc.record({ key: fc.oneof(fc.string({ minLength: 32, maxLength: 32, unit: fc.constantFrom(...'0123456789ABCDEF') }), fc.constant(null)) }) }),
  fc.record({ serial: fc.record({ timeout: fc.record({ communication: fc.oneof(fc.double({ min: 0.1, max: 100, noNaN: true }), fc.constant('slow')) }) }) }),
  fc.record({ webcam: fc.record({ timelapseEnabled: fc.boolean() }) }),
  fc.record({ temperature: fc.record({ profiles: fc.array(fc.record({ name: fc.string(), extruder: fc.integer({ min: 0, max: 300 }), bed: fc.integer({ min: 0, max: 120 }) }), { maxLength: 2 }) }) }),
  fc.record({ someplugin: fc.record({ enabled: fc.boolean() }) }),
  fc.constant({ drop: 'server' }),
);

test('a change recomputes what a whole recomputation gives: values, order and the first problem', () => {
  fc.assert(fc.property(fc.array(change, { maxLength: 8 }), (changes) => {
    let raw: Plain = {};
    let effective = effectiveConfig(raw);
    for (const c of changes) {
      let nextRaw: Plain;
      if ('drop' in c) {
        nextRaw = structuredClone(raw);
        delete nextRaw[c.drop as string];
      } else {
        nextRaw = deepMerge(raw, c) as Plain;
      }
      const { next, problem } = changedEffective(raw, effective, nextRaw);
      const whole = effectiveConfig(nextRaw);
      const wholeProblem = firstProblem(whole);
      assert.deepEqual(problem, wholeProblem);
      if (problem) continue; // an invalid change is refused: the store keeps the previous state
      assert.equal(JSON.stringify(next), JSON.stringify(whole));
      raw = nextRaw;
      effective = next;
    }
  }), { numRuns: 150 });
});
