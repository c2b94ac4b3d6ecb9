// Foundation: version endpoints, key transports, anonymous 403, error shapes, doubled slashes, keep-alive, access control off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, Agent } from 'node:http';
import { startTestServer } from '../helpers/server.ts';

test('GET /api/version names OctoPrint first and Gantry second', async (t) => {
  const s = await startTestServer(t);
  const res = await s.api('/api/version');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  const body = await res.json() as { api: string; server: string; text: string };
  assert.equal(body.api, '0.1');
  assert.equal(body.server, '1.9.3');
  assert.match(body.text, /^OctoPrint 1\.9\.3 \(Gantry \d+\.\d+\.\d+\)$/);
  const server = await (await s.api('/api/server')).json() as { version: string; safemode: unknown };
  assert.deepEqual(server, { version: '1.9.3', safemode: null });
});

test('each API key transport works; a wrong key is 403 "Invalid API key"; no key is 403', async (t) => {
  const s = await startTestServer(t);
  assert.equal((await s.api('/api/version', { key: null, headers: { Authorization: `Bearer ${s.apiKey}` } })).status, 200);
  assert.equal((await s.api(`/api/version?apikey=${s.apiKey}`, { key: null })).status, 200);
  assert.equal((await s.api('/api/version')).status, 200);
  const bad = await s.api('/api/version', { key: 'NOTAKEY' });
  assert.equal(bad.status, 403);
  assert.deepEqual(await bad.json(), { error: 'Invalid API key' });
  const anon = await s.api('/api/version', { key: null });
  assert.equal(anon.status, 403);
  assert.equal(typeof (await anon.json() as { error: string }).error, 'string');
});

test('errors are JSON: unknown API path 404, malformed JSON 400', async (t) => {
  const s = await startTestServer(t);
  const nf = await s.api('/api/does-not-exist');
  assert.equal(nf.status, 404);
  assert.match(nf.headers.get('content-type') ?? '', /^application\/json/);
  assert.ok((await nf.json() as { error: string }).error);
  const bad = await s.api('/api/version', { method: 'POST', body: '{nope', headers: { 'Content-Type': 'application/json' } });
  assert.ok(bad.status === 400 || bad.status === 404 || bad.status === 405, `got ${bad.status}`);
  assert.ok((await bad.json() as { error: string }).error);
});

test('a doubled slash is answered as the single-slash path, not redirected', async (t) => {
  const s = await startTestServer(t);
  const res = await s.api('//api/version');
  assert.equal(res.status, 200);
  assert.equal(res.redirected, false);
});

test('connections are kept alive between requests', async (t) => {
  const s = await startTestServer(t);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  const ports: number[] = [];
  for (let i = 0; i < 3; i++) {
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${s.url}/api/version`, { agent, headers: { 'X-Api-Key': s.apiKey } }, (res) => {
        ports.push(res.socket.localPort ?? -1);
        assert.equal(res.headers.connection, 'keep-alive');
        res.resume();
        res.on('end', resolve);
      });
      req.on('error', reject);
      req.end();
    });
  }
  assert.equal(new Set(ports).size, 1, 'all requests should reuse one socket');
});

test('with access control off every caller is a full admin', async (t) => {
  const s = await startTestServer(t, { settings: { accessControl: { enabled: false } } });
  assert.equal((await s.api('/api/version', { key: null })).status, 200);
  assert.equal((await s.api('/api/version', { key: 'whatever' })).status, 200);
});
