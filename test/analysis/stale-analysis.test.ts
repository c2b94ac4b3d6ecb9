// Stored analyses from an older analyser (or another program) are redone at start-up; current ones are kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ANALYSER_VERSION } from '../../src/files/analysis/index.ts';
import { startTestServer } from '../helpers/server.ts';

test('start-up re-analyses files whose stored analysis predates the current analyser, and only those', async (t) => {
  const baseDir = await mkdtemp(join(tmpdir(), 'gantry-stale-'));
  t.after(() => rm(baseDir, { recursive: true, force: true }));
  const uploads = join(baseDir, 'uploads');
  await mkdir(uploads, { recursive: true });
  const gcode = 'M83\nG1 X10 Y0 Z0.2 F1200\nG1 X20 E3 F1200\n';
  const stored = (length: number, version?: number): Record<string, unknown> => ({
    filament: { tool0: { length, volume: 1 } },
    ...(version === undefined ? {} : { gantry: { analyserVersion: version } }),
  });
  for (const name of ['old.gcode', 'foreign.gcode', 'current.gcode']) await writeFile(join(uploads, name), gcode);
  await writeFile(join(uploads, '.metadata.json'), JSON.stringify({
    'old.gcode': { analysis: stored(999, ANALYSER_VERSION - 1) },
    'foreign.gcode': { analysis: stored(888) }, // e.g. carried over from OctoPrint: no Gantry extras
    'current.gcode': { analysis: stored(777, ANALYSER_VERSION) },
  }));
  const s = await startTestServer(t, { baseDir });
  const length = async (name: string): Promise<number | undefined> => {
    const body = await (await s.api(`/api/files/local/${name}`)).json() as { gcodeAnalysis?: { filament?: { tool0?: { length: number } } } };
    return body.gcodeAnalysis?.filament?.tool0?.length;
  };
  for (let i = 0; i < 500 && ((await length('old.gcode')) !== 3 || (await length('foreign.gcode')) !== 3); i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(await length('old.gcode'), 3);
  assert.equal(await length('foreign.gcode'), 3);
  assert.equal(await length('current.gcode'), 777, 'an analysis by the current analyser is kept as stored');
});
