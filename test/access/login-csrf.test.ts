// Login CSRF: another site cannot post the login form (it would log the visitor into the attacker's account); the
// web UI, scripts without a browser, API-key clients and CORS-enabled JSON logins keep working.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addUser } from './helpers.ts';

const form = (s: TestServer, headers: Record<string, string>, body = 'user=bob&pass=hunter22') => fetch(`${s.url}/api/login`, {
  method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers }, body,
});
const sessionCookie = (res: Response) => res.headers.getSetCookie().some((c) => /^session_P\d+=[^;]/.test(c));

test('cross-site login form posts are refused with the CSRF error and set no session', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  for (const headers of <Array<Record<string, string>>>[
    { Origin: 'http://evil.example' },
    { Origin: 'null' },
    { Referer: 'http://evil.example/page.html' },
    { 'Sec-Fetch-Site': 'cross-site', Origin: s.url },
    { Origin: `http://127.0.0.1:${s.port + 1}` },
  ]) {
    const res = await form(s, headers);
    assert.equal(res.status, 400, JSON.stringify(headers));
    assert.deepEqual(await res.json(), { error: 'CSRF validation failed' });
    assert.equal(sessionCookie(res), false);
  }
  // A cross-site JSON login (only possible after a CORS preflight) is refused too while CORS is off.
  const json = await fetch(`${s.url}/api/login`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', Origin: 'http://evil.example' }, body: JSON.stringify({ user: 'bob', pass: 'hunter22' }),
  });
  assert.equal(json.status, 400);
  // Refusals are not failed password attempts: bob can still log in.
  assert.equal((await form(s, { Origin: s.url })).status, 200);
});

test('same-origin browsers, programs without Origin, API-key clients and CORS JSON logins still log in', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  const sameOrigin = await form(s, { Origin: s.url, 'Sec-Fetch-Site': 'same-origin' });
  assert.equal(sameOrigin.status, 200);
  assert.ok(sessionCookie(sameOrigin));
  assert.equal((await form(s, { Referer: `${s.url}/login` })).status, 200);
  assert.equal((await form(s, {})).status, 200, 'curl and scripts send no Origin');
  // A passive login with an API key from a page elsewhere (a dashboard) is not a cookie login.
  const passive = await s.api('/api/login', { method: 'POST', json: { passive: true }, headers: { Origin: 'http://dashboard.example' } });
  assert.equal(passive.status, 200);
  await s.config.patch({ api: { allowCrossOrigin: true } });
  const cors = await fetch(`${s.url}/api/login`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', Origin: 'http://dashboard.example' }, body: JSON.stringify({ user: 'bob', pass: 'hunter22' }),
  });
  assert.equal(cors.status, 200);
  assert.equal((await form(s, { Origin: 'http://evil.example' })).status, 400, 'forms stay refused with CORS on');
});
