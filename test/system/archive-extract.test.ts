// Zip extraction refuses a hostile archive from its central directory alone: nothing is written before the refusal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { extractArchive } from '../../src/system/archive-extract.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { zipOf, type ZipMemberSpec } from '../helpers/zip.ts';

const LIMITS = { maxEntries: 50, maxTotalBytes: 64 * 1024 };

/** Extracts `members` (written as a zip) into a fresh folder; the error message if refused, and what the folder holds. */
async function extract(t: Parameters<typeof tempDir>[0], members: ZipMemberSpec[], patch?: (zip: string) => string) {
  const work = await tempDir(t, 'gantry-extract-');
  let zip = await zipOf(members);
  if (patch) zip = Buffer.from(patch(zip.toString('latin1')), 'latin1');
  await writeFile(join(work, 'a.zip'), zip);
  const dest = join(work, 'out');
  const error = await extractArchive(join(work, 'a.zip'), 'zip', dest, LIMITS).then(() => undefined, (e: Error) => e.message);
  return { error, dest, left: await readdir(dest, { recursive: true }) };
}

const plain = (n: number): ZipMemberSpec[] => Array.from({ length: n }, (_, i) => ({ name: `de/f${i}.txt`, data: 'x' }));

test('a plain zip is extracted whole', async (t) => {
  const r = await extract(t, [...plain(3), { name: 'de/empty/', dir: true }]);
  assert.equal(r.error, undefined);
  assert.deepEqual(r.left.sort(), ['de', 'de/empty', 'de/f0.txt', 'de/f1.txt', 'de/f2.txt']);
  assert.equal(await readFile(join(r.dest, 'de/f1.txt'), 'utf8'), 'x');
});

test('too many entries: refused from the declared count, not one member written', async (t) => {
  const r = await extract(t, plain(LIMITS.maxEntries + 1));
  assert.match(r.error ?? '', /more than 50 entries/);
  assert.deepEqual(r.left, []);
});

test('a hostile member after plain ones: the plain ones are not written either', async (t) => {
  // yazl refuses to write `..`, so a same-length name is patched in (local header and central directory).
  const slip = await extract(t, [...plain(5), { name: 'zz/zzzzzzzzz.txt', data: 'owned' }], (z) => z.replaceAll('zz/zzzzzzzzz.txt', '../../evil01.txt'));
  assert.match(slip.error ?? '', /(invalid relative path|Unsafe path in archive): \.\.\/\.\.\/evil01\.txt/);
  assert.deepEqual(slip.left, []);

  const absolute = await extract(t, [...plain(5), { name: 'tm/zzzzzzzz.txt', data: 'owned' }], (z) => z.replaceAll('tm/zzzzzzzz.txt', '/tmp/evil02.txt'));
  assert.match(absolute.error ?? '', /(absolute path|Unsafe path in archive): \/tmp\/evil02\.txt/);
  assert.deepEqual(absolute.left, []);

  const link = await extract(t, [...plain(5), { name: 'de/link.mo', data: '/etc/passwd', mode: 0o120777 }]);
  assert.match(link.error ?? '', /Links and special files are not allowed: de\/link\.mo/);
  assert.deepEqual(link.left, []);
});

test('declared sizes over the budget together: refused before writing, though each member fits', async (t) => {
  const r = await extract(t, [1, 2, 3].map((i) => ({ name: `de/part${i}.bin`, data: Buffer.alloc(30 * 1024, i) })));
  assert.match(r.error ?? '', /expands to more than 65536 bytes/);
  assert.deepEqual(r.left, []);
});
