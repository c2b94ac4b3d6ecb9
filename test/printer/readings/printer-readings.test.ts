// PrinterReadings: a target asked for reads back at once and is not taken back by reports made before its command
// was written; once written, the firmware's reports rule again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PrinterReadings } from '../../../src/printer/readings/printer-readings.ts';
import { builtinDefaultProfile } from '../../../src/printer/profiles/printer-profile-shape.ts';
import type { CanonicalTemperatures } from '../../../src/protocol/replies/temperature.ts';

const report = (tool: number, bed: number): CanonicalTemperatures => ({
  tools: new Map([[0, { actual: 21, target: tool }]]), bed: { actual: 20, target: bed }, custom: new Map(),
});

test('an asked target holds against earlier reports until its command is written', () => {
  const r = new PrinterReadings(30);
  const profile = builtinDefaultProfile();
  r.applyReport(report(0, 0), profile, 0);
  r.askTarget('tool0', 200);
  assert.equal(r.snapshot(profile).tool0.target, 200, 'at once');
  r.applyReport(report(0, 0), profile, 1000);
  assert.equal(r.snapshot(profile).tool0.target, 200, 'a report made before the command was written');
  assert.equal(r.snapshot(profile).bed.target, 0, 'other heaters follow the reports');
  r.commandSent('M104 T0 S200', 'M104', 0);
  r.applyReport(report(0, 0), profile, 2000);
  assert.equal(r.snapshot(profile).tool0.target, 0, 'after the command was written the firmware says');
});
