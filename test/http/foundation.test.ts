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

test('a query parameter given twice keeps its first value, as Flask reads it (Fastify alone made an array: 400)', async (t) => {
  const s = await startTestServer(t);
  const form = new FormData();
  form.append('file', new Blob(['G1 X1\n']), 'a.gcode');
  form.append('path', 'dir');
  assert.equal((await s.api('/api/files/local', { method: 'POST', body: form })).status, 201);
  const listed = async (query: string): Promise<unknown> => {
    const res = await s.api(`/api/files?${query}`);
    assert.equal(res.status, 200, query);
    return ((await res.json()) as { files: Array<{ name: string; children?: unknown[] }> }).files.map((f) => [f.name, f.children?.length]);
  };
  assert.deepEqual(await listed('recursive=true&recursive=false'), [['dir', 1]]);
  assert.deepEqual(await listed('recursive=false&recursive=true'), [['dir', 0]]);
  assert.deepEqual(await listed('force=true&force=1&__proto__=1&a=1&a=2'), [['dir', 0]]);
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

test('at log level debug every request leaves one line with method, path, status and time in logs/gantry.log', async (t) => {
  const s = await startTestServer(t, { logLevel: 'debug' });
  await s.api(`/api/version?apikey=${s.apiKey}`, { key: null });
  await s.api('/api/does-not-exist');
  await s.stop();
  const { readFile } = await import('node:fs/promises');
  const lines = (await readFile(`${s.paths.logs}/gantry.log`, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  const requests = lines.filter((l) => l.msg === 'request');
  const version = requests.find((l) => l.path === '/api/version');
  assert.ok(version, 'request line for /api/version');
  assert.equal(version.method, 'GET');
  assert.equal(version.status, 200);
  assert.equal(typeof version.ms, 'number');
  assert.ok(!JSON.stringify(version).includes(s.apiKey), 'query strings (API keys) are not logged');
  assert.equal(requests.find((l) => l.path === '/api/does-not-exist')?.status, 404);
});

test('at the default info level requests are not logged one by one', async (t) => {
  const s = await startTestServer(t);
  assert.equal((await s.api('/api/version')).status, 200);
  await s.stop();
  const { readFile } = await import('node:fs/promises');
  const lines = (await readFile(`${s.paths.logs}/gantry.log`, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.ok(lines.some((l) => l.msg === 'Gantry listening'), 'the log file is JSON lines');
  assert.deepEqual(lines.filter((l) => l.msg === 'request'), []);
});

test('first run creates admin (admins + users) with only a password hash, and a global key', async (t) => {
  const s = await startTestServer(t, { fresh: true });
  const admin = s.access.users.getUser('admin');
  assert.ok(admin);
  assert.deepEqual(admin.groups, ['admins', 'users']);
  assert.match(admin.passwordHash, /^scrypt\$/);
  assert.match(s.apiKey, /^[0-9A-F]{32}$/);
  const { readFile } = await import('node:fs/promises');
  assert.match(await readFile(s.paths.users, 'utf8'), /admin:/);
});

test('config writes are atomic and keep keys the schema does not know', async (t) => {
  const { mkdtemp, writeFile, readFile, readdir, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { parse } = await import('yaml');
  const { ConfigStore } = await import('../../src/config/config-store.ts');
  const dir = await mkdtemp(`${tmpdir()}/gantry-config-`);
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = `${dir}/config.yaml`;
  await writeFile(file, 'plugins:\n  myplugin:\n    answer: 42\nserver:\n  port: 5123\n  madeUpKey: keep me\nsomeOtherTool:\n  x: [1, 2]\n');
  const store = await ConfigStore.load(file);
  // Many overlapping writes: the file always ends up complete and equal to the last one.
  await Promise.all(Array.from({ length: 20 }, (_, i) => store.patch({ appearance: { name: `printer ${i}` } })));
  const doc = parse(await readFile(file, 'utf8')) as Record<string, Record<string, unknown>>;
  assert.equal(doc.appearance.name, 'printer 19');
  assert.deepEqual(doc.plugins, { myplugin: { answer: 42 } });
  assert.equal(doc.server.madeUpKey, 'keep me');
  assert.equal(doc.server.port, 5123);
  assert.deepEqual(doc.someOtherTool, { x: [1, 2] });
  assert.deepEqual((await readdir(dir)).sort(), ['config.yaml'], 'no temp files left behind');
  // An invalid change is refused and leaves the file alone.
  const before = await readFile(file, 'utf8');
  await assert.rejects(store.patch({ server: { port: 'x' } }), /server\.port/);
  assert.equal(await readFile(file, 'utf8'), before);
});
