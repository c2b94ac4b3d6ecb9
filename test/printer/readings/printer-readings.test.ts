// What the host keeps of temperature reports: a noisy report line cannot add sensors without end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_HEATERS, PrinterReadings } from '../../../src/printer/readings/printer-readings.ts';
import { canonicalTemperatures, parseTemperatureLine } from '../../../src/protocol/replies/temperature.ts';
import type { LinkProfile } from '../../../src/printer/types.ts';

const PROFILE: LinkProfile = {
  id: 'p', name: 'p', heatedBed: true, heatedChamber: false, extruder: { count: 1, sharedNozzle: false },
  axes: { x: { speed: 1 }, y: { speed: 1 }, z: { speed: 1 }, e: { speed: 1 } },
};

test('report lines naming ever new sensors keep at most MAX_HEATERS; the known ones still update', () => {
  const r = new PrinterReadings(30);
  const report = (line: string) => r.applyReport(canonicalTemperatures(parseTemperatureLine(line), 0), PROFILE, Date.now());
  report('ok T:20.0 /0.0 B:21.0 /0.0');
  for (let i = 0; i < 500; i++) report(`T:20.0 /0.0 B:21.0 /0.0 T${i + 1}:5 Noise${i}:1 Junk${i}:2`);
  const last = report('ok T:200.0 /210.0 B:60.0 /60.0');
  const keys = Object.keys(last).filter((k) => k !== 'time');
  assert.equal(keys.length, MAX_HEATERS);
  assert.deepEqual(last.tool0, { actual: 200, target: 210 });
  assert.deepEqual(last.bed, { actual: 60, target: 60 });
});
