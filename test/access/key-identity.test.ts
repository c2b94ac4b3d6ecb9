// API-key identities are kept between requests (no permission set built per request): every change to a user, a
// group or a key applies to the very next request, and the global key, user keys and app keys still resolve.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { addUser } from './helpers.ts';

test('a user key\'s rights follow changes to the user, its groups and the key at once', async (t) => {
  const s = await startTestServer(t);
  await s.access.users.addGroup({ key: 'watchers', name: 'Watchers', description: 'status only', permissions: ['STATUS'], subgroups: [], default: false });
  await addUser(s, 'rita', 'pw-rita', ['watchers']);
  let key = await s.access.users.generateUserKey('rita');
  const status = async (path: string, k = key) => (await s.api(path, { key: k })).status;
  assert.equal(await status('/api/job'), 200);
  assert.equal(await status('/api/printer/command/custom'), 403, 'watchers lack CONTROL');
  assert.equal(s.access.identityForApiKey(key), s.access.identityForApiKey(key), 'one identity while nothing changed');

  // A group gains a permission: the next request has it.
  await s.access.users.updateGroup('watchers', { permissions: ['STATUS', 'CONTROL'] });
  assert.equal(await status('/api/printer/command/custom'), 200);
  // The user leaves every group: nothing but what the user holds itself.
  await s.access.users.updateUser('rita', { groups: [] });
  assert.equal(await status('/api/job'), 403);
  await s.access.users.updateUser('rita', { groups: ['watchers'], permissions: [] });
  assert.equal(await status('/api/job'), 200);
  // Deactivated: the key is refused; active again: accepted.
  await s.access.users.updateUser('rita', { active: false });
  assert.equal(await status('/api/job'), 403);
  await s.access.users.updateUser('rita', { active: true });
  assert.equal(await status('/api/job'), 200);
  // A new key replaces the old one at once.
  const old = key;
  key = await s.access.users.generateUserKey('rita');
  assert.equal(await status('/api/job', old), 403);
  assert.equal(await status('/api/job'), 200);
});

test('guests\' rights follow changes to the guests group at once', async (t) => {
  const s = await startTestServer(t);
  const anonymous = async () => (await s.api('/api/version', { key: null })).status;
  assert.equal(await anonymous(), 403);
  await s.access.users.updateGroup('guests', { permissions: ['STATUS'] });
  assert.equal(await anonymous(), 200);
  await s.access.users.updateGroup('guests', { permissions: [] });
  assert.equal(await anonymous(), 403);
});

test('the global key, a regenerated global key and keys of other lengths', async (t) => {
  const s = await startTestServer(t);
  assert.equal((await s.api('/api/version')).status, 200);
  for (const wrong of ['x', s.apiKey.slice(0, -1), `${s.apiKey}0`, s.apiKey.toLowerCase()]) {
    assert.equal((await s.api('/api/version', { key: wrong })).status, 403, wrong);
  }
  const old = s.apiKey;
  const fresh = await s.access.regenerateGlobalKey();
  assert.equal((await s.api('/api/version', { key: old })).status, 403);
  assert.equal((await s.api('/api/version', { key: fresh })).status, 200);
});

test('keys sent one after another on one kept-alive connection: each is checked, a revoked one stops at once', async (t) => {
  const s = await startTestServer(t);
  const { Agent, request } = await import('node:http');
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  let sockets = 0;
  const status = (path: string, key: string) => new Promise<number>((resolve, reject) => {
    const req = request(`${s.url}${path}`, { agent, headers: { 'X-Api-Key': key } }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode!)); });
    req.on('socket', () => { if (!req.reusedSocket) sockets++; });
    req.on('error', reject).end();
  });
  await s.access.users.addGroup({ key: 'watchers', name: 'Watchers', description: 'status only', permissions: ['STATUS'], subgroups: [], default: false });
  await addUser(s, 'rita', 'pw-rita', ['watchers']);
  const rita = await s.access.users.generateUserKey('rita');
  const admin = s.apiKey;
  assert.equal(await status('/api/printer/command/custom', admin), 200);
  assert.equal(await status('/api/printer/command/custom', rita), 403, 'rita\'s key on the connection admin\'s key used');
  assert.equal(await status('/api/printer/command/custom', admin), 200);
  assert.equal(await status('/api/job', rita), 200);
  assert.equal(await status('/api/job', rita.slice(0, -1)), 403);
  assert.equal(await status('/api/job', admin.toLowerCase()), 403);
  assert.equal(await status('/api/job', rita), 200);
  // Revoked between two requests of one connection: refused on the next.
  const fresh = await s.access.regenerateGlobalKey();
  assert.equal(await status('/api/version', admin), 403);
  assert.equal(await status('/api/version', admin), 403);
  assert.equal(await status('/api/version', fresh), 200);
  await s.access.users.generateUserKey('rita');
  assert.equal(await status('/api/job', rita), 403);
  assert.equal(sockets, 1, 'every request went over the one connection');
});
