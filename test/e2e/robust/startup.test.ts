// Issue 15 item 8: start-up refuses a corrupt or empty users.yaml with a message naming file and line, and removes the
// temp files an interrupted atomic write (kill -9) leaves behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startTestServer } from '../../helpers/server.ts';
import { startGantry } from '../../../src/main.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

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
  const kept = [join(dir, 'notes.tmp'), join(dir, '.hidden'), join(dir, '.config.yaml.bak')];
  for (const f of [...stale, ...kept]) await writeFile(f, 'api:\n  key: SECRETSECRET\n');
  await startTestServer(t, { baseDir: dir });
  for (const f of stale) await assert.rejects(readFile(f), `${f} is still there`);
  for (const f of kept) assert.equal(await readFile(f, 'utf8'), 'api:\n  key: SECRETSECRET\n');
  assert.ok(!(await readdir(dir)).some((n) => n.endsWith('.tmp') && n.startsWith('.')));
});
