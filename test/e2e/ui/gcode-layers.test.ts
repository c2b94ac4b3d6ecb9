// Unit tests of the preview's G-code layer parser (web/src/lib/gcode-layers.ts), on small programs and a real file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { parseGcode } from '../../../web/src/lib/gcode-layers.ts';
import { SMALL_GCODE } from '../../helpers/shared-data.ts';
import { needs } from '../../helpers/tools.ts';

test('groups extruding moves by height and ignores travel-only heights (z-hop)', () => {
  const p = parseGcode([
    'G90', 'M82', 'G92 E0',
    'G1 Z0.2 F600', 'G1 X10 Y0 E1', 'G1 X10 Y10 E2 ; comment',
    'G1 Z0.6', 'G0 X20 Y20', 'G1 Z0.2', // hop: travel only at 0.6
    'G1 X20 Y30 E3',
    'G1 Z0.4', 'G1 X0 Y0 E4',
  ].join('\n'));
  assert.deepEqual(p.layers.map((l) => l.z), [0.2, 0.4]);
  assert.deepEqual([...p.layers[0].extruding], [1, 1, 1]);
  assert.deepEqual([...p.layers[1].segments], [20, 30, 0, 0]);
  assert.deepEqual(p.bounds, { minX: 0, maxX: 20, minY: 0, maxY: 30 });
});

test('relative extrusion, relative moves, G92 and retractions', () => {
  const p = parseGcode([
    'M83', 'G1 Z0.3', 'G1 X5 Y5 E0.5', 'G1 E-1', 'G1 X6 Y5', 'G1 E1', // retract/unretract are not moves
    'G91', 'G1 X1 E0.2', 'G90', 'M83', 'G92 X0 Y0', 'G1 X1 Y0 E0.1', // G90 makes E absolute too, hence M83 again
    'G1 X2 Y0 E0 ; no extrusion is travel',
  ].join('\n'));
  assert.equal(p.layers.length, 1);
  const l = p.layers[0];
  assert.deepEqual([...l.extruding], [1, 0, 1, 1, 0]);
  assert.deepEqual([...l.segments.slice(8, 12)], [6, 5, 7, 5]);
  assert.deepEqual([...l.segments.slice(12, 16)], [0, 0, 1, 0]);
});

test('CR and CR LF line breaks give what LF ones do', () => {
  const program = ['G90', 'M82', 'G92 E0', 'G1 Z0.2 F600', 'G1 X10 Y0 E1', 'G1 X10 Y10 E2 ; comment', 'G1 Z0.4', 'G1 X0 Y0 E4', ''];
  const lf = parseGcode(program.join('\n'));
  assert.equal(lf.layers.length, 2);
  for (const br of ['\r', '\r\n']) assert.deepEqual(parseGcode(program.join(br)), lf, JSON.stringify(br));
});

test('a file without extrusion has no layers', () => {
  const p = parseGcode('G28\nG1 X10 Y10 Z5\nM104 S0\n');
  assert.equal(p.layers.length, 0);
});

test('the PrusaSlicer sample: purge line at 0.2 mm and one object layer at 0.3 mm', { skip: needs('shared-data') }, async () => {
  const text = await readFile(SMALL_GCODE, 'utf8');
  const p = parseGcode(text);
  assert.deepEqual(p.layers.map((l) => l.z), [0.2, 0.3]);
  assert.ok(p.layers[1].extruding.filter((e) => e === 1).length > 500);
  assert.equal(p.bounds.minY, -2);
});
