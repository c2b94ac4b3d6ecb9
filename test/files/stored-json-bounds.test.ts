// Client-written JSON that is stored (upload userdata, plugin settings, printer profiles) is bounded in depth and size
// like the user settings: deeper is a 400, larger a 413, and nothing of it reaches the disk or the listings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { GCODE, multipartBody, type FormPart } from './multipart.ts';
import type { TestServer } from '../helpers/server.ts';

function upload(s: TestServer, parts: FormPart[]): Promise<Response> {
  const { body, contentType } = multipartBody(parts);
  return s.api('/api/files/local', { method: 'POST', body, headers: { 'Content-Type': contentType } });
}
const fileParts = (filename: string, content: string, extra: FormPart[]): FormPart[] => [...extra, { name: 'file', filename, value: content }];

const nested = (n: number): string => '['.repeat(n) + ']'.repeat(n);

test('an upload whose userdata nests 5,000 levels is refused with 400 and the listings stay whole', async (t) => {
  const s = await startTestServer(t);
  const deep = await upload(s, fileParts('deep.gcode', GCODE, [{ name: 'userdata', value: nested(5000) }]));
  assert.equal(deep.status, 400);
  assert.deepEqual(await deep.json(), { error: 'userdata is nested deeper than 16 levels' });
  const huge = await upload(s, fileParts('huge.gcode', GCODE, [{ name: 'userdata', value: JSON.stringify({ s: 'x'.repeat(70_000) }) }]));
  assert.equal(huge.status, 413);
  assert.match(((await huge.json()) as { error: string }).error, /^userdata is larger than 65536 bytes$/);
  assert.equal((await upload(s, fileParts('fine.gcode', GCODE, [{ name: 'userdata', value: nested(16) }]))).status, 201);
  const list = await s.api('/api/files?recursive=true');
  assert.equal(list.status, 200);
  const names = ((await list.json()) as { files: Array<{ name: string }> }).files.map((f) => f.name);
  assert.deepEqual(names, ['fine.gcode'], 'refused uploads leave no file behind');
  assert.equal((await s.api('/api/files/local/fine.gcode')).status, 200);
});

test('plugin settings and printer profiles are bounded the same way', async (t) => {
  const s = await startTestServer(t);
  const post = (path: string, body: unknown, method = 'POST'): Promise<Response> =>
    s.api(path, { method, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });
  const deepValue = JSON.parse(nested(20)) as unknown;
  const plugin = await post('/api/settings', { plugins: { someplugin: { v: deepValue } } });
  assert.equal(plugin.status, 400);
  assert.match(((await plugin.json()) as { error: string }).error, /plugins\.someplugin is nested deeper than 16 levels/);
  const big = await post('/api/settings', { plugins: { someplugin: { v: 'x'.repeat(70_000) } } });
  assert.equal(big.status, 413);
  assert.equal((await post('/api/settings', { plugins: { someplugin: { v: JSON.parse(nested(10)) as unknown } } })).status, 200);

  const profile = await post('/api/printerprofiles', { profile: { id: 'deep', name: 'Deep', extra: deepValue } });
  assert.equal(profile.status, 400);
  assert.match(((await profile.json()) as { error: string }).error, /deeper than 16 levels/);
});

test('a value nested 5,000 levels already in a folder\'s .metadata.json is dropped on load; the listings answer 200', async (t) => {
  const baseDir = await mkdtemp(join(tmpdir(), 'gantry-deepmeta-'));
  t.after(() => rm(baseDir, { recursive: true, force: true }));
  const first = await startTestServer(undefined, { baseDir });
  assert.equal((await upload(first, fileParts('old.gcode', GCODE, []))).status, 201);
  await first.stop();
  const metaFile = join(baseDir, 'uploads', '.metadata.json');
  const meta = JSON.parse(await readFile(metaFile, 'utf8')) as Record<string, Record<string, unknown>>;
  // Written as text: JSON.stringify itself overflows the stack on such a value.
  const entry = JSON.stringify({ ...meta['old.gcode'], display: 'old.gcode' });
  await writeFile(metaFile, `{"old.gcode":${entry.slice(0, -1)},"userdata":${nested(5000)}}}`);
  const s = await startTestServer(t, { baseDir });
  const list = await s.api('/api/files?recursive=true');
  assert.equal(list.status, 200);
  const one = await s.api('/api/files/local/old.gcode');
  assert.equal(one.status, 200);
  assert.equal(((await one.json()) as { userdata?: unknown }).userdata, undefined);
});
