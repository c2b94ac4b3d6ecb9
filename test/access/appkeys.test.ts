// Application keys workflow: probe, request, poll, decision (allow, deny, wrong user, no permission), timeout, management.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addUser, browserLogin, asBrowser, OffsetClock, StillClock } from './helpers.ts';
import { waitFor } from '../helpers/wait.ts';

async function request(s: TestServer, body: unknown): Promise<{ res: Response; token: string; json: Record<string, string> }> {
  const res = await s.api('/plugin/appkeys/request', { key: null, method: 'POST', json: body });
  const json = await res.json() as Record<string, string>;
  return { res, token: json.app_token, json };
}

const poll = (s: TestServer, token: string) => s.api(`/plugin/appkeys/request/${token}`, { key: null });

test('probe answers 204 without auth', async (t) => {
  const s = await startTestServer(t);
  const res = await s.api('/plugin/appkeys/probe', { key: null });
  assert.equal(res.status, 204);
  assert.equal(await res.text(), '');
});

test('full workflow: request, pending poll, approval, key handed out once, key acts as the approver', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  const bobKey = await s.access.users.generateUserKey('bob');
  const seen: string[] = [];
  const ended: string[] = [];
  s.access.appKeys.onRequest((r) => seen.push(r.userToken));
  s.access.appKeys.onEnd((token) => ended.push(token));

  const { res, token, json } = await request(s, { app: 'Slicer X' });
  assert.equal(res.status, 201);
  assert.match(token, /^[0-9A-F]{32}$/);
  assert.equal(res.headers.get('location'), `${s.url}/plugin/appkeys/request/${token}`);
  assert.equal(json.auth_dialog, `${s.url}/plugin/appkeys/auth/${token}`);
  assert.equal(seen.length, 1);

  const pending = await poll(s, token);
  assert.equal(pending.status, 202);
  assert.deepEqual(await pending.json(), { message: 'Awaiting decision' });

  const list = await (await s.api('/api/plugin/appkeys', { key: bobKey })).json() as { keys: unknown[]; pending: Record<string, { app_id: string; user_token: string }> };
  assert.deepEqual(list.keys, []);
  const userToken = seen[0];
  assert.deepEqual(list.pending[userToken], { app_id: 'Slicer X', user_id: null, user_token: userToken });

  // Decided by a logged-in browser session (CSRF header from the cookie).
  const { jar } = await browserLogin(s, 'bob', 'hunter22');
  const decided = await asBrowser(s, jar, `/plugin/appkeys/decision/${userToken}`, { method: 'POST', json: { decision: true } });
  assert.equal(decided.status, 204);
  assert.deepEqual(ended, [userToken]);

  const granted = await poll(s, token);
  assert.equal(granted.status, 200);
  const { api_key: appKey } = await granted.json() as { api_key: string };
  assert.match(appKey, /^[0-9A-F]{32}$/);
  assert.equal((await poll(s, token)).status, 404, 'handed out only once');

  const me = await (await s.api('/api/currentuser', { key: appKey })).json() as { name: string };
  assert.equal(me.name, 'bob');
  const passive = await (await s.api('/api/login', { key: appKey, method: 'POST', json: { passive: true } })).json() as { name: string; session: string };
  assert.equal(passive.name, 'bob');
  assert.equal(s.access.identityForSession(passive.session)?.name, 'bob');

  // Persisted atomically in keys.yaml.
  const stored = await readFile(join(s.paths.data, 'appkeys', 'keys.yaml'), 'utf8');
  assert.match(stored, new RegExp(appKey));

  // The same app asking again (case-insensitively) gets the existing key.
  const again = await request(s, { app: 'slicer x' });
  const [userToken2] = seen.slice(1);
  assert.equal((await s.api(`/plugin/appkeys/decision/${userToken2}`, { key: bobKey, method: 'POST', json: { decision: true } })).status, 204);
  assert.deepEqual(await (await poll(s, again.token)).json(), { api_key: appKey });
});

test('request errors and decision errors', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  await addUser(s, 'rita', 'readonly-pw', ['readonly']);
  const bobKey = await s.access.users.generateUserKey('bob');
  const ritaKey = await s.access.users.generateUserKey('rita');
  const noApp = await s.api('/plugin/appkeys/request', { key: null, method: 'POST', json: {} });
  assert.equal(noApp.status, 400);
  assert.deepEqual(await noApp.json(), { error: 'No app name provided' });
  const garbage = await s.api('/plugin/appkeys/request', { key: null, method: 'POST', body: '{nope', headers: { 'Content-Type': 'application/json' } });
  assert.equal(garbage.status, 400);
  assert.equal((await poll(s, '0123456789ABCDEF0123456789ABCDEF')).status, 404);

  let userToken = '';
  s.access.appKeys.onRequest((r) => { userToken = r.userToken; });
  await request(s, { app: 'Phone' });
  const decide = (key: string | null, body: unknown, token = userToken) =>
    s.api(`/plugin/appkeys/decision/${token}`, { key, method: 'POST', json: body });
  assert.equal((await decide(null, { decision: true })).status, 403, 'anonymous');
  const missing = await decide(bobKey, {});
  assert.equal(missing.status, 400);
  assert.deepEqual(await missing.json(), { error: 'No decision provided' });
  const noGrant = await decide(ritaKey, { decision: true });
  assert.equal(noGrant.status, 403);
  assert.deepEqual(await noGrant.json(), { error: 'No permission to grant app access' });
  assert.equal((await decide(bobKey, { decision: true }, 'FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF')).status, 404);
});

test('deny drops the request; a request for another user cannot be decided by bob', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  await addUser(s, 'alice', 'alice-pw');
  const bobKey = await s.access.users.generateUserKey('bob');
  const aliceKey = await s.access.users.generateUserKey('alice');
  const tokens: string[] = [];
  s.access.appKeys.onRequest((r) => tokens.push(r.userToken));

  const denied = await request(s, { app: 'Phone' });
  assert.equal((await s.api(`/plugin/appkeys/decision/${tokens[0]}`, { key: bobKey, method: 'POST', json: { decision: false } })).status, 204);
  assert.equal((await poll(s, denied.token)).status, 404);

  const forAlice = await request(s, { app: 'Phone', user: 'alice' });
  assert.equal(forAlice.json.auth_dialog, `${s.url}/plugin/appkeys/auth/${forAlice.token}?user=alice`);
  const bobList = await (await s.api('/api/plugin/appkeys', { key: bobKey })).json() as { pending: object };
  assert.deepEqual(bobList.pending, {}, 'bob does not see a request addressed to alice');
  assert.equal((await s.api(`/plugin/appkeys/decision/${tokens[1]}`, { key: bobKey, method: 'POST', json: { decision: true } })).status, 404);
  assert.equal((await s.api(`/plugin/appkeys/decision/${tokens[1]}`, { key: aliceKey, method: 'POST', json: { decision: true } })).status, 204);
  const key = await (await poll(s, forAlice.token)).json() as { api_key: string };
  assert.equal((await (await s.api('/api/currentuser', { key: key.api_key })).json() as { name: string }).name, 'alice');
});

test('a request nobody polls times out', async (t) => {
  const clock = new OffsetClock();
  const s = await startTestServer(t, { clock });
  const ended: string[] = [];
  s.access.appKeys.onEnd((token) => ended.push(token));
  const { token } = await request(s, { app: 'Slow app' });
  clock.advance(4_000);
  assert.equal((await poll(s, token)).status, 202, 'polling keeps it alive');
  clock.advance(4_000);
  assert.equal((await poll(s, token)).status, 202);
  clock.advance(6_000);
  s.access.appKeys.sweep();
  assert.equal(ended.length, 1, 'UIs are told the request ended');
  assert.equal((await poll(s, token)).status, 404);
});

test('requests without credentials are bounded: one-line names of at most 256 characters, 10 waiting per address, 100 in all', async (t) => {
  // Still: the polled requests are 4 s of the clock old when polled, 1 s from their idle timeout, however long the
  // requests before took (a loaded machine's real time made some of them time out).
  const clock = new StillClock();
  const s = await startTestServer(t, { clock });
  const long = await request(s, { app: 'A'.repeat(257) });
  assert.equal(long.res.status, 400);
  assert.match(long.json.error, /app name/);
  assert.equal((await request(s, { app: 'Two\nlines' })).res.status, 400);
  assert.equal((await request(s, { app: 'A'.repeat(256) })).res.status, 201);
  const tokens: string[] = [];
  for (let i = 1; i < 10; i++) tokens.push((await request(s, { app: `App ${i}` })).token);
  const refused = await request(s, { app: 'Eleventh' });
  assert.equal(refused.res.status, 429);
  assert.deepEqual(refused.json, { error: 'Too many app key requests awaiting a decision, try again later' });
  // Polled ones stay (up to their 10 minutes); the unpolled first one ends after 5 s, which frees a place.
  clock.advance(4_000);
  for (const token of tokens) assert.equal((await poll(s, token)).status, 202);
  clock.advance(2_000);
  s.access.appKeys.sweep();
  assert.equal((await request(s, { app: 'Eleventh' })).res.status, 201);
  assert.equal((await request(s, { app: 'Twelfth' })).res.status, 429);
  assert.equal(Object.keys((await (await s.api('/api/plugin/appkeys')).json() as { pending: Record<string, unknown> }).pending).length, 10);
  // 90 more from other addresses make 100: then nobody gets one.
  for (let i = 0; i < 90; i++) s.access.appKeys.request(`App ${i}`, null, `10.0.${i >> 4}.${i & 15}`);
  assert.throws(() => s.access.appKeys.request('One more', null, '10.9.9.9'), /Too many app key requests/);
});

test('abandoned requests end by themselves, also after a spell without requests (the sweep runs only while some wait)', async (t) => {
  const clock = new OffsetClock();
  const s = await startTestServer(t, { clock });
  const ended: string[] = [];
  s.access.appKeys.onEnd((token) => ended.push(token));
  for (const app of ['First app', 'Second app']) {
    await request(s, { app });
    clock.advance(6_000);
    // Nobody calls sweep() here: the server's own timer must notice, within its 1 s round.
    await waitFor(`the end of the abandoned request of ${app}`, () => ended.length === (app === 'First app' ? 1 : 2), 5_000);
    const list = await (await s.api('/api/plugin/appkeys')).json() as { pending: Record<string, unknown> };
    assert.deepEqual(list.pending, {});
  }
});

test('the auth dialog redirects guests to the login page and shows allow/deny to a user who may grant', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  const { token } = await request(s, { app: 'Dialog app' });
  const anon = await fetch(`${s.url}/plugin/appkeys/auth/${token}`, { redirect: 'manual' });
  assert.equal(anon.status, 302);
  assert.match(anon.headers.get('location') ?? '', /^\/login\?redirect=.*&permissions=PLUGIN_APPKEYS_GRANT$/);
  const { jar } = await browserLogin(s, 'bob', 'hunter22');
  const page = await asBrowser(s, jar, `/plugin/appkeys/auth/${token}`);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /Dialog app/);
  assert.equal((await fetch(`${s.url}/plugin/appkeys/auth/FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF`)).status, 404);
});

test('key management: generate, list, revoke; keys survive a restart and die with their user', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  await addUser(s, 'alice', 'alice-pw');
  const bobKey = await s.access.users.generateUserKey('bob');
  const gen = await s.api('/api/plugin/appkeys', { key: bobKey, method: 'POST', json: { command: 'generate', app: 'Script' } });
  assert.equal(gen.status, 200);
  const made = await gen.json() as { user_id: string; app_id: string; api_key: string };
  assert.equal(made.user_id, 'bob');
  assert.equal(made.app_id, 'Script');
  const reuse = await (await s.api('/api/plugin/appkeys', { key: bobKey, method: 'POST', json: { command: 'generate', app: 'SCRIPT' } })).json() as { api_key: string; app_id: string };
  assert.equal(reuse.api_key, made.api_key);
  assert.equal(reuse.app_id, 'SCRIPT');
  assert.equal((await s.api('/api/plugin/appkeys', { key: bobKey, method: 'POST', json: { command: 'generate', app: 'X', user: 'alice' } })).status, 403);
  const adminMade = await s.api('/api/plugin/appkeys', { method: 'POST', json: { command: 'generate', app: 'X', user: 'alice' } });
  assert.equal(adminMade.status, 200);
  const aliceKey = (await adminMade.json() as { api_key: string }).api_key;
  const bogus = await s.api('/api/plugin/appkeys', { key: bobKey, method: 'POST', json: { command: 'bogus' } });
  assert.deepEqual([bogus.status, await bogus.json()], [400, { error: 'command is invalid' }]);
  const none = await s.api('/api/plugin/appkeys', { key: bobKey, method: 'POST', json: {} });
  assert.deepEqual([none.status, await none.json()], [400, { error: 'command is invalid' }]);
  const noApp = await s.api('/api/plugin/appkeys', { key: bobKey, method: 'POST', json: { command: 'generate' } });
  assert.deepEqual([noApp.status, await noApp.json()], [400, { error: 'Mandatory parameters missing' }]);
  assert.equal((await s.api('/api/plugin/appkeys', { key: null })).status, 403);

  const mine = await (await s.api('/api/plugin/appkeys?all=true', { key: bobKey })).json() as { keys: Array<{ user_id: string }> };
  assert.deepEqual(mine.keys.map((k) => k.user_id), ['bob'], 'non-admins only see their own keys');
  const all = await (await s.api('/api/plugin/appkeys?all=true')).json() as { keys: Array<{ user_id: string }> };
  assert.deepEqual(all.keys.map((k) => k.user_id).sort(), ['alice', 'bob']);

  // Bob may not revoke alice's key; the admin may; unknown keys are fine.
  assert.equal((await s.api('/api/plugin/appkeys', { key: bobKey, method: 'POST', json: { command: 'revoke', key: aliceKey } })).status, 403);
  assert.equal((await s.api('/api/plugin/appkeys', { key: bobKey, method: 'POST', json: { command: 'revoke', key: 'NOPE' } })).status, 204);
  assert.equal((await s.api('/api/version', { key: made.api_key })).status, 200);
  assert.equal((await s.api('/api/plugin/appkeys', { key: bobKey, method: 'POST', json: { command: 'revoke', key: made.api_key } })).status, 204);
  const revoked = await s.api('/api/version', { key: made.api_key });
  assert.equal(revoked.status, 403);
  assert.deepEqual(await revoked.json(), { error: 'Invalid API key' });

  // Restart on the same base dir: alice's key still works; removing alice kills it.
  await s.stop();
  const s2 = await startTestServer(t, { baseDir: s.baseDir });
  assert.equal((await s2.api('/api/currentuser', { key: aliceKey }).then((r) => r.json()) as { name: string }).name, 'alice');
  await s2.access.users.removeUser('alice');
  assert.equal((await s2.api('/api/version', { key: aliceKey })).status, 403);
});
