// CSRF double-submit for cookie sessions, and CORS only when api.allowCrossOrigin is on (never with credentials).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { addUser, browserLogin, asBrowser, CookieJar } from './helpers.ts';

test('the UI and login pages set a readable CSRF cookie', async (t) => {
  const s = await startTestServer(t);
  for (const page of ['/', '/login']) {
    const res = await fetch(s.url + page);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith(`csrf_token_P${s.port}=`));
    assert.ok(cookie, page);
    assert.doesNotMatch(cookie, /HttpOnly/i);
    assert.match(cookie, /Path=\//);
  }
});

test('cookie-authenticated POSTs need the matching X-CSRF-Token header', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'pw-bob');
  const { jar, csrf } = await browserLogin(s, 'bob', 'pw-bob');
  assert.ok(csrf);
  const path = '/api/access/users/bob/apikey';
  const missing = await asBrowser(s, jar, path, { method: 'POST', csrf: null });
  assert.deepEqual([missing.status, await missing.json()], [400, { error: 'CSRF validation failed' }]);
  const wrong = await asBrowser(s, jar, path, { method: 'POST', csrf: 'not-the-cookie' });
  assert.equal(wrong.status, 400);
  const noCookie = new CookieJar();
  for (const [k, v] of jar.cookies) if (!k.startsWith('csrf_token')) noCookie.cookies.set(k, v);
  assert.equal((await asBrowser(s, noCookie, path, { method: 'POST', csrf })).status, 400, 'header without cookie');
  assert.equal((await asBrowser(s, jar, path, { method: 'POST' })).status, 200);
  assert.equal((await asBrowser(s, jar, '/api/access/users/bob/settings', { csrf: null })).status, 200, 'GET needs no token');
  // An API key on the same request exempts it, even with the browser cookie present.
  const key = s.access.users.getUser('bob')?.apikey ?? '';
  assert.equal((await asBrowser(s, jar, path, { method: 'DELETE', csrf: null, headers: { 'X-Api-Key': key } })).status, 200);
  // The appkeys request is exempt by design (apps have no cookie to double-submit).
  assert.equal((await asBrowser(s, jar, '/plugin/appkeys/request', { method: 'POST', csrf: null, json: { app: 'A' } })).status, 201);
});

test('CSRF protection can be switched off in devel settings', async (t) => {
  const s = await startTestServer(t, { settings: { devel: { enableCsrfProtection: false } } });
  await addUser(s, 'bob', 'pw-bob');
  const { jar } = await browserLogin(s, 'bob', 'pw-bob');
  assert.equal((await asBrowser(s, jar, '/api/access/users/bob/apikey', { method: 'POST', csrf: null })).status, 200);
});

test('CORS off: no Access-Control headers on requests or preflights', async (t) => {
  const s = await startTestServer(t);
  const get = await s.api('/api/version', { headers: { Origin: 'http://elsewhere.example' } });
  assert.equal(get.status, 200);
  assert.equal(get.headers.get('access-control-allow-origin'), null);
  const pre = await fetch(`${s.url}/api/version`, {
    method: 'OPTIONS', headers: { Origin: 'http://elsewhere.example', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'X-Api-Key' },
  });
  assert.ok(pre.status < 500, `preflight status ${pre.status}`);
  for (const [name] of pre.headers) assert.doesNotMatch(name, /^access-control-/i);
});

test('CORS on: origin echoed, preflight answered, never Allow-Credentials', async (t) => {
  const s = await startTestServer(t, { settings: { api: { allowCrossOrigin: true } } });
  const origin = 'http://elsewhere.example';
  const get = await s.api('/api/version', { headers: { Origin: origin } });
  assert.equal(get.status, 200);
  assert.equal(get.headers.get('access-control-allow-origin'), origin);
  assert.equal(get.headers.get('access-control-allow-credentials'), null);
  const pre = await fetch(`${s.url}/api/files/local`, {
    method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'X-Api-Key, Content-Type' },
  });
  assert.ok(pre.status === 200 || pre.status === 204, `preflight status ${pre.status}`);
  assert.equal(pre.headers.get('access-control-allow-origin'), origin);
  assert.match(pre.headers.get('access-control-allow-methods') ?? '', /POST/);
  assert.match((pre.headers.get('access-control-allow-headers') ?? '').toLowerCase(), /x-api-key/);
  assert.equal(pre.headers.get('access-control-max-age'), '10');
  assert.equal(pre.headers.get('access-control-allow-credentials'), null);
  // Switching the setting off applies at once.
  await s.config.patch({ api: { allowCrossOrigin: false } });
  assert.equal((await s.api('/api/version', { headers: { Origin: origin } })).headers.get('access-control-allow-origin'), null);
});
