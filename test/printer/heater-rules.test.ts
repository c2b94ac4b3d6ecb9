// Heater and extruder command rules (src/printer/heater-rules.ts): tool keys, ranges, and the texts clients show.
import test from 'node:test';
import assert from 'node:assert/strict';
import { extrusion, flowPercent, heaterOffset, heaterTarget, toolIndex, toolOffsets, toolTargets } from '../../src/printer/heater-rules.ts';

test('tool keys must name a tool the profile has; targets and offsets are checked whole before any is applied', () => {
  assert.equal(toolIndex('tool1', 2), 1);
  assert.throws(() => toolIndex('tool2', 2), /Invalid tool: "tool2"/);
  assert.throws(() => toolIndex('bed', 2), /Invalid tool: "bed"/);
  assert.deepEqual(toolTargets({ tool0: 200, tool1: 0 }, 2), [['tool0', 200], ['tool1', 0]]);
  assert.throws(() => toolTargets({ tool0: 200, tool1: 1501 }, 2), /Not a number or out of range for tool1: 1501/);
  assert.throws(() => toolTargets([200], 2), /targets is invalid/);
  assert.deepEqual(toolOffsets({ tool0: -50 }, 1), { tool0: -50 });
  assert.throws(() => toolOffsets({ tool0: 51 }, 1), /Offset not in range \[-50, 50\] for tool0: 51/);
});

test('bed/chamber values, extrusion and flow rate', () => {
  assert.equal(heaterTarget(60), 60);
  assert.throws(() => heaterTarget('60'), /target is invalid/);
  assert.equal(heaterOffset(-5), -5);
  assert.throws(() => heaterOffset(Number.NaN), /offset is invalid/);
  assert.deepEqual(extrusion(5, undefined), { amount: 5 });
  assert.deepEqual(extrusion(-5, 300), { amount: -5, speed: 300 });
  assert.throws(() => extrusion(5, 0), /speed is invalid: 0/);
  assert.throws(() => extrusion('5', undefined), /Not a number for extrusion amount: "5"/);
  assert.equal(flowPercent(1.1), 110);
  assert.throws(() => flowPercent(2), /factor is invalid: 2/);
});

test('an error quotes the refused value as sent: 1e400 (Infinity once parsed) by name, not as null, and a long one cut', () => {
  assert.throws(() => toolTargets(JSON.parse('{"tool0": 1e400}'), 1), { message: 'Not a number or out of range for tool0: Infinity' });
  assert.throws(() => extrusion(JSON.parse('-1e400'), undefined), { message: 'Not a number for extrusion amount: -Infinity' });
  const long = 'x'.repeat(100_000);
  const err = (() => { try { toolTargets({ tool0: long }, 1); } catch (e) { return e as Error; } })();
  assert.equal(err?.message, `Not a number or out of range for tool0: "${'x'.repeat(78)}…`);
});
