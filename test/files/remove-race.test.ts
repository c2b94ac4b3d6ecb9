// Deleting a folder while metadata writes into it are under way (a print ending, an analysis finishing): the delete
// succeeds and the folder stays gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LocalStorage } from '../../src/files/local-storage.ts';
import { FileTypes } from '../../src/files/file-types.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test('a folder removed while its metadata is being written is removed, and no late write brings it back', async (t) => {
  const root = await tempDir(t, 'gantry-remove-race-');
  const storage = new LocalStorage(root, silentLogger, new FileTypes());
  for (let round = 0; round < 40; round++) {
    const folder = join(root, 'batch');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'long.gcode'), 'G28\n');
    // Writes keep arriving before, during and after the removal, as statistics and analyses do.
    const writes = Array.from({ length: 20 }, (_, i) => new Promise<void>((resolve) => {
      setTimeout(() => {
        void storage.metadata.update(folder, 'long.gcode', { prints: { success: i } }).then(() => resolve(), () => resolve());
      }, i % 4);
    }));
    await new Promise((r) => setTimeout(r, round % 3));
    await storage.remove(['batch']);
    await Promise.all(writes);
    await storage.metadata.flush();
    await assert.rejects(stat(folder), { code: 'ENOENT' }, `round ${round}: the folder came back`);
  }
  assert.deepEqual(await readdir(root), []);
});
