// Import safety: legacy and PBKDF2 hashes log in and are upgraded, a failure or a kill halfway leaves nothing behind,
// a base dir with users is refused without --merge, --dry-run writes nothing, broken input names file and key,
// --link hard-links instead of copying.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, pbkdf2Sync, randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, writeFile, stat, rm, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { startTestServer } from '../helpers/server.ts';
import { A, FIXTURE_DIR, SKIP, fixtureCopy, runImport, snapshot, tempDir } from './helpers.ts';
import { FAIL_AT_ENV, PAUSE_AT_ENV, importOctoPrint } from '../../src/import/import-octoprint.ts';
import { UserStore } from '../../src/access/user-store.ts';
import { ensureBuilt } from '../helpers/built-server.ts';

const BIN = new URL('../../bin/gantry.js', import.meta.url).pathname;
// bin/gantry.js runs dist/cli.js: build it first when the sources changed.
before(ensureBuilt);

interface Run { code: number | null; stdout: string; stderr: string }

function cli(args: string[], env: Record<string, string> = {}, onStdout?: (all: string, kill: () => void) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GANTRY_BASEDIR: '', ...env } });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      onStdout?.(stdout, () => child.kill('SIGKILL'));
    });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** passlib's pbkdf2_sha256 string ("adapted base64": `.` for `+`, no padding). */
function passlibPbkdf2(password: string, rounds = 1000): string {
  const ab64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '').replace(/\+/g, '.');
  const salt = randomBytes(16);
  return `$pbkdf2-sha256$${rounds}$${ab64(salt)}$${ab64(pbkdf2Sync(password, salt, rounds, 32, 'sha256'))}`;
}

test('a legacy SHA-512 user (salt in config.yaml) and a PBKDF2 user log in with their passwords and are upgraded', { skip: SKIP }, async (t) => {
  const src = await fixtureCopy(t);
  const salt = 'Qx3bVz9LkA0pWm7Rt2Ys8Nc1Dh6Fg4Je';
  const config = parse(await readFile(join(src, 'config.yaml'), 'utf8')) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  config.accessControl = { salt };
  config.api.allowCrossOrigin = true;
  // Event hooks: a system command must not start running unchecked on the new host; G-code ones carry over as they are.
  config.events = { subscriptions: [
    { event: 'PrintDone', command: 'touch /tmp/should-not-run', type: 'system', name: 'flag' },
    { event: 'PrintStarted', command: 'M117 go', type: 'gcode', enabled: true },
  ] };
  config.plugins.mqtt = { broker: { url: '127.0.0.1', port: 18830 } };
  config.plugins.octolapse = { stabilization: 'centre' };
  await writeFile(join(src, 'config.yaml'), stringify(config));
  const users = parse(await readFile(join(src, 'users.yaml'), 'utf8')) as Record<string, unknown>;
  // As OctoPrint 1.3 wrote them: version-1 entries with roles and no groups.
  users.olduser = { active: true, apikey: null, password: createHash('sha512').update('legacypw' + salt).digest('hex'), roles: ['user'] };
  users.oldadmin = { active: true, apikey: null, password: passlibPbkdf2('pbkdf2pw'), roles: ['user', 'admin'] };
  await writeFile(join(src, 'users.yaml'), stringify(users));

  const { baseDir, text } = await runImport(t, src);
  const imported = parse(await readFile(join(baseDir, 'config.yaml'), 'utf8')) as { api: unknown; events: { subscriptions: Array<Record<string, unknown>> };
    plugins: { mqtt: { broker: unknown; publish: { baseTopic: string } } } };
  assert.equal(imported.events.subscriptions[0].enabled, false);
  assert.deepEqual(imported.api, { allowCrossOrigin: true, key: A.globalKey });
  assert.equal(imported.events.subscriptions[1].enabled, true);
  assert.match(text, /events\.subscriptions\[0\] \(flag\) runs a system command: imported disabled/);
  // OctoPrint-MQTT's settings are Gantry's own MQTT settings; the topics stay OctoPrint's. Other plugins are reported.
  assert.deepEqual(imported.plugins.mqtt.broker, { url: '127.0.0.1', port: 18830 });
  assert.equal(imported.plugins.mqtt.publish.baseTopic, 'octoPrint/');
  assert.match(text, /plugins\.octolapse\.stabilization: settings of OctoPrint plugin "octolapse"/);
  const s = await startTestServer(t, { baseDir });
  const login = (user: string, pass: string) => s.api('/api/login', { method: 'POST', json: { user, pass }, key: null });
  assert.equal((await login('olduser', 'wrong')).status, 403);
  assert.equal((await login('olduser', 'legacypw')).status, 200);
  assert.equal((await login('oldadmin', 'pbkdf2pw')).status, 200);
  const stored = parse(await readFile(join(baseDir, 'users.yaml'), 'utf8')) as Record<string, { passwordHash: string; groups: string[] }>;
  assert.match(stored.olduser.passwordHash, /^scrypt\$/);
  assert.match(stored.oldadmin.passwordHash, /^scrypt\$/);
  assert.deepEqual(stored.olduser.groups, ['users'], 'version-1 roles become groups as OctoPrint migrates them');
  assert.deepEqual(stored.oldadmin.groups, ['admins', 'users']);
  assert.equal((await login('olduser', 'legacypw')).status, 200, 'the new hash checks the same password');
  assert.ok(!(await readFile(join(baseDir, 'config.yaml'), 'utf8')).includes(salt), 'the salt is not a Gantry setting');
});

/** Names in a folder, to see that nothing was left beside the target. */
const names = async (dir: string) => (await readdir(dir)).sort();

test('a failure halfway leaves nothing behind: no new target, an existing target exactly as it was', { skip: SKIP }, async (t) => {
  const parent = await tempDir(t);
  const fresh = join(parent, 'fresh');
  for (const step of ['settings', 'users', 'files']) {
    process.env[FAIL_AT_ENV] = step;
    try {
      await assert.rejects(importOctoPrint({ from: FIXTURE_DIR, baseDir: fresh }), new RegExp(`step "${step}"`));
    } finally {
      delete process.env[FAIL_AT_ENV];
    }
    assert.deepEqual(await names(parent), [], `nothing left after a failure in ${step}`);
  }

  // A Gantry base dir with a user of its own, imported into with --merge.
  const existing = join(parent, 'existing');
  await mkdir(existing);
  const store = new UserStore(join(existing, 'users.yaml'), join(existing, 'groups.yaml'));
  await store.load();
  await store.addUser({ name: 'carol', password: 'carol-pass-3', groups: ['admins', 'users'] });
  await writeFile(join(existing, 'config.yaml'), stringify({ api: { key: 'AAAABBBBCCCCDDDDEEEEFFFF00001111' }, appearance: { name: 'Gantry' } }));
  const before = await snapshot(existing);
  process.env[FAIL_AT_ENV] = 'timelapse';
  try {
    await assert.rejects(importOctoPrint({ from: FIXTURE_DIR, baseDir: existing, merge: true }), /step "timelapse"/);
  } finally {
    delete process.env[FAIL_AT_ENV];
  }
  assert.deepEqual(await snapshot(existing), before);
  assert.deepEqual(await names(parent), ['existing']);
});

test('killed halfway (SIGKILL): the target is as it was, and the next import clears the leftovers', { skip: SKIP }, async (t) => {
  const parent = await tempDir(t);
  const target = join(parent, 'gantry');
  await mkdir(target);
  await writeFile(join(target, 'config.yaml'), stringify({ appearance: { name: 'before' } }));
  const before = await snapshot(target);
  const run = await cli(['import-octoprint', '--from', FIXTURE_DIR, '--basedir', target], { [PAUSE_AT_ENV]: 'files' }, (all, kill) => {
    if (all.includes('import paused')) kill();
  });
  assert.equal(run.code, null, 'killed');
  assert.deepEqual(await snapshot(target), before);
  assert.equal((await names(parent)).length, 2, 'the staging folder of the killed run is still there');
  await importOctoPrint({ from: FIXTURE_DIR, baseDir: target });
  assert.deepEqual(await names(parent), ['gantry']);
  assert.equal((parse(await readFile(join(target, 'config.yaml'), 'utf8')) as { appearance: { name: string } }).appearance.name, 'Workshop A');

  // Killed between the two renames of the swap: the old target waits beside it and is put back first.
  await writeFile(join(target, 'notes.txt'), 'mine');
  await rename(target, join(parent, '.gantry.replaced-abc123'));
  await importOctoPrint({ from: FIXTURE_DIR, baseDir: target, merge: true });
  assert.deepEqual(await names(parent), ['gantry']);
  assert.equal(await readFile(join(target, 'notes.txt'), 'utf8'), 'mine');
});

test('--dry-run (CLI) writes nothing; a base dir with users is refused without --merge; --merge keeps both sides\' users and keys', { skip: SKIP }, async (t) => {
  const parent = await tempDir(t);
  const target = join(parent, 'gantry');
  const dry = await cli(['import-octoprint', '--from', FIXTURE_DIR, '--basedir', target, '--dry-run']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /Dry run/);
  assert.match(dry.stdout, /users: 3/);
  assert.match(dry.stdout, /plugins\.tracking\.unique_id/);
  assert.deepEqual(await names(parent), [], 'nothing written');

  await mkdir(target);
  const store = new UserStore(join(target, 'users.yaml'), join(target, 'groups.yaml'));
  await store.load();
  await store.addUser({ name: 'carol', password: 'carol-pass-3', groups: ['admins', 'users'] });
  // What Gantry's first start makes: `admin` with a random password.
  await store.addUser({ name: 'admin', password: 'first-start-random', groups: ['admins', 'users'] });
  const ownKey = 'AAAABBBBCCCCDDDDEEEEFFFF00001111';
  await writeFile(join(target, 'config.yaml'), stringify({ api: { key: ownKey } }));
  await assert.rejects(importOctoPrint({ from: FIXTURE_DIR, baseDir: target }), /already has users \(carol, admin\).*--merge/);

  const merged = await importOctoPrint({ from: FIXTURE_DIR, baseDir: target, merge: true });
  const s = await startTestServer(t, { baseDir: target });
  const who = async (key: string) => ((await (await s.api('/api/currentuser', { key })).json()) as { name: string }).name;
  assert.equal(await who(ownKey), '_api', 'the target\'s global key stays');
  assert.equal(await who(A.globalKey), '_api', 'OctoPrint\'s global key works too');
  assert.equal(await who(A.users.alice.appKey), 'alice');
  const list = (await (await s.api('/api/access/users')).json()) as { users: Array<{ name: string }> };
  assert.deepEqual(list.users.map((u) => u.name).sort(), ['admin', 'alice', 'bob', 'carol']);
  const login = (user: string, pass: string) => s.api('/api/login', { method: 'POST', json: { user, pass }, key: null });
  assert.equal((await login('carol', 'carol-pass-3')).status, 200, 'the target\'s own user stays');
  assert.equal((await login('admin', A.users.admin.password)).status, 200, 'OctoPrint\'s admin replaced the first-start one');
  assert.equal(await who(A.users.admin.key), 'admin');
  assert.match(merged.text, /user admin existed in the target: replaced/);
});

test('half-written or hand-edited input: the error names the file and the key; nothing is written', { skip: SKIP }, async (t) => {
  const cases: Array<{ file: string; edit: (text: string) => string; expect: RegExp }> = [
    { file: 'users.yaml', edit: (s) => s.slice(0, s.indexOf('alice:') + 40) + '\n  groups: [operators\n', expect: /users\.yaml:\d+: invalid YAML/ },
    { file: 'users.yaml', edit: (s) => s.replace('active: false', 'active: nope'), expect: /users\.yaml:\d+: bob\.active: must be true or false/ },
    { file: 'config.yaml', edit: (s) => s.replace('communication: 45.0', 'communication: fast'), expect: /config\.yaml:\d+: serial\.timeout\.communication: .*"fast"/ },
    { file: 'uploads/.metadata.json', edit: (s) => s.slice(0, 500), expect: /uploads\/\.metadata\.json: invalid JSON/ },
    { file: 'uploads/parts/.metadata.json', edit: (s) => s.replace('"success": false', '"success": "no"'), expect: /parts\/\.metadata\.json: cura-2\.3\.1_puzzle_all\.gcode\.history\[0\]: must be/ },
    { file: 'printerProfiles/ender3.profile', edit: (s) => s.replace('width: 220.0', 'width: wide'), expect: /ender3\.profile:\d+: volume\.width: invalid printer profile value/ },
    { file: 'data/appkeys/keys.yaml', edit: (s) => s.replace('app_id: ImportTest', 'app_id: [x'), expect: /keys\.yaml:\d+: invalid YAML/ },
  ];
  const parent = await tempDir(t);
  for (const c of cases) {
    const src = await fixtureCopy(t);
    const path = join(src, c.file);
    await writeFile(path, c.edit(await readFile(path, 'utf8')));
    await assert.rejects(importOctoPrint({ from: src, baseDir: join(parent, 'gantry') }), (err: Error) => {
      assert.match(err.message, c.expect);
      return true;
    });
  }
  assert.deepEqual(await names(parent), []);
});

test('--link hard-links the files when on the same file system; the OctoPrint copy stays as it was', { skip: SKIP }, async (t) => {
  const src = await fixtureCopy(t);
  const before = await snapshot(src);
  const { baseDir } = await runImport(t, src, { link: true });
  const a = await stat(join(src, 'uploads', 'prusaslicer-2.3.3_3dbenchy.gcode'));
  const b = await stat(join(baseDir, 'uploads', 'prusaslicer-2.3.3_3dbenchy.gcode'));
  assert.equal(a.ino, b.ino);
  assert.deepEqual(await snapshot(src), before);
  await rm(baseDir, { recursive: true });
  assert.ok((await stat(join(src, 'uploads', 'prusaslicer-2.3.3_3dbenchy.gcode'))).isFile());
});

test('timelapse movies and PrusaSlicer profiles come over; other slicers\' profiles and unrendered frames are reported', { skip: SKIP }, async (t) => {
  const src = await fixtureCopy(t);
  await mkdir(join(src, 'timelapse', 'tmp'), { recursive: true });
  await writeFile(join(src, 'timelapse', 'benchy_20261125120000.mp4'), randomBytes(2048));
  await writeFile(join(src, 'timelapse', 'benchy_20261125120000.mp4.thumb.jpg'), randomBytes(256));
  await writeFile(join(src, 'timelapse', 'tmp', 'benchy-0.jpg'), randomBytes(64));
  await mkdir(join(src, 'slicingProfiles', 'prusaslicer'), { recursive: true });
  await writeFile(join(src, 'slicingProfiles', 'prusaslicer', 'fine.profile'), 'layer_height = 0.1\nfill_density = 20%\n');
  await mkdir(join(src, 'slicingProfiles', 'cura'), { recursive: true });
  await writeFile(join(src, 'slicingProfiles', 'cura', 'draft.profile'), '_display_name: Draft\nlayer_height: 0.3\n');
  const { baseDir, text } = await runImport(t, src);
  const s = await startTestServer(t, { baseDir });
  const tl = await (await s.api('/api/timelapse', { key: A.users.alice.key })).json() as { files: Array<{ name: string; bytes: number }> };
  assert.deepEqual(tl.files.map((f) => [f.name, f.bytes]), [['benchy_20261125120000.mp4', 2048]]);
  assert.ok((await stat(join(baseDir, 'timelapse', 'benchy_20261125120000.mp4.thumb.jpg'))).isFile());
  const profile = await (await s.api('/api/slicing/prusaslicer/profiles/fine')).json() as Record<string, unknown>;
  assert.equal((profile.data as Record<string, string>).layer_height, '0.1');
  assert.match(text, /cura\/draft\.profile: profile of slicer "cura"/);
  assert.match(text, /timelapse\/tmp \(1 files\): unrendered/);
});
