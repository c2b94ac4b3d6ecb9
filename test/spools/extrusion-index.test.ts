// The file's extrusion by position (src/spools/extrusion-index.ts) and the Spoolman host words (spool-words.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildExtrusionIndex, usedAt, ExtrusionState } from '../../src/spools/extrusion-index.ts';
import { parseSpoolWord } from '../../src/spools/spool-words.ts';

test('only E beyond the highest reached counts; G92 moves coordinates, not filament; M83 relative; per tool', () => {
  const st = new ExtrusionState();
  for (const l of ['G90', 'G1 X1 E5', 'G1 E3', 'G1 E5', 'G1 E6 ; comment E99', 'G92 E0', 'G1 E2', 'M83', 'G1 E1', 'G1 E-1', 'G1 E1', 'T1', 'G1 E4', 'N12 G1 E1*77', 'G1 X5 F3000']) st.line(l);
  assert.deepEqual(st.used, [6 + 2 + 1, 5]);
});

test('the look-up never reports more than the lines before the position extruded; the end gives the whole file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-eidx-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const lines = ['M83'];
  for (let i = 0; i < 5000; i++) lines.push(`G1 X${i % 100} E0.25`);
  const text = lines.join('\n') + '\n';
  const path = join(dir, 'a.gcode');
  await writeFile(path, text);
  const idx = await buildExtrusionIndex(path);
  assert.equal(usedAt(idx, text.length)[0], 1250);
  assert.equal(usedAt(idx, 0)[0], 0);
  // At every line end: at most what was sent, and at most a sample's worth (512 bytes of lines) less.
  let offset = 0, sent = 0;
  for (const l of lines) {
    offset += l.length + 1;
    if (l.startsWith('G1')) sent += 0.25;
    const got = usedAt(idx, offset)[0];
    assert.ok(got <= sent + 1e-9 && got >= sent - 0.25 * 40, `${got} at ${offset}, sent ${sent}`);
  }
});

test('SET_ACTIVE_SPOOL / CLEAR_ACTIVE_SPOOL as Moonraker\'s macros write them', () => {
  assert.deepEqual(parseSpoolWord('SET_ACTIVE_SPOOL ID=3'), { kind: 'set', tool: 0, id: 3 });
  assert.deepEqual(parseSpoolWord('set_active_spool id=7 tool=1'), { kind: 'set', tool: 1, id: 7 });
  assert.deepEqual(parseSpoolWord('CLEAR_ACTIVE_SPOOL'), { kind: 'clear', tool: 0 });
  assert.equal(parseSpoolWord('SET_ACTIVE_SPOOL').kind, 'bad');
  assert.equal(parseSpoolWord('SET_ACTIVE_SPOOL ID=abc').kind, 'bad');
  assert.equal(parseSpoolWord('SET_ACTIVE_SPOOL ID=3 TOOL=99').kind, 'bad');
});
