// Importing fixture A (a real OctoPrint 1.9.3 base dir and its backup zip): users log in with their OctoPrint
// passwords, every key keeps its identity and permissions, files keep analysis and history, profiles their default,
// settings their values — and the OctoPrint folder is never written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { A, FIXTURE_DIR, FIXTURE_ZIP, SKIP, runImport, snapshot } from './helpers.ts';
import { REPORT_FILE } from '../../src/import/import-octoprint.ts';
import { PERMISSIONS } from '../../src/access/permissions.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const login = (s: TestServer, user: string, pass: string) => s.api('/api/login', { method: 'POST', json: { user, pass }, key: null });
const whoami = async (s: TestServer, key: string) => {
  const r = await s.api('/api/currentuser', { key });
  assert.equal(r.status, 200);
  return await r.json() as { name: string | null; permissions: string[]; groups: string[] };
};

/** alice's permissions in OctoPrint: groups users + operators (those Gantry knows). */
const ALICE_PERMISSIONS = new Set(['STATUS', 'CONNECTION', 'WEBCAM', 'FILES_LIST', 'FILES_UPLOAD', 'FILES_DOWNLOAD', 'FILES_DELETE',
  'FILES_SELECT', 'PRINT', 'GCODE_VIEWER', 'MONITOR_TERMINAL', 'CONTROL', 'SLICE', 'TIMELAPSE_LIST', 'TIMELAPSE_DOWNLOAD',
  'TIMELAPSE_DELETE', 'TIMELAPSE_MANAGE_UNRENDERED', 'TIMELAPSE_ADMIN', 'SETTINGS_READ', 'PLUGIN_ACTION_COMMAND_NOTIFICATION_SHOW',
  'PLUGIN_ACTION_COMMAND_NOTIFICATION_CLEAR', 'PLUGIN_ACTION_COMMAND_PROMPT_INTERACT', 'PLUGIN_APPKEYS_GRANT']);

test('base dir: users, passwords, keys, permissions, files, profiles and settings carry over; the source is untouched', { skip: SKIP }, async (t) => {
  const before = await snapshot(FIXTURE_DIR);
  const { baseDir, text } = await runImport(t, FIXTURE_DIR);
  assert.deepEqual(await snapshot(FIXTURE_DIR), before, 'the OctoPrint folder was not written');
  // OctoPrint's analysis as it was stored; the server re-analyses in the background with Gantry's own analyser.
  const meta = JSON.parse(await readFile(join(baseDir, 'uploads', '.metadata.json'), 'utf8')) as Json;
  assert.equal(Math.round(meta['prusaslicer-2.6.1_small.gcode'].analysis.estimatedPrintTime * 100) / 100, 48.86);
  assert.equal(Math.round(meta['prusaslicer-2.3.3_3dbenchy.gcode'].analysis.filament.tool0.length * 100) / 100, 4370.11);
  assert.equal(meta['prusaslicer-2.6.1_small.gcode'].statistics, undefined, 'statistics are derived from the history');
  // Several wrong passwords on purpose: the failed-login limit would refuse the later right ones.
  const s = await startTestServer(t, { baseDir, settings: { devel: { enableRateLimiter: false } } });
  assert.equal(s.apiKey, A.globalKey);

  // Passwords: Argon2id hashes from OctoPrint, replaced by Gantry's own at the first login.
  assert.equal((await login(s, 'admin', 'admin')).status, 403, 'OctoPrint\'s old admin password no longer works');
  assert.equal((await login(s, 'admin', A.users.admin.password)).status, 200);
  assert.equal((await login(s, 'alice', A.users.alice.password)).status, 200);
  assert.equal((await login(s, 'bob', A.users.bob.password)).status, 403, 'bob is inactive');
  const users = parse(await readFile(join(baseDir, 'users.yaml'), 'utf8')) as Record<string, { passwordHash: string }>;
  assert.match(users.admin.passwordHash, /^scrypt\$/, 'upgraded at login');
  assert.match(users.alice.passwordHash, /^scrypt\$/);
  assert.match(users.bob.passwordHash, /^scrypt\$/, 'the right password of an inactive user upgrades too');
  assert.equal((await login(s, 'admin', A.users.admin.password)).status, 200, 'the upgraded hash checks the same password');
  assert.equal((await login(s, 'admin', 'wrong')).status, 403);
  assert.equal((await s.api('/api/access/users/bob', { method: 'PUT', json: { active: true } })).status, 200);
  assert.equal((await login(s, 'bob', A.users.bob.password)).status, 200, 'bob\'s own hash came over too');

  // Keys: the same identities as on the OctoPrint instance.
  assert.equal((await whoami(s, A.globalKey)).name, '_api');
  for (const key of [A.users.admin.key, A.users.admin.appKey]) {
    const me = await whoami(s, key);
    assert.equal(me.name, 'admin');
    assert.deepEqual(new Set(me.permissions), new Set(PERMISSIONS.map((p) => p.key)));
  }
  for (const key of [A.users.alice.key, A.users.alice.appKey]) {
    const me = await whoami(s, key);
    assert.equal(me.name, 'alice');
    assert.deepEqual(new Set(me.permissions), ALICE_PERMISSIONS);
    assert.deepEqual(new Set(me.groups), new Set(['operators', 'users']));
    assert.equal((await s.api('/api/access/users', { key })).status, 403, 'alice is no admin');
    assert.equal((await s.api('/api/files', { key })).status, 200);
  }
  assert.equal((await s.api('/api/access/users', { key: A.users.admin.appKey })).status, 200);
  assert.equal((await s.api('/api/files', { key: 'ABCDEF0123456789ABCDEF0123456789' })).status, 403);
  const alice = await (await s.api('/api/access/users/alice/settings')).json() as Json;
  assert.deepEqual(alice, { interface: { language: 'de' } });
  const operators = await (await s.api('/api/access/groups/operators')).json() as Json;
  assert.equal(operators.name, 'Operators');
  assert.equal(operators.description, 'Machine operators (Workshop A)');
  assert.deepEqual(operators.permissions.map((p: Json) => (typeof p === 'string' ? p : p.key)).sort(), ['CONTROL', 'FILES_LIST', 'FILES_UPLOAD', 'PRINT', 'STATUS']);

  // Files with analysis, user data and history.
  const files = await (await s.api('/api/files?recursive=true')).json() as Json;
  const byName = new Map<string, Json>();
  const visit = (list: Json[]) => { for (const f of list) { if (f.type === 'folder') visit(f.children); else byName.set(f.path, f); } };
  visit(files.files);
  assert.deepEqual([...byName.keys()].sort(), ['parts/cura-2.3.1_puzzle_all.gcode', 'prusaslicer-2.3.3_3dbenchy.gcode', 'prusaslicer-2.6.1_small.gcode']);
  const small = byName.get('prusaslicer-2.6.1_small.gcode')!;
  assert.equal(small.hash, '1dfe6041118ac2d1405b1f91d55e5eb623404af4');
  assert.equal(small.size, 52414);
  assert.equal(small.date, Math.floor((await stat(join(FIXTURE_DIR, 'uploads', 'prusaslicer-2.6.1_small.gcode'))).mtimeMs / 1000), 'upload date kept');
  assert.equal(typeof small.gcodeAnalysis.estimatedPrintTime, 'number');
  assert.equal(small.prints.success, 1);
  assert.equal(small.prints.failure, 0);
  assert.equal(small.statistics.averagePrintTime.ender3, 23.6171374620003);
  assert.equal(small.statistics.lastPrintTime.ender3, 23.6171374620003);
  const benchy = byName.get('prusaslicer-2.3.3_3dbenchy.gcode')!;
  assert.deepEqual(benchy.userdata, { job: 'A-17', customer: 'Workshop A', spool: 3 });
  assert.ok(benchy.gcodeAnalysis.filament.tool0.length > 4000);
  assert.equal(benchy.prints, undefined);
  const puzzle = byName.get('parts/cura-2.3.1_puzzle_all.gcode')!;
  assert.equal(puzzle.prints.failure, 1);
  assert.equal(puzzle.prints.last.success, false);
  assert.equal(puzzle.gcodeAnalysis.dimensions.height, 23.8);

  // Printer profiles with the right default.
  const profiles = (await (await s.api('/api/printerprofiles')).json() as Json).profiles as Record<string, Json>;
  assert.deepEqual(Object.keys(profiles).sort(), ['_default', 'ender3']);
  assert.equal(profiles.ender3.default, true);
  assert.equal(profiles._default.default, false);
  assert.deepEqual([profiles.ender3.volume.width, profiles.ender3.volume.depth, profiles.ender3.volume.height], [220, 220, 250]);
  assert.equal(profiles.ender3.model, 'Creality Ender-3');

  // Settings.
  const st = await (await s.api('/api/settings')).json() as Json;
  assert.equal(st.appearance.name, 'Workshop A');
  assert.equal(st.appearance.color, 'red');
  assert.deepEqual(st.temperature.profiles.map((p: Json) => [p.name, p.extruder, p.bed]), [['ABS', 210, 100], ['PLA', 180, 60], ['PETG', 240, 80]]);
  assert.equal(st.serial.timeoutCommunication, 45);
  assert.equal(st.serial.timeoutConnection, 10, 'defaults where OctoPrint stored none');
  assert.equal(st.feature.sdSupport, false);
  assert.deepEqual(st.system.actions, [{ action: 'hello', name: 'Say hello', command: 'echo hello', confirm: false }]);
  assert.equal(st.webcam.streamUrl, 'http://127.0.0.1:8080/?action=stream');
  assert.equal(st.webcam.snapshotUrl, 'http://127.0.0.1:8080/?action=snapshot');
  assert.equal(st.scripts.gcode.afterPrintDone, 'M117 Workshop A: print done\nM84');
  assert.equal(st.plugins.discovery.upnpUuid, A.upnpUuid, 'Home Assistant keeps its device');

  // The report: printed and saved, naming what was not taken.
  const saved = await readFile(join(baseDir, REPORT_FILE), 'utf8');
  assert.equal(saved, text);
  for (const key of ['plugins.tracking.unique_id', 'server.secretKey', 'server.seenWizards.corewizard', 'PLUGIN_SOFTWAREUPDATE_CHECK']) {
    assert.ok(saved.includes(key), `report names ${key}`);
  }
});

test('backup zip: the same users, keys and files come over', { skip: SKIP }, async (t) => {
  const { baseDir } = await runImport(t, FIXTURE_ZIP);
  const s = await startTestServer(t, { baseDir });
  assert.equal((await login(s, 'alice', A.users.alice.password)).status, 200);
  assert.equal((await login(s, 'alice', 'alice-pass-2')).status, 403);
  assert.equal((await whoami(s, A.users.alice.appKey)).name, 'alice');
  assert.equal((await whoami(s, A.users.admin.key)).name, 'admin');
  assert.equal((await whoami(s, A.globalKey)).name, '_api');
  const small = await (await s.api('/api/files/local/prusaslicer-2.6.1_small.gcode')).json() as Json;
  assert.equal(small.prints.success, 1);
  assert.equal(small.hash, '1dfe6041118ac2d1405b1f91d55e5eb623404af4');
  assert.ok(small.date < Date.now() / 1000 - 600, 'the upload date recorded in the zip, not the import\'s');
  const profiles = (await (await s.api('/api/printerprofiles')).json() as Json).profiles as Record<string, Json>;
  assert.equal(profiles.ender3.default, true);
  assert.equal((await (await s.api('/api/settings')).json() as Json).appearance.name, 'Workshop A');
});
