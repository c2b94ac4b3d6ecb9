// The layer index from the slicers' layer comments and, without any, from Z moves; fan, M600 and first-layer targets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildLayerIndex, lastAtOrBefore } from '../../src/layer-progress/layer-index.ts';
import { renderM117, shortDuration, throttled } from '../../src/layer-progress/printer-display.ts';

async function indexOf(text: string) {
  const dir = await mkdtemp(join(tmpdir(), 'layers-'));
  try {
    await writeFile(join(dir, 'f.gcode'), text);
    return await buildLayerIndex(join(dir, 'f.gcode'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('Cura ;LAYER:<n> (0-based, numbers kept), CRLF, M106 as percent, M107 off, M600, first-layer temperatures', async () => {
  const idx = await indexOf(['M140 S70', 'M104 T0 S0', 'M109 S210', ';LAYER:0', 'G0 F3000 X1 Z0.3', 'M106 S127', ';LAYER:1', 'M104 S200', 'G1 Z0.5 F1200 E1',
    'M600', 'M107', ';LAYER:2', 'G1 Z0.7'].join('\r\n'));
  assert.equal(idx.source, 'numbered');
  assert.deepEqual(idx.numbers, [0, 1, 2]);
  assert.deepEqual(idx.heights, [0.3, 0.5, 0.7]);
  assert.deepEqual(idx.firstLayerTemps, { bed: 70, tool0: 210 });
  assert.deepEqual(idx.fan.map(([, p]) => p), [50, 0]);
  assert.equal(idx.m600.length, 1);
  const text = ['M140 S70', 'M104 T0 S0', 'M109 S210', ';LAYER:0'].join('\r\n');
  assert.equal(idx.starts[0], text.length - ';LAYER:0'.length, 'offsets in bytes of the file');
  assert.equal(lastAtOrBefore(idx.starts, idx.starts[1] + 3), 1);
  assert.equal(lastAtOrBefore(idx.starts, 0), -1);
});

test('PrusaSlicer ;LAYER_CHANGE counts 1, 2, 3; without comments each new highest Z is a layer (a z-hop is not)', async () => {
  const prusa = await indexOf(';LAYER_CHANGE\n;Z:0.2\nG1 Z.2\n;LAYER_CHANGE\nG1 Z.4\n;LAYER_CHANGE\nG1 Z.6\n');
  assert.deepEqual([prusa.source, prusa.numbers], ['counted', [1, 2, 3]]);
  const bare = await indexOf('G1 Z0.2\nG1 X1 E1\nG1 Z0.6\nG1 Z0.4\nG1 X2 E1\nG1 Z0.8\nG1 Z0.6\nG1 X3 E1\n');
  assert.equal(bare.source, 'z');
  assert.deepEqual(bare.heights, [0.2, 0.6, 0.8]);
  const relative = await indexOf('G91\nG1 Z0.2\nG1 Z0.2\nG90\n');
  assert.deepEqual(relative.heights, [0.2, 0.4]);
});

test('M117 template: plain ASCII, durations as 1h05m, throttled by interval and change', () => {
  const v = { layer: '12', layers: '140', progress: 34.7, height: '2.4', totalHeight: '28.0', left: 3900, file: 'a.gcode' };
  assert.equal(renderM117('L {layer}/{layers} - {progress}% - {left} left', v), 'L 12/140 - 34% - 1h05m left');
  assert.equal(renderM117('L {layer}/{layers} · {progress} % ; é', v), 'L 12/140 - 34 % , ?');
  assert.equal(shortDuration(59), '59s');
  assert.equal(shortDuration(null), '-');
  const t = { last: '', at: -Infinity };
  assert.equal(throttled(t, 'M117 a', 0, 30), 'M117 a');
  assert.equal(throttled(t, 'M117 b', 10_000, 30), null, 'within the interval');
  assert.equal(throttled(t, 'M117 a', 40_000, 30), null, 'unchanged');
  assert.equal(throttled(t, 'M117 b', 40_000, 30), 'M117 b');
});
