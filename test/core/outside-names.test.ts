// Names that come from outside (printer profile ids, ini keys, settings keys) and are also JavaScript's object
// vocabulary stay ordinary own keys in the objects built from them, and never reach Object.prototype.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { printSummary } from '../../src/octoprint/file-entry.ts';
import { parseIni, toIni } from '../../src/slicing/prusa-slicer.ts';
import { deepMerge } from '../../src/core/deep-merge.ts';

test('print statistics per printer profile keep ids like __proto__ and constructor', () => {
  const history = [
    { timestamp: 1, success: true, printTime: 100, printerProfile: '__proto__' },
    { timestamp: 2, success: true, printTime: 300, printerProfile: '__proto__' },
    { timestamp: 3, success: true, printTime: 50, printerProfile: 'constructor' },
    { timestamp: 4, success: false, printerProfile: 'constructor' },
  ];
  const { prints, statistics } = printSummary(history);
  assert.deepEqual(prints, { success: 3, failure: 1, last: { success: false, date: 4 } });
  assert.deepEqual(Object.entries(statistics!.averagePrintTime), [['__proto__', 200], ['constructor', 50]]);
  assert.deepEqual(Object.entries(statistics!.lastPrintTime), [['__proto__', 300], ['constructor', 50]]);
  assert.equal(Object.getPrototypeOf(statistics!.averagePrintTime), Object.prototype);
  assert.equal(JSON.parse(JSON.stringify(statistics)).averagePrintTime.__proto__, 200);
  const probe = {} as Record<string, unknown>;
  assert.equal(probe.total, undefined, 'Object.prototype untouched');
  assert.equal(probe.n, undefined, 'Object.prototype untouched');
});

test('a slicer profile keeps every key it was given, __proto__ and constructor included', () => {
  const data = parseIni('layer_height = 0.2\n__proto__ = 1\nconstructor = 2\n');
  assert.deepEqual(Object.keys(data), ['layer_height', '__proto__', 'constructor']);
  assert.equal(toIni(data), 'layer_height = 0.2\n__proto__ = 1\nconstructor = 2\n');
});

test('deepMerge stores __proto__ as a key and merges into it', () => {
  const base = JSON.parse('{"plugins": {"__proto__": {"a": 1}}}');
  const merged = deepMerge(base, JSON.parse('{"plugins": {"__proto__": {"b": 2}}}')) as { plugins: Record<string, unknown> };
  assert.deepEqual(Object.entries(merged.plugins), [['__proto__', { a: 1, b: 2 }]]);
  assert.equal(Object.getPrototypeOf(merged.plugins), Object.prototype);
});
