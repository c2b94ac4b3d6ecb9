// `gantry printer add|list|remove`: on a base dir with no server they change config.yaml (and say so), the next start
// runs what they added; with a server running they act through its /api/farm/printers, which applies at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { startTestServer } from '../helpers/server.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { runGantry } from '../helpers/gantry-cli.ts';

const gantry = runGantry;

const saved = async (base: string) => ((parse(await readFile(join(base, 'config.yaml'), 'utf8')) as { printers?: Array<{ name: string }> }).printers ?? []).map((p) => p.name);

test('gantry printer: offline it edits config.yaml, online it changes the running farm', async (t) => {
  const base = await tempDir(t, 'gantry-printer-cli-');
  const add = await gantry(['printer', 'add', 'two', '--virtual', '--http-port', '0', '--server-basedir', base]);
  assert.equal(add.code, 0, add.stderr);
  assert.match(add.stderr, /no server is running/);
  assert.deepEqual(await saved(base), ['two']);
  const dup = await gantry(['printer', 'add', 'two', '--virtual', '--server-basedir', base]);
  assert.equal(dup.code, 2);
  assert.match(dup.stderr, /exists already/);
  const both = await gantry(['printer', 'add', 'x', '--virtual', '--serial-port', '/dev/ttyUSB0', '--server-basedir', base]);
  assert.equal(both.code, 2);
  const offlineList = await gantry(['printer', 'list', '--basedir', base]);
  assert.equal(offlineList.code, 0, offlineList.stderr);
  assert.match(offlineList.stdout, /^default\t/m);
  assert.match(offlineList.stdout, /^two\t0\t\/printer\/two\/\tVIRTUAL$/m);

  // The next start runs it; now the CLI goes through the server.
  const server = await startTestServer(t, { baseDir: base });
  assert.ok(server.farm.get('two'));
  const online = await gantry(['printer', 'add', 'three', '--virtual', '--basedir', join(base, 'elsewhere'), '--server-basedir', base]);
  assert.equal(online.code, 0, online.stderr);
  assert.match(online.stderr, /through the server running at/);
  assert.ok(server.farm.get('three'), 'added to the running server at once');
  assert.equal(server.farm.get('three')?.paths.base, join(base, 'elsewhere'));
  assert.equal((await server.api('/printer/three/api/version')).status, 200);
  const list = await gantry(['printer', 'list', '--basedir', base]);
  assert.equal(list.code, 0, list.stderr);
  assert.deepEqual(list.stdout.trim().split('\n').map((l) => l.split('\t')[0]), ['default', 'two', 'three']);
  const removed = await gantry(['printer', 'remove', 'three', '--basedir', base]);
  assert.equal(removed.code, 0, removed.stderr);
  assert.equal(server.farm.get('three'), undefined);
  assert.deepEqual(await saved(base), ['two']);
  const missing = await gantry(['printer', 'remove', 'nope', '--basedir', base]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /No printer named nope/);
});
