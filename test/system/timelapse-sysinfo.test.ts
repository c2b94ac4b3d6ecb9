// /api/timelapse (listing, download, delete of the timelapse folder) and /api/system/info, as OctoPod and FDM Monster read them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

test('timelapse: capture off, videos in the folder listed with OctoPrint fields (server-relative URLs), downloadable and deletable', async (t) => {
  const s = await startTestServer(t);
  const empty = await s.api('/api/timelapse');
  assert.equal(empty.status, 200);
  assert.deepEqual(await empty.json(), { config: { type: 'off' }, enabled: true, files: [] });
  assert.deepEqual(await (await s.api('/api/timelapse?unrendered=true')).json(), { config: { type: 'off' }, enabled: true, files: [], unrendered: [] });

  await writeFile(join(s.paths.timelapse, 'benchy_20261121.mp4'), Buffer.alloc(2048, 1));
  await writeFile(join(s.paths.timelapse, 'notes.txt'), 'not a video');
  const body = await (await s.api('/api/timelapse')).json() as Json;
  assert.equal(body.files.length, 1);
  const f = body.files[0];
  assert.equal(f.name, 'benchy_20261121.mp4');
  assert.equal(f.bytes, 2048);
  assert.equal(f.size, '2.0KB');
  assert.match(f.date, /^\d{4}-\d\d-\d\d \d\d:\d\d$/);
  assert.equal(f.url, '/downloads/timelapse/benchy_20261121.mp4');
  assert.equal('thumbnail' in f, false, 'no thumbnail key without a thumbnail file');

  const dl = await s.api('/downloads/timelapse/benchy_20261121.mp4');
  assert.equal(dl.status, 200);
  assert.equal((await dl.arrayBuffer()).byteLength, 2048);
  assert.equal((await s.api('/downloads/timelapse/notes.txt')).status, 404, 'only videos are served');
  assert.equal((await s.api('/downloads/timelapse/..%2Fconfig.yaml')).status, 404);
  assert.equal((await s.api('/api/timelapse/..%2Fconfig.yaml', { method: 'DELETE' })).status, 404);
  const del = await s.api('/api/timelapse/benchy_20261121.mp4', { method: 'DELETE' });
  assert.equal(del.status, 200, 'DELETE answers the listing');
  assert.deepEqual((await del.json() as Json).files, []);
  assert.deepEqual((await (await s.api('/api/timelapse')).json() as Json).files, []);
  assert.equal((await s.api('/api/timelapse', { key: null })).status, 403);
});

test('system info: flat keys for the host, runtime and printer; SYSTEM permission required', async (t) => {
  const s = await startTestServer(t);
  const res = await s.api('/api/system/info', { headers: { 'User-Agent': 'farm-manager/1.0' } });
  assert.equal(res.status, 200);
  const info = (await res.json() as Json).systeminfo as Json;
  assert.equal(info['octoprint.version'], '1.9.3');
  assert.equal(info['browser.user_agent'], 'farm-manager/1.0');
  assert.ok(info['env.hardware.cores'] >= 1);
  assert.ok(info['env.hardware.ram'] > 0);
  assert.equal(info['env.node.version'], process.versions.node);
  assert.equal(info['printer.state'], 'Offline');
  await s.access.users.addUser({ name: 'op', password: 'pw', groups: ['users'] });
  const key = await s.access.users.generateUserKey('op');
  assert.equal((await s.api('/api/system/info', { key })).status, 403);
});
