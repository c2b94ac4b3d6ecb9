// Hostile OctoPrint imports: an alias bomb, a huge string, hostile user names, too many zip entries, a zip declaring
// more than the disk has free, and a dry run that must not unpack the uploads. Every refusal names the file and key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { importOctoPrint } from '../../src/import/import-octoprint.ts';
import { openSource } from '../../src/import/source.ts';
import { readAccess } from '../../src/import/access-import.ts';
import { ImportReport } from '../../src/import/report.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { storedZipOf, zipOf } from '../helpers/zip.ts';

const users = (names: string[]) => stringify(Object.fromEntries([['_version', 2], ...names.map((n) => [n,
  { password: 'a'.repeat(128), active: true, groups: ['users'], permissions: [], apikey: null, settings: {} }])]));

test('a YAML alias bomb is refused naming the file, without a stack trace', async (t) => {
  const base = await tempDir(t, 'gantry-import-bomb-');
  const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
  for (let i = 1; i < 12; i++) lines.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
  await writeFile(join(base, 'config.yaml'), lines.join('\n') + '\n');
  await assert.rejects(openSource(base, base), (err: Error) => {
    assert.match(err.message, /config\.yaml: refused: .*alias bomb/);
    assert.equal(err.name, 'ImportInputError');
    return true;
  });
});

test('a 2 MB string in config.yaml is refused naming the file, line and key', async (t) => {
  const base = await tempDir(t, 'gantry-import-huge-');
  await writeFile(join(base, 'config.yaml'), stringify({ server: {}, appearance: { name: 'x'.repeat(2_000_000) } }));
  await assert.rejects(openSource(base, base), /config\.yaml:\d+: appearance\.name: value longer than 102400 bytes/);
});

test('user names the users API refuses (../../evil, 1,000 characters, a NUL) are left out and reported', async (t) => {
  const base = await tempDir(t, 'gantry-import-names-');
  await writeFile(join(base, 'config.yaml'), stringify({ server: {} }));
  await writeFile(join(base, 'users.yaml'), users(['fine', '../../evil', 'n'.repeat(1000), 'a\0b']));
  const report = new ImportReport();
  const src = await openSource(base, base);
  t.after(() => src.dispose());
  const plan = await readAccess(src, report);
  assert.deepEqual(plan.users.map((u) => u.name), ['fine']);
  const said = report.skipped.map((s) => `${s.what}: ${s.why}`).join('\n');
  assert.equal((said.match(/users\.yaml: user .*invalid user name/g) ?? []).length, 3, said);
  assert.ok(said.length < 2000, 'names are shown shortened');
});

test('a zip declaring more entries than allowed is refused from its index at once, naming the zip', async (t) => {
  const dir = await tempDir(t, 'gantry-import-entries-');
  const zip = join(dir, 'backup.zip');
  await writeFile(zip, storedZipOf(Array.from({ length: 50_001 }, (_, i) => ({ name: `basedir/uploads/${i}.gcode`, data: '' }))));
  const started = performance.now();
  await assert.rejects(importOctoPrint({ from: zip, baseDir: join(dir, 'gantry'), dryRun: true }),
    (err: Error) => /backup\.zip: Archive has more than 50000 entries; nothing imported/.test(err.message));
  assert.ok(performance.now() - started < 20_000);
});

/** A zip whose central directory declares each member `declared` bytes (the local headers and data stay small). */
async function lyingZip(count: number, declared: number): Promise<Buffer> {
  const z = await zipOf([{ name: 'basedir/config.yaml', data: 'server: {}\n' },
    ...Array.from({ length: count }, (_, i) => ({ name: `basedir/data/big${i}.bin`, data: 'x' }))]);
  for (let at = z.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])); at >= 0; at = z.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]), at + 4)) {
    const nameLength = z.readUInt16LE(at + 28);
    if (z.subarray(at + 46, at + 46 + nameLength).toString().includes('big')) z.writeUInt32LE(declared, at + 24);
  }
  return z;
}

test('a zip bomb: a member beyond 2 GiB, or members beyond the free space, are refused before anything is unpacked', async (t) => {
  const dir = await tempDir(t, 'gantry-import-zipbomb-');
  const one = join(dir, 'one.zip');
  await writeFile(one, await lyingZip(1, 0xfffffff0));
  await assert.rejects(importOctoPrint({ from: one, baseDir: join(dir, 'gantry') }),
    /one\.zip: Archive member basedir\/data\/big0\.bin expands to more than 2147483648 bytes/);
  const { statfs } = await import('node:fs/promises');
  const fs = await statfs(dir);
  const many = join(dir, 'many.zip');
  await writeFile(many, await lyingZip(Math.ceil((fs.bavail * fs.bsize) / 0x7ff00000) + 1, 0x7ff00000));
  await assert.rejects(importOctoPrint({ from: many, baseDir: join(dir, 'gantry') }), /many\.zip: Archive expands to more than \d+ bytes \(the free space of/);
  assert.deepEqual((await readdir(dir)).filter((n) => n.startsWith('.gantry-import-zip-')), [], 'nothing left unpacked');
});

test('a dry run of a backup zip does not unpack the uploads into $TMPDIR, yet checks their hashes', async (t) => {
  const dir = await tempDir(t, 'gantry-import-dry-');
  const zip = join(dir, 'backup.zip');
  const content = 'G28\n'.repeat(1000);
  const { createHash } = await import('node:crypto');
  const sha = createHash('sha1').update(content).digest('hex');
  await writeFile(zip, await zipOf([
    { name: 'basedir/config.yaml', data: 'server: {}\n' },
    { name: 'basedir/users.yaml', data: users(['alice']) },
    { name: 'basedir/uploads/a.gcode', data: content },
    { name: 'basedir/uploads/b.gcode', data: content },
    { name: 'basedir/uploads/.metadata.json', data: JSON.stringify({ 'a.gcode': { hash: sha, display: 'a.gcode' }, 'b.gcode': { hash: '0'.repeat(40) } }) },
  ]));
  // (Free blocks of $TMPDIR are not compared: other test processes share that file system and write meanwhile.)
  const result = await importOctoPrint({ from: zip, baseDir: join(dir, 'gantry'), dryRun: true });
  // a.gcode matches its recorded hash (read from the zip); b.gcode does not.
  assert.match(result.text, /metadata of uploads\/b\.gcode/);
  assert.doesNotMatch(result.text, /metadata of uploads\/a\.gcode/);
});
