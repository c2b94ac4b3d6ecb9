// Issue 15 item 7: hostile shapes answer 4xx, never 500 — prototype command names, malformed multipart, deep nesting,
// names longer than a file system allows, URL names up to and over 255 bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { registeredRoutes } from '../../../src/http/auth.ts';
import { PROTO_NAMES } from '../../http/fuzz-engine.ts';
import { raw } from './raw.ts';

const B = 'robustboundary';
const filePart = (filename: string, content = 'G28\n') =>
  `--${B}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\n\r\n${content}\r\n--${B}--\r\n`;

async function upload(s: TestServer, body: string, type = `multipart/form-data; boundary=${B}`, path = '/api/files/local') {
  return raw(s.url + path, { method: 'POST', headers: { 'X-Api-Key': s.apiKey, 'Content-Type': type }, body });
}

const jsonPost = (s: TestServer, path: string, body: unknown, opts: { key?: string | null; method?: string } = {}) =>
  raw(s.url + path, { method: opts.method ?? 'POST', body: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'Content-Type': 'application/json', ...(opts.key === null ? {} : { 'X-Api-Key': opts.key ?? s.apiKey }) } });

test('prototype names as commands are 400 on the files command route, anonymous or not, and never 5xx on any route', async (t) => {
  const s = await startTestServer(t);
  assert.equal((await upload(s, filePart('cube.gcode'))).status, 201);
  for (const name of PROTO_NAMES) {
    for (const key of [null, s.apiKey]) {
      const r = await jsonPost(s, '/api/files/local/cube.gcode', { command: name }, { key });
      assert.equal(r.status, 400, `files command ${name} (key ${key ? 'yes' : 'no'}) → ${r.status} ${r.body}`);
      assert.ok((JSON.parse(r.body) as { error: string }).error);
    }
  }
  // Every route that takes a body, with every prototype name as its command (and as the values routes look up).
  const fill = (url: string) => url.replace(/:[^/]+/g, 'x').replace(/\*/g, 'x');
  for (const route of registeredRoutes(s.app).filter((r) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(r.method))) {
    for (const name of PROTO_NAMES) {
      const r = await jsonPost(s, fill(route.url), { command: name, action: name, name, profile: name, tool: name, port: name }, { method: route.method });
      assert.ok(r.status < 500, `${route.method} ${route.url} with ${name} → ${r.status} ${r.body}`);
    }
  }
});

test('a JSON body with a __proto__ key, or constructor holding prototype, is 400 saying so, and changes nothing', async (t) => {
  const s = await startTestServer(t);
  const before = await (await fetch(`${s.url}/api/settings`, { headers: { 'X-Api-Key': s.apiKey } })).text();
  for (const body of ['{"__proto__":{"admin":true}}', '{"appearance":{"__proto__":{"name":"x"}}}', '{"constructor":{"prototype":{"x":1}}}']) {
    const r = await jsonPost(s, '/api/settings', body);
    assert.equal(r.status, 400, body);
    assert.deepEqual(JSON.parse(r.body), { error: 'The JSON body has a key that is not allowed: __proto__, or constructor holding prototype' }, body);
  }
  // Broken JSON keeps OctoPrint's answer; a key merely named constructor is an ordinary key.
  assert.deepEqual(JSON.parse((await jsonPost(s, '/api/settings', '{"appearance":')).body), { error: 'Malformed JSON body in request' });
  assert.equal((await jsonPost(s, '/api/settings', '{"appearance":{"constructor":1}}')).status, 200);
  assert.equal(await (await fetch(`${s.url}/api/settings`, { headers: { 'X-Api-Key': s.apiKey } })).text(), before);
  assert.equal(({} as Record<string, unknown>).admin, undefined);
});

test('malformed multipart on /api/languages and /plugin/prusaslicer/import is 400 JSON, like the upload route', async (t) => {
  const s = await startTestServer(t);
  const cases: Array<[string, string, string]> = [
    ['no boundary', 'multipart/form-data', filePart('pack.zip')],
    ['empty boundary', 'multipart/form-data; boundary=', filePart('pack.zip')],
    ['wrong boundary', 'multipart/form-data; boundary=other', filePart('pack.zip')],
    ['truncated body', `multipart/form-data; boundary=${B}`, filePart('pack.zip', 'PK\x03\x04').slice(0, 70)],
    ['unterminated', `multipart/form-data; boundary=${B}`, `--${B}\r\nContent-Disposition: form-data; name="file"; filename="p.ini"\r\n\r\nlayer_height = 0.2\r\n`],
    ['empty body', `multipart/form-data; boundary=${B}`, ''],
  ];
  for (const path of ['/api/languages', '/plugin/prusaslicer/import', '/api/files/local']) {
    for (const [what, type, body] of cases) {
      const r = await upload(s, body, type, path);
      assert.equal(r.status, 400, `${path} ${what} → ${r.status} ${r.body}`);
      assert.ok((JSON.parse(r.body) as { error: string }).error, `${path} ${what}`);
    }
  }
  // Still serving after all of that.
  assert.equal((await raw(`${s.url}/api/languages`, { headers: { 'X-Api-Key': s.apiKey } })).status, 200);
});

test('deep nesting in settings and printer profiles is 400 and changes nothing', async (t) => {
  const s = await startTestServer(t);
  const deepObject = (d: number) => '{"a":'.repeat(d) + '1' + '}'.repeat(d);
  const deepArray = (d: number) => '['.repeat(d) + ']'.repeat(d);
  const before = await readFile(s.paths.config, 'utf8');
  for (const d of [100, 10_000]) {
    const r = await jsonPost(s, '/api/settings', `{"plugins":{"x":${deepObject(d)}}}`);
    assert.equal(r.status, 400, `settings depth ${d} → ${r.status} ${r.body}`);
  }
  assert.equal(await readFile(s.paths.config, 'utf8'), before);
  for (const [what, value] of [['object', deepObject(10_000)], ['object 2000', deepObject(2000)], ['array', deepArray(10_000)]]) {
    const add = await jsonPost(s, '/api/printerprofiles', `{"profile":{"id":"deep","name":"Deep","volume":${value}}}`);
    assert.equal(add.status, 400, `add with deep ${what} → ${add.status} ${add.body}`);
    const patch = await jsonPost(s, '/api/printerprofiles/_default', `{"profile":{"volume":${value}}}`, { method: 'PATCH' });
    assert.equal(patch.status, 400, `patch with deep ${what} → ${patch.status} ${patch.body}`);
  }
  const profiles = await (await s.api('/api/printerprofiles')).json() as { profiles: Record<string, { volume: { width: number } }> };
  assert.deepEqual(Object.keys(profiles.profiles), ['_default']);
  assert.equal(typeof profiles.profiles._default.volume.width, 'number');
  // Ordinary nesting still merges.
  const ok = await jsonPost(s, '/api/printerprofiles/_default', { profile: { volume: { width: 222 } } }, { method: 'PATCH' });
  assert.equal(ok.status, 200, ok.body);
});

test('names longer than 255 bytes are 400: upload, new folder, copy and move destinations', async (t) => {
  const s = await startTestServer(t);
  const long = 'n'.repeat(250) + 'é'.repeat(3) + '.gcode'; // 262 bytes, 259 characters
  const up = await upload(s, filePart(long));
  assert.equal(up.status, 400, `upload → ${up.status} ${up.body}`);
  const folder = await upload(s, `--${B}\r\nContent-Disposition: form-data; name="foldername"\r\n\r\n${'f'.repeat(300)}\r\n--${B}--\r\n`);
  assert.equal(folder.status, 400, `folder → ${folder.status} ${folder.body}`);
  const deepFolder = await upload(s, `--${B}\r\nContent-Disposition: form-data; name="foldername"\r\n\r\nok\r\n--${B}\r\nContent-Disposition: form-data; name="path"\r\n\r\n${'p'.repeat(300)}\r\n--${B}--\r\n`);
  assert.equal(deepFolder.status, 400, `folder in long path → ${deepFolder.status} ${deepFolder.body}`);
  assert.equal((await upload(s, filePart('ok.gcode'))).status, 201);
  for (const command of ['copy', 'move']) {
    for (const destination of ['d'.repeat(300) + '.gcode', `${'d'.repeat(300)}/ok.gcode`]) {
      const r = await jsonPost(s, '/api/files/local/ok.gcode', { command, destination });
      assert.equal(r.status, 400, `${command} to ${destination.length} chars → ${r.status} ${r.body}`);
    }
  }
  const list = await (await s.api('/api/files/local')).json() as { files: Array<{ name: string }> };
  assert.deepEqual(list.files.map((f) => f.name), ['ok.gcode']);
});

test('names in the URL: up to 255 bytes reach their route (a timelapse of a long file name), longer is 414, bad encoding 400, and a too-long profile id 400', async (t) => {
  const s = await startTestServer(t);
  const onlyError = (r: { body: string }, what: string) => assert.deepEqual(Object.keys(JSON.parse(r.body) as object), ['error'], `${what}: ${r.body}`);
  // A timelapse is named after its G-code file: 160 bytes here, over the router's default limit of 100 characters.
  const name = `${'Benchy_'.repeat(21)}_20261127.mp4`;
  const folder = s.paths.timelapse;
  await writeFile(join(folder, name), 'not really a video');
  const encoded = encodeURIComponent(name);
  assert.equal((await s.api(`/downloads/timelapse/${encoded}`)).status, 200);
  assert.equal((await s.api(`/api/timelapse/${encoded}`, { method: 'DELETE' })).status, 200);
  await assert.rejects(readFile(join(folder, name)), 'deleted');
  // The router counts decoded characters: 255 reach the route (no such log: 404), 256 are over the limit, and said so.
  const longest = await raw(`${s.url}/api/logs/${encodeURIComponent('é'.repeat(255))}`, { method: 'DELETE', headers: { 'X-Api-Key': s.apiKey } });
  assert.equal(longest.status, 404, longest.body);
  const tooLong = await raw(`${s.url}/api/logs/${encodeURIComponent('é'.repeat(256))}`, { method: 'DELETE', headers: { 'X-Api-Key': s.apiKey } });
  assert.equal(tooLong.status, 414);
  onlyError(tooLong, '414');
  const badEncoding = await raw(`${s.url}/api/logs/%E0%A4%A`, { headers: { 'X-Api-Key': s.apiKey } });
  assert.equal(badEncoding.status, 400);
  onlyError(badEncoding, 'bad percent-encoding');
  const profile = await jsonPost(s, '/api/printerprofiles', { profile: { id: 'p'.repeat(300), name: 'Long' } });
  assert.equal(profile.status, 400, `profile → ${profile.status} ${profile.body}`);
  onlyError(profile, 'profile id');
  const ids = Object.keys(((await (await s.api('/api/printerprofiles')).json()) as { profiles: Record<string, unknown> }).profiles);
  assert.deepEqual(ids, ['_default']);
});
