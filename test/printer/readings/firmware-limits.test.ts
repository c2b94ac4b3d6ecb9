// The firmware's report of its motion limits: which received lines count, and what is kept for the analyser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FirmwareLimits, limitReportCommand } from '../../../src/printer/readings/firmware-limits.ts';

test('report lines are recognised in Marlin\'s and Prusa\'s forms, and nothing else is', () => {
  assert.equal(limitReportCommand('echo:  M203 X300.00 Y300.00 Z5.00 E25.00'), 'M203 X300.00 Y300.00 Z5.00 E25.00');
  assert.equal(limitReportCommand('echo:  M205 B20000.00 S0.00 T0.00 J0.013'), 'M205 B20000.00 S0.00 T0.00 J0.013');
  assert.equal(limitReportCommand('M201 X1000 Y1000 Z200 E5000'), 'M201 X1000 Y1000 Z200 E5000');
  // M204's T is the travel acceleration, not a tool.
  assert.equal(limitReportCommand('echo:  M204 P1500.00 R1500.00 T3000.00'), 'M204 P1500.00 R1500.00 T3000.00');
  assert.equal(limitReportCommand('echo:  M203 T0 E40.00'), 'M203 T0 E40.00');
  for (const other of [
    'ok', 'ok T:210.0 /210.0', 'echo:; Max feedrates (units/s):', 'echo:  M92 X80.00 Y80.00', 'echo:  M203 T1 E40.00',
    'echo:Unknown command: "M205 J0.02"', 'M2050 X1', 'echo:  M204', 'echo:  M203 X300.00 ; note', 'Error:M203 X1',
  ]) assert.equal(limitReportCommand(other), null, other);
});

test('the newest report of each command is kept, the per-extruder line after its main line', () => {
  const fw = new FirmwareLimits();
  assert.deepEqual(fw.report(), []);
  for (const line of [
    'echo:  M203 T0 E40.00', 'echo:  M203 X300.00 Y300.00 Z5.00 E25.00', 'echo:  M205 B20000.00 S0.00 T0.00 J0.013',
    'echo:  M201 X3000.00 Y3000.00 Z100.00 E10000.00', 'ok', 'echo:  M201 X500.00 Y500.00 Z100.00 E5000.00',
  ]) fw.observe(line);
  assert.deepEqual(fw.report(), [
    'M201 X500.00 Y500.00 Z100.00 E5000.00', 'M203 X300.00 Y300.00 Z5.00 E25.00', 'M203 T0 E40.00', 'M205 B20000.00 S0.00 T0.00 J0.013',
  ]);
});
