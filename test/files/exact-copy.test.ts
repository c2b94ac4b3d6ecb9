// A folder copy while files are being written in it (an analysis's metadata, an upload): their temp files, which come and go meanwhile, are left out and do not fail the copy.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../src/core/atomic-file.ts';
import { copyTreeExactly } from '../../src/files/exact-copy.ts';
import { isUnfinishedName, unfinishedIn } from '../../src/files/upload-intake.ts';
import { METADATA_FILE } from '../../src/files/metadata-store.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test('a folder copied while metadata is written in it and an upload lands there: every copy succeeds, without temp files', async (t) => {
  const base = await tempDir(t, 'gantry-exact-copy-');
  const src = join(base, 'src');
  await mkdir(join(src, 'inner'), { recursive: true });
  for (let i = 0; i < 100; i++) await writeFile(join(src, i % 2 ? 'inner' : '', `f${i}.gcode`), 'G1 X1 Y2\n'.repeat(500));
  await writeFile(unfinishedIn(src), 'half an upload');
  await writeFileAtomic(join(src, METADATA_FILE), '{}');
  let writing = true;
  let writes = 0;
  const writer = (async () => {
    while (writing) await writeFileAtomic(join(src, METADATA_FILE), JSON.stringify({ writes: writes++ }));
  })();
  const copies: string[] = [];
  try {
    for (let i = 0; i < 12; i++) {
      const dst = join(base, `copy${i}`);
      await copyTreeExactly(src, dst, isUnfinishedName);
      copies.push(dst);
    }
  } finally {
    writing = false;
    await writer;
  }
  // The writer kept writing all along (else this could not fail: the old copy failed on a vanished temp file).
  assert.ok(writes > 12, `${writes} metadata writes during the copies`);
  for (const dst of copies) {
    const names = (await readdir(dst, { recursive: true })).map(String).sort();
    assert.equal(names.filter((n) => n.endsWith('.gcode')).length, 100, dst);
    assert.deepEqual(names.filter((n) => isUnfinishedName(n.split('/').pop()!)), [], `${dst} holds no temp file`);
    assert.ok(names.includes(METADATA_FILE), `${dst} has the metadata`);
  }
});
