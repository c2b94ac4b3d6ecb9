// Header credentials from a trusted proxy: HTTP Basic (with or without password check) and the remote-user header.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { addUser } from './helpers.ts';

const basic = (user: string, pass: string) => ({ Authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` });

test('Basic credentials are ignored unless trusted', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'pw-bob');
  assert.equal((await s.api('/api/version', { key: null, headers: basic('bob', 'pw-bob') })).status, 403);
});

test('trusted Basic credentials log the user in; wrong ones are refused with a clear message', async (t) => {
  const s = await startTestServer(t, { settings: { accessControl: { trustBasicAuthentication: true } } });
  await addUser(s, 'bob', 'pw-bob');
  const me = await (await s.api('/api/currentuser', { key: null, headers: basic('bob', 'pw-bob') })).json() as { name: string };
  assert.equal(me.name, 'bob');
  const wrong = await s.api('/api/currentuser', { key: null, headers: basic('bob', 'nope') });
  assert.deepEqual([wrong.status, await wrong.json()], [403, { error: 'Invalid credentials in Basic Authorization header' }]);
  const login = await (await s.api('/api/login', { key: null, method: 'POST', json: { passive: true }, headers: basic('bob', 'pw-bob') })).json() as { name: string; session: string; _login_mechanism: string };
  assert.equal(login.name, 'bob');
  assert.equal(login._login_mechanism, 'basic_auth');
  assert.equal(s.access.identityForSession(login.session)?.name, 'bob');

  await s.config.patch({ accessControl: { checkBasicAuthenticationPassword: false } });
  const proxied = await (await s.api('/api/currentuser', { key: null, headers: basic('bob', 'whatever') })).json() as { name: string };
  assert.equal(proxied.name, 'bob', 'a trusted proxy vouches for the user');
  assert.equal((await s.api('/api/currentuser', { key: null, headers: basic('ghost', 'x') })).status, 403);
});

test('a trusted remote-user header names the user; untrusted it is ignored', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'pw-bob');
  assert.equal((await s.api('/api/version', { key: null, headers: { 'Remote-User': 'bob' } })).status, 403);
  await s.config.patch({ accessControl: { trustRemoteUser: true } });
  const me = await (await s.api('/api/currentuser', { key: null, headers: { 'Remote-User': 'bob' } })).json() as { name: string };
  assert.equal(me.name, 'bob');
  assert.equal((await s.api('/api/version', { key: null, headers: { 'Remote-User': 'ghost' } })).status, 403);
  // Header-authenticated requests need no CSRF token even with a stale browser cookie.
  const res = await s.api('/api/access/users/bob/apikey', { key: null, method: 'POST', headers: { 'Remote-User': 'bob', Cookie: `session_P${s.port}=stale` } });
  assert.equal(res.status, 200);
});
