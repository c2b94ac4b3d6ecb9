// Users and groups management API: permissions list, group and user CRUD, password, settings, personal keys, legacy paths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { startTestServer } from '../helpers/server.ts';
import { addUser, browserLogin, asBrowser } from './helpers.ts';

test('permissions are listed without credentials, in catalogue order with their records', async (t) => {
  const s = await startTestServer(t);
  const res = await s.api('/api/access/permissions', { key: null });
  assert.equal(res.status, 200);
  const { permissions } = await res.json() as { permissions: Array<Record<string, unknown>> };
  assert.deepEqual(permissions.slice(0, 3).map((p) => p.key), ['ADMIN', 'STATUS', 'CONNECTION']);
  assert.deepEqual(permissions.find((p) => p.key === 'FILES_LIST'), {
    key: 'FILES_LIST', name: 'File List', dangerous: false, default_groups: ['users', 'readonly'],
    description: 'Allows to retrieve a list of all uploaded files', needs: { role: ['files_list'] },
  });
  assert.equal(permissions.find((p) => p.key === 'PLUGIN_APPKEYS_GRANT')?.plugin, 'appkeys');
  assert.equal((await s.api('/api/access/permissions', { key: 'WRONG' })).status, 403, 'an invalid key is refused even here');
});

test('group CRUD with the rules of the default groups', async (t) => {
  const s = await startTestServer(t);
  const list = await (await s.api('/api/access/groups')).json() as { groups: Array<Record<string, unknown>> };
  assert.deepEqual(list.groups.map((g) => g.key), ['admins', 'users', 'guests', 'readonly']);
  const admins = list.groups[0];
  assert.equal(admins.dangerous, true);
  assert.equal(admins.changeable, false);
  assert.ok((admins.needs as { role: string[] }).role.includes('files_list'), 'ADMIN needs every role');
  assert.deepEqual((list.groups[1].needs as { group: string[] }).group, ['users']);

  const created = await s.api('/api/access/groups', { method: 'POST', json: { key: 'cam', name: 'Camera', permissions: ['WEBCAM'], subgroups: ['readonly'] } });
  assert.equal(created.status, 200);
  const afterCreate = await created.json() as { groups: Array<Record<string, unknown>> };
  const cam = afterCreate.groups.find((g) => g.key === 'cam');
  assert.deepEqual({ ...cam, needs: undefined }, {
    key: 'cam', name: 'Camera', description: '', permissions: ['WEBCAM'], subgroups: ['readonly'], needs: undefined,
    default: false, removable: true, changeable: true, toggleable: true, dangerous: false,
  });
  assert.deepEqual((cam?.needs as { group: string[] }).group.sort(), ['cam', 'readonly']);
  assert.equal((await s.api('/api/access/groups', { method: 'POST', json: { key: 'cam', name: 'Again', permissions: [] } })).status, 409);
  const noPerms = await s.api('/api/access/groups', { method: 'POST', json: { key: 'x', name: 'X' } });
  assert.equal(noPerms.status, 400);
  assert.deepEqual(await noPerms.json(), { error: 'permissions are missing' });
  const nope = await s.api('/api/access/groups', { method: 'POST', json: { key: 'y', name: 'Y', permissions: ['NOPE'] } });
  assert.deepEqual([nope.status, await nope.json()], [400, { error: 'Unknown permission: "NOPE"' }]);
  // A refused name is quoted cut short, not echoed whole.
  const huge = await s.api('/api/access/groups', { method: 'POST', json: { key: 'y', name: 'Y', permissions: ['N'.repeat(50_000)] } });
  assert.deepEqual([huge.status, await huge.json()], [400, { error: `Unknown permission: "${'N'.repeat(78)}…` }]);

  const got = await (await s.api('/api/access/groups/cam')).json() as { permissions: string[] };
  assert.deepEqual(got.permissions, ['WEBCAM']);
  const updated = await s.api('/api/access/groups/cam', { method: 'PUT', json: { permissions: ['WEBCAM', 'STATUS'], description: 'Watchers' } });
  assert.equal(updated.status, 200);
  const cam2 = (await updated.json() as { groups: Array<{ key: string; permissions: string[]; description: string }> }).groups.find((g) => g.key === 'cam');
  assert.deepEqual(cam2?.permissions, ['WEBCAM', 'STATUS']);
  assert.equal(cam2?.description, 'Watchers');
  assert.equal((await s.api('/api/access/groups/admins', { method: 'PUT', json: { permissions: [] } })).status, 403);
  assert.equal((await s.api('/api/access/groups/users', { method: 'DELETE' })).status, 403);
  assert.equal((await s.api('/api/access/groups/nope')).status, 404);
  assert.equal((await s.api('/api/access/groups/nope', { method: 'PUT', json: {} })).status, 404);
  // Dangerous permissions are stripped from guests.
  await s.api('/api/access/groups/guests', { method: 'PUT', json: { permissions: ['STATUS', 'SETTINGS'] } });
  assert.deepEqual((await (await s.api('/api/access/groups/guests')).json() as { permissions: string[] }).permissions, ['STATUS']);
  assert.equal((await s.api('/api/version', { key: null })).status, 200, 'guests with STATUS may read the version');

  const removed = await s.api('/api/access/groups/cam', { method: 'DELETE' });
  assert.equal(removed.status, 200);
  assert.ok(!(await removed.json() as { groups: Array<{ key: string }> }).groups.some((g) => g.key === 'cam'));
  assert.doesNotMatch(await readFile(`${s.baseDir}/groups.yaml`, 'utf8'), /\bcam:/);
});

test('user CRUD; records never carry the password hash', async (t) => {
  const s = await startTestServer(t);
  const created = await s.api('/api/access/users', { method: 'POST', json: { name: 'bob', password: 'pw-bob-12345', active: true } });
  assert.equal(created.status, 200);
  const users = (await created.json() as { users: Array<Record<string, unknown>> }).users;
  const bob = users.find((u) => u.name === 'bob');
  assert.deepEqual(bob?.groups, ['users'], 'default group');
  assert.ok(!JSON.stringify(users).includes('scrypt'));
  assert.equal((await s.api('/api/access/users', { method: 'POST', json: { name: 'bob', password: 'pw-bob-other', active: true } })).status, 409);
  const short = await s.api('/api/access/users', { method: 'POST', json: { name: 'carl', password: 'seven77', active: true } });
  assert.deepEqual([short.status, await short.json()], [400, { error: 'password must have at least 8 characters' }]);
  assert.equal(s.access.users.getUser('carl'), undefined, 'nobody was added');
  const noPw = await s.api('/api/access/users', { method: 'POST', json: { name: 'carl', active: true } });
  assert.deepEqual([noPw.status, await noPw.json()], [400, { error: 'password is missing' }]);
  const badName = await s.api('/api/access/users', { method: 'POST', json: { name: ' carl', password: 'pw-carl-12345', active: true } });
  assert.deepEqual([badName.status, await badName.json()], [400, { error: 'Username invalid' }]);

  const put = await s.api('/api/access/users/bob', { method: 'PUT', json: { groups: ['readonly'], permissions: ['WEBCAM'], active: true } });
  assert.equal(put.status, 200);
  const one = await (await s.api('/api/access/users/bob')).json() as Record<string, unknown>;
  assert.deepEqual([one.groups, one.permissions, one.admin], [['readonly'], ['WEBCAM'], false]);
  assert.equal((await s.api('/api/access/users/nobody')).status, 404);
  assert.equal((await s.api('/api/access/users/nobody', { method: 'PUT', json: { active: false } })).status, 404);
  const del = await s.api('/api/access/users/bob', { method: 'DELETE' });
  assert.equal(del.status, 200);
  assert.ok(!(await del.json() as { users: Array<{ name: string }> }).users.some((u) => u.name === 'bob'));
  assert.equal((await s.api('/api/access/users/bob', { method: 'DELETE' })).status, 404);
  assert.doesNotMatch(await readFile(s.paths.users, 'utf8'), /\bbob:/);
});

test('deactivating a user ends their sessions and refuses their key', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'pw-bob');
  const key = await s.access.users.generateUserKey('bob');
  const { jar } = await browserLogin(s, 'bob', 'pw-bob');
  await s.api('/api/access/users/bob', { method: 'PUT', json: { active: false } });
  assert.equal((await (await asBrowser(s, jar, '/api/currentuser')).json() as { name: unknown }).name, null);
  assert.equal((await s.api('/api/version', { key })).status, 403);
});

test('password changes: self needs the current password, admins do not, others are refused', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'pw-bob');
  await addUser(s, 'alice', 'pw-alice');
  const bobKey = await s.access.users.generateUserKey('bob');
  const change = (key: string | undefined, name: string, body: unknown) => s.api(`/api/access/users/${name}/password`, { key, method: 'PUT', json: body });
  const noCurrent = await change(bobKey, 'bob', { password: 'new-pw-1234' });
  assert.deepEqual([noCurrent.status, await noCurrent.json()], [400, { error: 'current password is missing' }]);
  const wrong = await change(bobKey, 'bob', { password: 'new-pw-1234', current: 'nope' });
  assert.deepEqual([wrong.status, await wrong.json()], [403, { error: 'Invalid current password' }]);
  const noNew = await change(bobKey, 'bob', { current: 'pw-bob' });
  assert.deepEqual([noNew.status, await noNew.json()], [400, { error: 'new password is missing' }]);
  assert.equal((await change(bobKey, 'alice', { password: 'x', current: 'pw-alice' })).status, 403);
  const short = await change(bobKey, 'bob', { password: 'new1', current: 'pw-bob' });
  assert.deepEqual([short.status, await short.json()], [400, { error: 'password must have at least 8 characters' }]);
  assert.ok(await s.access.checkCredentials('bob', 'pw-bob'), 'the old password stays');
  const ok = await change(bobKey, 'bob', { password: 'new-pw-1234', current: 'pw-bob' });
  assert.deepEqual([ok.status, await ok.json()], [200, {}]);
  assert.ok(await s.access.checkCredentials('bob', 'new-pw-1234'));
  assert.equal((await change(undefined, 'alice', { password: 'reset' })).status, 400, 'an admin reset follows the rule too');
  assert.equal((await change(undefined, 'alice', { password: 'reset-1234' })).status, 200, 'admin without current');
  assert.ok(await s.access.checkCredentials('alice', 'reset-1234'));
  assert.equal((await change(undefined, 'nobody', { password: 'x' })).status, 404);
});

test('user settings and personal API keys: self or admin', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'pw-bob');
  await addUser(s, 'alice', 'pw-alice');
  const bobKey = await s.access.users.generateUserKey('bob');
  assert.deepEqual(await (await s.api('/api/access/users/bob/settings', { key: bobKey })).json(), {});
  assert.equal((await s.api('/api/access/users/bob/settings', { key: bobKey, method: 'PATCH', json: { a: 1, b: { c: 2 } } })).status, 200);
  await s.api('/api/access/users/bob/settings', { key: bobKey, method: 'PATCH', json: { b: { d: 3 } } });
  assert.deepEqual(await (await s.api('/api/access/users/bob/settings', { key: bobKey })).json(), { a: 1, b: { d: 3 } }, 'shallow merge');
  assert.equal((await s.api('/api/access/users/alice/settings', { key: bobKey })).status, 403);
  assert.equal((await s.api('/api/access/users/alice', { key: bobKey })).status, 403);
  assert.equal((await s.api('/api/access/users/bob', { key: bobKey })).status, 200, 'own record');

  const gen = await s.api('/api/access/users/bob/apikey', { key: bobKey, method: 'POST' });
  const { apikey } = await gen.json() as { apikey: string };
  assert.match(apikey, /^[0-9A-F]{32}$/);
  assert.equal((await s.api('/api/version', { key: bobKey })).status, 403, 'the old key is replaced');
  assert.equal((await s.api('/api/version', { key: apikey })).status, 200);
  assert.equal((await s.api('/api/access/users/alice/apikey', { key: apikey, method: 'POST' })).status, 403);
  assert.deepEqual(await (await s.api('/api/access/users/bob/apikey', { key: apikey, method: 'DELETE' })).json(), {});
  assert.equal((await s.api('/api/version', { key: apikey })).status, 403);
  assert.equal((await s.api('/api/access/users/alice/apikey', { method: 'POST' })).status, 200, 'admin for another user');
});

test('legacy /api/users paths redirect with 307 to /api/access/users', async (t) => {
  const s = await startTestServer(t);
  const res = await s.api('/api/users/bob/settings?x=1', { redirect: 'manual' });
  assert.equal(res.status, 307);
  assert.equal(res.headers.get('location'), '/api/access/users/bob/settings?x=1');
  const followed = await s.api('/api/users', { method: 'POST', json: { name: 'dora', password: 'pw-dora-12345', active: true } });
  assert.equal(followed.status, 200, 'method and body survive the redirect');
  assert.ok(s.access.users.getUser('dora'));
});

test('the global API key is regenerated by admins only and the old key stops working', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'pw-bob');
  const bobKey = await s.access.users.generateUserKey('bob');
  assert.equal((await s.api('/api/settings/apikey', { key: bobKey, method: 'POST' })).status, 403);
  assert.equal((await s.api('/api/settings/apikey', { key: null, method: 'POST' })).status, 403);
  const res = await s.api('/api/settings/apikey', { method: 'POST' });
  assert.equal(res.status, 200);
  const { apikey } = await res.json() as { apikey: string };
  assert.match(apikey, /^[0-9A-F]{32}$/);
  assert.notEqual(apikey, s.apiKey);
  assert.equal((await s.api('/api/version')).status, 403);
  assert.equal((await s.api('/api/version', { key: apikey })).status, 200);
  assert.match(await readFile(s.paths.config, 'utf8'), new RegExp(apikey));
});
