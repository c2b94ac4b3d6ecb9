// Stored analyses that no longer fit are redone: from an older analyser or another program (at start-up), or of content since replaced on disk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ANALYSER_VERSION } from '../../../src/files/analysis/index.ts';
import { startTestServer } from '../../helpers/server.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

test('start-up re-analyses files whose stored analysis predates the current analyser, and only those', async (t) => {
  const baseDir = await tempDir(t, 'gantry-stale-');
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

test('a file replaced on disk behind the server\'s back loses its old analysis and is analysed again', async (t) => {
  const baseDir = await tempDir(t, 'gantry-replaced-');
  const uploads = join(baseDir, 'uploads');
  await mkdir(uploads, { recursive: true });
  const file = join(uploads, 'part.gcode');
  await writeFile(file, 'M83\nG1 X10 Y0 Z0.2 F1200\nG1 X20 E3 F1200\n');
  const s = await startTestServer(t, { baseDir });
  const length = async (): Promise<number | undefined> => {
    const body = await (await s.api('/api/files/local/part.gcode')).json() as { gcodeAnalysis?: { filament?: { tool0?: { length: number } } } };
    return body.gcodeAnalysis?.filament?.tool0?.length;
  };
  const until = async (want: number): Promise<void> => {
    for (let i = 0; i < 500 && (await length()) !== want; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await length(), want);
  };
  await until(3);

  // Copied over by hand (scp, a network share): new content, new size and time.
  await writeFile(file, 'M83\nG1 X10 Y0 Z0.2 F1200\nG1 X20 E7 F1200\nG1 X30 F1200\n');
  await utimes(file, new Date(), new Date(Date.now() + 5000));
  const first = await length();
  assert.notEqual(first, 3, 'the old content\'s analysis is still reported');
  await until(7);
  // The listing agrees.
  const list = await (await s.api('/api/files/local?recursive=true')).json() as { files: Array<{ name: string; gcodeAnalysis?: { filament?: { tool0?: { length: number } } } }> };
  assert.equal(list.files.find((f) => f.name === 'part.gcode')?.gcodeAnalysis?.filament?.tool0?.length, 7);
});

test('a file copied into the uploads folder while the server runs is analysed once it is listed', async (t) => {
  const s = await startTestServer(t);
  const listed = async (): Promise<number | undefined> => {
    const list = await (await s.api('/api/files/local?recursive=true')).json() as { files: Array<{ name: string; gcodeAnalysis?: { filament?: { tool0?: { length: number } } } }> };
    return list.files.find((f) => f.name === 'dropped.gcode')?.gcodeAnalysis?.filament?.tool0?.length;
  };
  assert.equal(await listed(), undefined);
  await writeFile(join(s.baseDir, 'uploads', 'dropped.gcode'), 'M83\nG1 X10 Y0 Z0.2 F1200\nG1 X20 E4 F1200\n');
  for (let i = 0; i < 500 && (await listed()) !== 4; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(await listed(), 4);
});
