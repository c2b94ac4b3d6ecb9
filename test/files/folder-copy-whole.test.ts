// A folder copied through the API appears whole: no look at it under its name, and so no listing, finds its files half-copied.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync, watch } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { waitFor } from '../helpers/wait.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

test('a folder copy is seen under its new name only once all of it is there, and leaves no temp folder', async (t) => {
  const baseDir = await tempDir(t, 'gantry-folder-copy-');
  const uploads = join(baseDir, 'uploads');
  // 48 MB: long enough to copy that a folder appearing under its name and then filling is seen doing so (it was, at
  // every run, before the copy was made under a hidden name first).
  const line = 'G1 X100.25 Y80.5 E0.0345 F1800\n';
  const files: Record<string, number> = { 'big.gcode': Math.ceil((48 * 1024 * 1024) / line.length) * line.length, 'small.gcode': line.length, 'inner/x.gcode': line.length * 3 };
  await mkdir(join(uploads, 'set', 'inner'), { recursive: true });
  for (const [name, size] of Object.entries(files)) await writeFile(join(uploads, 'set', name), line.repeat(size / line.length));
  const s = await startTestServer(t, { baseDir });

  const looks: Record<string, number>[] = [];
  const watcher = watch(uploads, (_event, name) => {
    if (name !== 'copy') return;
    const sizes: Record<string, number> = {};
    for (const f of Object.keys(files)) {
      try {
        sizes[f] = statSync(join(uploads, 'copy', f)).size;
      } catch {
        sizes[f] = -1;
      }
    }
    looks.push(sizes);
  });
  t.after(() => watcher.close());

  const res = await s.api('/api/files/local/set', { method: 'POST', json: { command: 'copy', destination: 'copy' } });
  assert.equal(res.status, 201, await res.clone().text());
  await waitFor('the watcher to see the copy', () => looks.length > 0);
  for (const look of looks) assert.deepEqual(look, files, 'every look at the folder under its name saw all of it');

  const listed = (await (await s.api('/api/files/local/copy')).json()) as Json;
  assert.deepEqual(listed.children.map((c: Json) => c.name).sort(), ['big.gcode', 'inner', 'small.gcode']);
  assert.deepEqual((await readdir(uploads)).filter((n) => n.startsWith('.upload-')), [], 'no temp folder left');
});
