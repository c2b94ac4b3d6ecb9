// Issue 15 item 8: start-up refuses a corrupt or empty users.yaml with a message naming file and line, and removes the
// temp files an interrupted atomic write (kill -9) leaves behind; damaged data files are set aside instead of stopping it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startTestServer } from '../../helpers/server.ts';
import { startGantry } from '../../../src/main.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { connectVirtual, FAST_PRINTER } from '../../helpers/connected-server.ts';
import { nextEvent, waitFor, waitForFile } from '../../helpers/wait.ts';

async function baseWith(t: { after(fn: () => Promise<void>): void }, users?: string): Promise<string> {
  const dir = await tempDir(t, 'gantry-startup-');
  if (users !== undefined) await writeFile(join(dir, 'users.yaml'), users);
  return dir;
}

const refuses = async (baseDir: string, pattern: RegExp) => {
  let started;
  try {
    started = await startGantry({ baseDir, host: '127.0.0.1', port: 0 });
  } catch (err) {
    assert.ok(!(err instanceof TypeError), `a TypeError: ${(err as Error).stack}`);
    assert.match((err as Error).message, pattern);
    return;
  }
  await started.stop();
  assert.fail(`started with ${baseDir}`);
};

test('a corrupt users.yaml stops start-up with its file name and line', async (t) => {
  const good = 'admin:\n  passwordHash: x\n  active: true\n  groups: [admins, users]\n';
  // YAML syntax: an unclosed flow sequence on line 4.
  await refuses(await baseWith(t, 'admin:\n  passwordHash: x\n  active: true\n  groups: [admins, users\n'), /users\.yaml:\d+(:\d+)?: .*YAML/);
  // A user without a record (this was a TypeError), on line 5.
  await refuses(await baseWith(t, `${good}bob:\n`), /users\.yaml:5\b.*bob/);
  // A user whose record is a list.
  await refuses(await baseWith(t, `${good}carol:\n  - a\n`), /users\.yaml:5\b.*carol/);
  // Not a mapping at all.
  await refuses(await baseWith(t, '- admin\n- bob\n'), /users\.yaml:1\b/);
});

test('an empty users.yaml refuses to start instead of creating a new admin; an absent one is a first run', async (t) => {
  for (const empty of ['', '\n  \n', '# nothing here\n']) {
    const dir = await baseWith(t, empty);
    await refuses(dir, /users\.yaml.*no users/);
    assert.equal(await readFile(join(dir, 'users.yaml'), 'utf8'), empty, 'the file is left as it was');
  }
  const fresh = await baseWith(t);
  const s = await startTestServer(t, { baseDir: fresh });
  assert.ok(s.access.users.getUser('admin'), 'first run created the admin');
});

test('the CLI says which file and line is bad and exits non-zero', async (t) => {
  const dir = await baseWith(t, 'admin:\n  passwordHash: x\nbob: [\n');
  const cli = fileURLToPath(new URL('../../../src/cli.ts', import.meta.url));
  const r = spawnSync(process.execPath, ['--import', 'tsx', cli, 'serve', '--port', '0', '--host', '127.0.0.1', '--basedir', dir], { encoding: 'utf8', timeout: 30_000 });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /gantry: .*users\.yaml:\d+/);
  assert.doesNotMatch(r.stderr, /TypeError|\n\s+at /);
});

test('stale atomic-write temp files from an interrupted save are removed at start; other files stay', async (t) => {
  const dir = await baseWith(t);
  await mkdir(join(dir, 'printerProfiles'), { recursive: true });
  await mkdir(join(dir, 'data', 'appkeys'), { recursive: true });
  const stale = [join(dir, '.config.yaml.0a1b2c3d4e5f.tmp'), join(dir, '.users.yaml.ffffffffffff.tmp'),
    join(dir, 'printerProfiles', '.custom.profile.123456abcdef.tmp'), join(dir, 'data', 'appkeys', '.keys.yaml.abcdefabcdef.tmp')];
  // In the uploads tree: an upload not yet in place, metadata writes cut short (a kill during an analysis's save).
  await mkdir(join(dir, 'uploads', 'parts'), { recursive: true });
  stale.push(join(dir, 'uploads', '.upload-0123456789abcdef.tmp'), join(dir, 'uploads', '..metadata.json.2008055e7c75.tmp'),
    join(dir, 'uploads', 'parts', '..metadata.json.0a0b0c0d0e0f.tmp'));
  const kept = [join(dir, 'notes.tmp'), join(dir, '.hidden'), join(dir, '.config.yaml.bak'), join(dir, 'uploads', 'parts', '.notes.0a0b0c0d0e0f.tmp')];
  for (const f of [...stale, ...kept]) await writeFile(f, 'api:\n  key: SECRETSECRET\n');
  // A folder copy not yet in place (made whole under a hidden name, then renamed); another hidden folder stays.
  const staleCopy = join(dir, 'uploads', 'parts', '.upload-fedcba9876543210.tmp');
  const hiddenFolder = join(dir, 'uploads', '.thumbnails');
  for (const folder of [staleCopy, hiddenFolder]) {
    await mkdir(join(folder, 'inner'), { recursive: true });
    await writeFile(join(folder, 'inner', 'half.gcode'), 'G28\n');
  }
  await startTestServer(t, { baseDir: dir });
  await assert.rejects(readdir(staleCopy), 'the unfinished folder copy is gone');
  assert.equal(await readFile(join(hiddenFolder, 'inner', 'half.gcode'), 'utf8'), 'G28\n');
  for (const f of stale) await assert.rejects(readFile(f), `${f} is still there`);
  for (const f of kept) assert.equal(await readFile(f, 'utf8'), 'api:\n  key: SECRETSECRET\n');
  assert.ok(!(await readdir(dir)).some((n) => n.endsWith('.tmp') && n.startsWith('.')));
});

test('damaged data files (print journal, print history, file metadata) do not stop the start: each is set aside, and the next save starts afresh', async (t) => {
  const dir = await baseWith(t);
  const first = await startTestServer(undefined, { baseDir: dir, settings: FAST_PRINTER });
  const form = new FormData();
  form.set('file', new Blob(['G28\nG1 X10 Y10\n']), 'part.gcode');
  assert.equal((await first.api('/api/files/local', { method: 'POST', body: form })).status, 201);
  await first.stop();
  // Cut short, as a damaged SD card leaves them.
  const damaged = {
    [join(dir, 'data', 'print-journal.json')]: '{"version":1,"status":"printing","path":"part.gc',
    [join(dir, 'data', 'print-history.json')]: '[{"origin":"local","path":"old.gcode","res',
    [join(dir, 'uploads', '.metadata.json')]: '{"part.gcode":{"hash":"ab',
  };
  for (const [file, text] of Object.entries(damaged)) await writeFile(file, text);

  const s = await startTestServer(t, { baseDir: dir, settings: FAST_PRINTER });
  const offer = (await (await s.api('/api/plugin/recovery')).json()) as { available: boolean };
  assert.equal(offer.available, false, 'no offer from an unreadable journal');
  const listed = (await (await s.api('/api/files/local')).json()) as { files: Array<{ name: string }> };
  assert.deepEqual(listed.files.map((f) => f.name), ['part.gcode'], 'the set-aside metadata is not listed');
  const setAside = async (file: string) => {
    const folder = join(file, '..');
    const aside = (await readdir(folder)).filter((n) => n.startsWith(`${file.split('/').at(-1)}.corrupt-`));
    assert.equal(aside.length, 1, `${file} set aside: ${(await readdir(folder)).join(', ')}`);
    assert.equal(await readFile(join(folder, aside[0]), 'utf8'), damaged[file], 'kept as it was');
  };
  const [journal, history, metadata] = Object.keys(damaged);
  await setAside(journal);
  await setAside(metadata);
  // A print writes a new history (the old one is read, and set aside, when the first entry is added) and the file's
  // metadata gets its print again.
  await connectVirtual(s);
  const done = nextEvent(s.events, 'PrintDone', () => true, 30_000);
  assert.equal((await s.api('/api/files/local/part.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
  await done;
  const written = await waitForFile(history, (text) => text.includes('part.gcode'));
  await setAside(history);
  assert.deepEqual((JSON.parse(written) as Array<{ path: string; result: string }>).map((e) => [e.path, e.result]), [['part.gcode', 'success']]);
  await waitFor('the print in the metadata', async () => {
    const meta = JSON.parse(await readFile(join(dir, 'uploads', '.metadata.json'), 'utf8').catch(() => '{}')) as Record<string, { history?: unknown[] }>;
    return (meta['part.gcode']?.history?.length ?? 0) > 0;
  }, 10_000);
});
