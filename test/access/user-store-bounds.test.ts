// Hostile user settings and failed writes: a refused or failed change leaves users.yaml and memory exactly as before,
// and user management keeps working afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rename, mkdir, writeFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { addUser } from './helpers.ts';

/** `{"deep": [[[…]]]}` with `levels` nested arrays. */
const deepBody = (levels: number): string => `{"deep":${'['.repeat(levels)}${']'.repeat(levels)}}`;

test('a read-only user PATCHing 5,000 nested arrays into their settings gets 400; nothing changes; management works', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'reader', 'pw-reader', ['readonly']);
  const key = await s.access.users.generateUserKey('reader');
  const ok = await s.api('/api/access/users/reader/settings', { key, method: 'PATCH', json: { interface: { language: 'de' } } });
  assert.equal(ok.status, 200);
  const usersFile = join(s.baseDir, 'users.yaml');
  const diskBefore = await readFile(usersFile, 'utf8');
  const memoryBefore = JSON.stringify(s.access.users.listUsers());

  // Too deep is a 400, too large a 413 (as for every stored value).
  for (const [body, status] of [[deepBody(5_000), 400], [deepBody(40), 400], [JSON.stringify({ big: 'x'.repeat(70_000) }), 413]] as const) {
    const res = await s.api('/api/access/users/reader/settings', { key, method: 'PATCH', body, headers: { 'Content-Type': 'application/json' } });
    assert.equal(res.status, status, body.slice(0, 40));
    const err = await res.json() as { error: string };
    assert.match(err.error, /settings/i);
  }
  assert.equal(await readFile(usersFile, 'utf8'), diskBefore);
  assert.equal(JSON.stringify(s.access.users.listUsers()), memoryBefore);

  // Everything user management does still works.
  assert.equal((await s.api('/api/access/users')).status, 200);
  assert.equal((await s.api('/api/access/users', { method: 'POST', json: { name: 'carl', password: 'pw-carl-1', active: true } })).status, 200);
  assert.equal((await s.api('/api/access/users/carl/password', { method: 'PUT', json: { password: 'pw-carl-2' } })).status, 200);
  assert.equal((await s.api('/api/access/users/carl/apikey', { method: 'POST' })).status, 200);
  assert.equal((await s.api('/api/access/users/reader/settings', { key })).status, 200);
  assert.deepEqual(await (await s.api('/api/access/users/reader/settings', { key })).json(), { interface: { language: 'de' } });
  assert.ok(await s.access.users.checkPassword('carl', 'pw-carl-2'));
});

test('a user-store write that fails on disk leaves memory as it was (no change that vanishes on restart)', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'pw-bob-1');
  const users = s.access.users;
  const usersFile = join(s.baseDir, 'users.yaml');
  const saved = await readFile(usersFile, 'utf8');
  // A non-empty folder where users.yaml was: the atomic rename fails, as a full or read-only disk would.
  await rename(usersFile, `${usersFile}.bak`);
  await mkdir(join(usersFile, 'blocker'), { recursive: true });
  const before = JSON.stringify(users.listUsers());
  await assert.rejects(users.setPassword('bob', 'pw-bob-2'));
  await assert.rejects(users.setSettings('bob', { a: 1 }));
  await assert.rejects(users.generateUserKey('bob'));
  await assert.rejects(users.updateUser('bob', { active: false }));
  await assert.rejects(users.addUser({ name: 'dave', password: 'pw-dave' }));
  await assert.rejects(users.removeUser('bob'));
  await assert.rejects(users.updateGroup('users', { description: 'changed' }).then(() => users.removeGroup('nonexistent')));
  assert.equal(JSON.stringify(users.listUsers()), before);
  assert.ok(await users.checkPassword('bob', 'pw-bob-1'), 'the old password still works');
  assert.equal(users.getUser('dave'), undefined);

  await rm(usersFile, { recursive: true });
  await writeFile(usersFile, saved);
  await users.setPassword('bob', 'pw-bob-3');
  assert.ok(await users.checkPassword('bob', 'pw-bob-3'));
  await users.load();
  assert.ok(await users.checkPassword('bob', 'pw-bob-3'), 'memory and disk agree');
});

test('five parallel creations of one user name: one wins, the others are refused, and the winner\'s password works', async (t) => {
  const s = await startTestServer(t);
  const results = await Promise.allSettled([1, 2, 3, 4, 5].map((i) => s.access.users.addUser({ name: 'same', password: `pw-${i}` })));
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
  const winner = results.findIndex((r) => r.status === 'fulfilled') + 1;
  assert.ok(await s.access.users.checkPassword('same', `pw-${winner}`));
  await s.access.users.load();
  assert.ok(await s.access.users.checkPassword('same', `pw-${winner}`), 'the same password on disk');
});
