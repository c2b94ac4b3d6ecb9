// The CLI and a running server agree: `gantry apikey` and `gantry user …` on the base dir of a running server act
// through it (its local control file), so the key printed works and user changes apply at once and persist.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { access as exists, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { startTestServer } from '../helpers/server.ts';
import { CONTROL_FILE } from '../../src/access/local-control.ts';
import { runGantry } from '../helpers/gantry-cli.ts';

const gantry = runGantry;

const login = (url: string, user: string, pass: string) => fetch(`${url}/api/login`, {
  method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ user, pass }),
}).then((r) => r.status);

test('apikey and user add/password on a running server without a global key take effect in it at once', async (t) => {
  const s = await startTestServer(t, { settings: { devel: { enableRateLimiter: false } } });
  await s.config.patch({ api: { key: null } });
  assert.equal(s.config.current.api.key, null);

  const apikey = await gantry(['apikey', '--basedir', s.baseDir]);
  assert.equal(apikey.code, 0, apikey.stderr);
  const key = apikey.stdout.trim();
  assert.match(key, /^[0-9A-F]{32}$/);
  assert.equal((await s.api('/api/version', { key })).status, 200, 'the printed key works on the running server');
  assert.equal(s.config.current.api.key, key);

  const add = await gantry(['user', 'add', 'carol', '--password', 'pw-carol-1', '--basedir', s.baseDir]);
  assert.equal(add.code, 0, add.stderr);
  assert.match(add.stderr, /through the server running at/);
  assert.equal(await login(s.url, 'carol', 'pw-carol-1'), 200);

  const pw = await gantry(['user', 'password', 'carol', '--password', 'pw-carol-2', '--basedir', s.baseDir]);
  assert.equal(pw.code, 0, pw.stderr);
  assert.equal(await login(s.url, 'carol', 'pw-carol-2'), 200);
  assert.equal(await login(s.url, 'carol', 'pw-carol-1'), 403);

  // A later change by the server keeps carol (nothing in its memory overwrites the CLI's change), and disk agrees.
  await s.access.users.addUser({ name: 'dave', password: 'pw-dave' });
  const onDisk = parse(await readFile(join(s.baseDir, 'users.yaml'), 'utf8')) as Record<string, unknown>;
  assert.ok('carol' in onDisk && 'dave' in onDisk);
  assert.equal((parse(await readFile(join(s.baseDir, 'config.yaml'), 'utf8')) as { api: { key: string } }).api.key, key);

  // The control file goes with the server; the commands then work on the files directly.
  await s.stop();
  await assert.rejects(exists(join(s.baseDir, CONTROL_FILE)));
});
