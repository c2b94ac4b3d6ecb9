// Reading meshes out of firmware replies (src/bed-mesh/mesh-capture.ts): samples written from each firmware's layout
// (docs/reference/plugins.md §4.3) and every layout the virtual printer prints, with temperature reports in between.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MeshCapture, type CapturedMesh } from '../../src/bed-mesh/mesh-capture.ts';
import { meshReport, probe, DEFAULT_BED_SHAPE, type MeshFormat } from '../../src/virtual-printer/bed-shape.ts';

function read(lines: string[]): CapturedMesh | null {
  const c = new MeshCapture();
  let out: CapturedMesh | null = null;
  for (const l of lines) out = c.feed(l) ?? out;
  return out;
}

const FRONT_FIRST = [[0.12, 0.045, -0.01], [0.08, 0, -0.055], [0.03, -0.04, -0.09]];

test('Marlin bilinear (G29 / M420 V), with a temperature report and the ok after it', () => {
  const m = read(['Bilinear Leveling Grid:', '      0      1      2', ' 0 +0.120 +0.045 -0.010', ' T:60.1 /60.0 B:55.0 /55.0 @:0 B@:0',
    ' 1 +0.080 +0.000 -0.055', ' 2 +0.030 -0.040 -0.090', 'ok']);
  assert.deepEqual(m, { format: 'marlin-bilinear', z: FRONT_FIRST, extents: null });
});

test('Marlin UBL G29 T: back row first, the probe mark, the corners in mm', () => {
  const m = read(['Bed Topography Report:', '', '(0,2)                    (2,2)', '(10,210)               (210,210)', '  0.052    0.018   -0.020', '',
    '  0.031  [ 0.000]  -0.041', '', '  0.010   -0.022   -0.063', '(10,10)                (210,10)', '(0,0)                    (2,0)', 'ok']);
  assert.deepEqual(m?.z, [[0.01, -0.022, -0.063], [0.031, 0, -0.041], [0.052, 0.018, -0.02]]);
  assert.deepEqual(m?.extents, { xMin: 10, xMax: 210, yMin: 10, yMax: 210 });
});

test('Prusa G81 and Klipper BED_MESH_OUTPUT end at their row count; Klipper\'s rows are back first', () => {
  const prusa = read(['Num X,Y: 3,3', 'Z search height: 5', 'Measured points:', '  0.12000  0.04500 -0.01000', '  0.08000  0.00000 -0.05500', '  0.03000 -0.04000 -0.09000']);
  assert.deepEqual(prusa?.z, FRONT_FIRST);
  const klipper = read(['// Mesh Leveling Probed Z positions:', '// 0.030000 -0.040000 -0.090000', 'Mesh X,Y: 3,3', 'Search Height: 5',
    'Mesh Offsets: X=0.0000, Y=0.0000', 'Mesh Average: 0.01', 'Mesh Range: min=-0.0900 max=0.1200', 'Interpolation Algorithm: lagrange', 'Measured points:',
    '  0.030000  -0.040000  -0.090000', '  0.080000  0.000000  -0.055000', '  0.120000  0.045000  -0.010000']);
  assert.deepEqual(klipper?.z, FRONT_FIRST);
});

test('a subdivided bilinear grid replaces the probed one; ragged or endless rows are no mesh', () => {
  const m = read(['Bilinear Leveling Grid:', ' 0 +0.100 +0.200', ' 1 +0.300 +0.400', 'Subdivided with CATMULL ROM Leveling Grid:', ' 0 +1.000 +2.000', ' 1 +3.000 +4.000', 'ok']);
  assert.deepEqual(m?.z, [[1, 2], [3, 4]]);
  assert.equal(read(['Bilinear Leveling Grid:', ' 0 +0.100 +0.200', ' 1 +0.300', 'ok']), null);
  assert.equal(read(['Bilinear Leveling Grid:', ...Array.from({ length: 100 }, () => ' 0.1 0.2'), 'ok']), null);
  assert.equal(read(['ok', ' 0.100 0.200', 'ok']), null, 'numbers outside a report are not a mesh');
});

test('every layout the virtual printer prints reads back as the probed grid', () => {
  const mesh = probe(DEFAULT_BED_SHAPE);
  const names: Record<MeshFormat, string> = { bilinear: 'marlin-bilinear', ubl: 'marlin-ubl', mbl: 'marlin-mbl', prusa: 'prusa', klipper: 'klipper' };
  for (const format of Object.keys(names) as MeshFormat[]) {
    const m = read([...meshReport(format, mesh), 'ok']);
    assert.equal(m?.format, names[format], format);
    assert.deepEqual(m?.z, mesh.z, format);
  }
});
