// Names that are also JavaScript's object vocabulary (`__proto__`, `constructor`, `toString`) as group keys, user
// names and app-key owners: stored, listed and the same after a restart; group texts are bounded; a failed app-key
// write changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { startTestServer } from '../helpers/server.ts';
import { addUser, OffsetClock } from './helpers.ts';
import { AppKeyService } from '../../src/access/appkeys.ts';

const NAMES = ['__proto__', 'constructor', 'toString'];

test('groups keyed __proto__ / constructor / toString and app keys of users so named survive a restart', async (t) => {
  const s = await startTestServer(t);
  for (const key of NAMES) {
    const res = await s.api('/api/access/groups', { method: 'POST', json: { key, name: `Group ${key}`, permissions: ['WEBCAM'] } });
    assert.equal(res.status, 200, key);
  }
  await addUser(s, 'member', 'pw-member', NAMES);
  const appKeys: Record<string, string> = {};
  for (const user of ['constructor', 'toString']) {
    await addUser(s, user, `pw-${user}`, ['users']);
    const res = await s.api('/api/plugin/appkeys', { method: 'POST', json: { command: 'generate', app: 'Farm', user } });
    assert.equal(res.status, 200, `app key for ${user}`);
    appKeys[user] = (await res.json() as { api_key: string }).api_key;
  }

  // On disk as they are in memory: each name an own key of the YAML mappings.
  const groupsFile = parse(await readFile(join(s.baseDir, 'groups.yaml'), 'utf8')) as Record<string, { name: string }>;
  for (const key of NAMES) assert.equal(Object.hasOwn(groupsFile, key) && groupsFile[key].name, `Group ${key}`, key);
  const keysFile = parse(await readFile(join(s.baseDir, 'data', 'appkeys', 'keys.yaml'), 'utf8')) as Record<string, unknown>;
  assert.deepEqual(Object.keys(keysFile).sort(), ['constructor', 'toString']);

  await s.stop();
  const again = await startTestServer(t, { baseDir: s.baseDir });
  const groups = await (await again.api('/api/access/groups')).json() as { groups: Array<{ key: string; name: string }> };
  for (const key of NAMES) assert.equal(groups.groups.find((g) => g.key === key)?.name, `Group ${key}`, key);
  const member = await (await again.api('/api/access/users/member')).json() as { groups: string[]; needs: { role?: string[] } };
  assert.deepEqual(member.groups, NAMES);
  assert.ok(member.needs.role?.includes('webcam'), 'the groups still grant their permission');
  for (const [user, apiKey] of Object.entries(appKeys)) {
    const me = await again.api('/api/currentuser', { key: apiKey });
    assert.equal((await me.json() as { name: string }).name, user, `${user}'s app key after the restart`);
  }
  assert.equal(({} as Record<string, unknown>).total, undefined, 'Object.prototype untouched');
});

test('group keys, names and descriptions are bounded and single-line; refused ones change nothing', async (t) => {
  const s = await startTestServer(t);
  const groupsFile = join(s.baseDir, 'groups.yaml');
  const before = await readFile(groupsFile, 'utf8').catch(() => '');
  const refused: Array<[Record<string, unknown>, RegExp]> = [
    [{ key: 'k'.repeat(65), name: 'Long key' }, /key too long/],
    [{ key: 'a\nb: c', name: 'Line break' }, /key must not contain control characters/],
    [{ key: 'longname', name: 'n'.repeat(129) }, /name too long/],
    [{ key: 'tab', name: 'a\tb' }, /name must not contain control characters/],
    [{ key: 'longdesc', name: 'D', description: 'd'.repeat(2049) }, /description too long/],
  ];
  for (const [body, message] of refused) {
    const res = await s.api('/api/access/groups', { method: 'POST', json: { permissions: [], ...body } });
    assert.equal(res.status, 400, JSON.stringify(body).slice(0, 60));
    assert.match((await res.json() as { error: string }).error, message);
  }
  assert.equal(await readFile(groupsFile, 'utf8').catch(() => ''), before);
  assert.deepEqual(s.access.users.listGroups().map((g) => g.key), ['admins', 'users', 'guests', 'readonly']);

  const ok = await s.api('/api/access/groups', { method: 'POST', json: { key: 'k'.repeat(64), name: 'n'.repeat(128), description: 'one\ntwo', permissions: [] } });
  assert.equal(ok.status, 200);
  const tooLong = await s.api(`/api/access/groups/${'k'.repeat(64)}`, { method: 'PUT', json: { description: 'd'.repeat(2049) } });
  assert.equal(tooLong.status, 400);
  assert.equal(s.access.users.getGroup('k'.repeat(64))?.description, 'one\ntwo');
});

test('an app key whose write fails is not handed out and does not work', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-appkeys-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'keys.yaml');
  const service = new AppKeyService(path, new OffsetClock());
  await service.start();
  // A folder where the file should be: the atomic rename over it fails.
  await mkdir(path);
  await assert.rejects(service.generate('alice', 'Slicer'));
  assert.deepEqual(service.listKeys(), []);
  await rm(path, { recursive: true });
  const key = await service.generate('alice', 'Slicer');
  assert.deepEqual(service.listKeys(), [key]);
  assert.equal(service.ownerOf(key.apiKey), 'alice');
  // Two at once for one user and app give one key.
  const [a, b] = await Promise.all([service.generate('bob', 'Phone'), service.generate('bob', 'phone')]);
  assert.equal(a.apiKey, b.apiKey);
  assert.equal(service.listKeys('bob').length, 1);
  await service.stop();
});
