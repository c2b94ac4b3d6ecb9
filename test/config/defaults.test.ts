// A loaded config.yaml is checked only in the sections it sets: that must find what checking the whole schema finds,
// which holds only if every section's defaults pass the schema.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { effectiveConfig, firstProblem, firstProblemOfSet } from '../../src/config/config-store.ts';
import { deepMerge } from '../../src/core/deep-merge.ts';
import type { Plain } from '../../src/core/plain.ts';

test('the defaults of every section pass the schema', () => {
  assert.equal(firstProblem(effectiveConfig({})), undefined);
});

// Sections set to valid and invalid values (several may be wrong at once), a whole section of the wrong type, and a
// key no section has.
const part = fc.oneof(
  fc.record({ server: fc.record({ port: fc.oneof(fc.integer({ min: 1, max: 65535 }), fc.constant(-3), fc.constant('x')) }) }),
  fc.record({ api: fc.oneof(fc.record({ key: fc.oneof(fc.constant('0123456789ABCDEF0123456789ABCDEF'), fc.constant(null), fc.constant(7)) }), fc.constant('off')) }),
  fc.record({ serial: fc.record({ timeout: fc.record({ communication: fc.oneof(fc.double({ min: 0.1, max: 100, noNaN: true }), fc.constant('slow')) }) }) }),
  fc.record({ webcam: fc.record({ timelapseEnabled: fc.oneof(fc.boolean(), fc.constant('yes')) }) }),
  fc.record({ recovery: fc.record({ reconnectDelay: fc.oneof(fc.constant(1), fc.constant(0)) }) }),
  fc.record({ temperature: fc.record({ profiles: fc.array(fc.record({ name: fc.string(), extruder: fc.oneof(fc.integer({ min: 0, max: 300 }), fc.constant('hot')), bed: fc.integer({ min: 0, max: 120 }) }), { maxLength: 2 }) }) }),
  fc.record({ someplugin: fc.record({ enabled: fc.boolean() }) }),
);

test('checking only the sections a document sets finds the first problem a check of the whole schema finds', () => {
  fc.assert(fc.property(fc.array(part, { maxLength: 6 }), (parts) => {
    const raw = parts.reduce<Plain>((doc, p) => deepMerge(doc, p) as Plain, {});
    const effective = effectiveConfig(raw);
    assert.deepEqual(firstProblemOfSet(raw, effective), firstProblem(effective));
  }), { numRuns: 300 });
});
