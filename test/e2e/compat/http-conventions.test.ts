// Wire conventions every client leans on: JSON errors with the right status (404 vs 405), CORS-off preflights,
// Content-Type on JSON answers, 204 with an empty body, double-slash URLs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { server, json } from './helpers.ts';

test('a wrong method on a known /api path is 405 JSON (not 404), without cache headers', async (t) => {
  const s = await server(t);
  for (const [method, path, allow] of [
    ['GET', '/api/login', 'POST'],
    ['DELETE', '/api/version', 'GET'],
    ['PUT', '/api/files/local', 'POST'],
    ['PATCH', '/api/job', 'POST'],
    ['POST', '/plugin/appkeys/probe', 'GET'],
    ['GET', '/plugin/appkeys/decision/0123', 'POST'],
  ] as const) {
    const res = await s.api(path, { method });
    assert.equal(res.status, 405, `${method} ${path}`);
    const body = await json<{ error: string }>(res);
    assert.equal(body.error, 'The method is not allowed for the requested URL.');
    assert.ok(res.headers.get('allow')?.split(', ').includes(allow), `${method} ${path} Allow: ${res.headers.get('allow')}`);
    assert.equal(res.headers.get('cache-control'), null, `${method} ${path}`);
  }
});

test('an unknown /api path is 404 JSON without cache headers; unknown pages stay HTML', async (t) => {
  const s = await server(t);
  for (const path of ['/api/nothing', '/api/plugin/psucontrol/x', '/plugin/nothing/here']) {
    const res = await s.api(path);
    assert.equal(res.status, 404, path);
    assert.equal(typeof (await json<{ error: string }>(res)).error, 'string');
    assert.equal(res.headers.get('cache-control'), null, path);
  }
  const page = await fetch(`${s.url}/no/such/page`);
  assert.equal(page.status, 404);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  // A route-level 404 (a missing file) is inside the API and keeps its cache headers.
  const missing = await s.api('/api/files/local/nope.gcode');
  assert.equal(missing.status, 404);
  assert.equal(missing.headers.get('cache-control'), 'max-age=0');
});

test('CORS off: a preflight to a known path is 200 with an empty body and no Access-Control-* headers', async (t) => {
  const s = await server(t);
  const res = await fetch(`${s.url}/api/version`, {
    method: 'OPTIONS', headers: { Origin: 'http://dashboard.example', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'X-Api-Key' },
  });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), '');
  for (const [k] of res.headers) assert.ok(!k.startsWith('access-control-'), k);
  const plain = await fetch(`${s.url}/api/version`, { headers: { Origin: 'http://dashboard.example', 'X-Api-Key': s.apiKey } });
  assert.equal(plain.status, 200);
  assert.equal(plain.headers.get('access-control-allow-origin'), null);
  assert.equal((await fetch(`${s.url}/api/nothing`, { method: 'OPTIONS' })).status, 404);
});

test('CORS on: the preflight echoes origin and method', async (t) => {
  const s = await server(t, { api: { allowCrossOrigin: true } });
  const res = await fetch(`${s.url}/api/version`, {
    method: 'OPTIONS', headers: { Origin: 'http://dashboard.example', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'X-Api-Key' },
  });
  assert.ok(res.status === 200 || res.status === 204, String(res.status));
  assert.equal(res.headers.get('access-control-allow-origin'), 'http://dashboard.example');
  assert.equal(res.headers.get('access-control-allow-credentials'), null);
});

test('every JSON answer a client parses says application/json (aiohttp), errors included', async (t) => {
  const s = await server(t);
  for (const path of ['/api/version', '/api/server', '/api/settings', '/api/job', '/api/connection', '/api/files', '/api/files/local',
    '/api/printerprofiles', '/api/currentuser', '/api/system/commands', '/api/access/users', '/api/printer/command/custom', '/api/printer']) {
    const res = await s.api(path);
    const body = await json(res);
    assert.equal(typeof body, 'object', path);
  }
  const forbidden = await s.api('/api/job', { key: 'WRONG' });
  assert.equal(forbidden.status, 403);
  assert.equal((await json<{ error: string }>(forbidden)).error, 'Invalid API key');
  const anonymous = await s.api('/api/job', { key: null });
  assert.equal(anonymous.status, 403, 'never 401');
  await json(anonymous);
  const badCommand = await s.api('/api/job', { method: 'POST', json: { command: 'dance' } });
  assert.equal(badCommand.status, 400);
  await json(badCommand);
});

test('double-slash URLs are answered directly (no redirect), as pyoctoprintapi builds them', async (t) => {
  const s = await server(t);
  const res = await fetch(`${s.url}//api/version`, { headers: { 'X-Api-Key': s.apiKey }, redirect: 'manual' });
  assert.equal(res.status, 200);
  assert.ok((await json<{ text: string }>(res)).text.startsWith('OctoPrint'));
  const q = await fetch(`${s.url}//api/printer//command/custom?x=a//b`, { headers: { 'X-Api-Key': s.apiKey }, redirect: 'manual' });
  assert.equal(q.status, 200);
});
