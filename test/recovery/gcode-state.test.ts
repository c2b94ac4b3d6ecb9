// The file state at a resume position: layers, Z, E (absolute and relative, G92), fan, temperatures, line/layer offsets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initialState, offsetOfLayer, offsetOfLine, scanTo } from '../../src/recovery/gcode-state.ts';

const GCODE = [
  'M140 S55', 'M104 S210', 'G28', 'G90', 'M82', 'G92 E0', // 1-6
  'G1 Z0.2 F600', 'G1 X10 Y10 E1.5 F1200', 'M106 S100', // 7-9: layer 0
  'G1 Z0.6 F600', 'G1 Z0.4', 'G1 X20 E3', // 10-12: a lift and back down, then layer 1 at 0.4
  'M83', 'G92 E0', 'G1 Z0.6', 'G1 X30 E0.5 ; relative', 'G1 X40 E0.5', 'M107', // 13-18: layer 2
].join('\n') + '\n';

test('scanning a file gives Z, layer, E, fan and targets at a position, and finds lines and layers', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-gstate-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'a.gcode');
  await writeFile(file, GCODE);
  const line13 = await offsetOfLine(file, 13);
  assert.equal(line13, Buffer.byteLength(GCODE.split('\n').slice(0, 12).join('\n')) + 1);
  const s = await scanTo(file, initialState(), line13!);
  assert.equal(s.line, 12);
  assert.equal(s.layer, 1, 'a Z lift without extrusion is no layer');
  assert.equal(s.z, 0.4);
  assert.equal(s.e, 3);
  assert.equal(s.relativeE, false);
  assert.equal(s.fan, 100);
  assert.deepEqual([s.tools.tool0, s.bed], [210, 55]);
  // Incremental: continuing from there equals scanning from the start.
  const size = Buffer.byteLength(GCODE);
  const end = await scanTo(file, s, size);
  const fresh = await scanTo(file, initialState(), size);
  assert.deepEqual(end, fresh);
  assert.equal(end.layer, 2);
  assert.equal(end.e, 1);
  assert.equal(end.relativeE, true);
  assert.equal(end.fan, 0);
  // Layer 1 begins at its Z move (line 11), layer 2 at line 15; layer 3 does not exist; nor does line 99.
  assert.equal(await offsetOfLayer(file, 1, size), await offsetOfLine(file, 11));
  assert.equal(await offsetOfLayer(file, 2, size), await offsetOfLine(file, 15));
  assert.equal(await offsetOfLayer(file, 3, size), null);
  assert.equal(await offsetOfLine(file, 99), null);
});
