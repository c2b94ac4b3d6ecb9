// The server parts the second web UI relies on: slicer thumbnails (found at analysis time, served as OctoPrint's
// PrusaSlicer-thumbnails plugin serves them), the print history endpoint, temperature presets refused with a 400 that
// names the field, and a login lockout that says how long it lasts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { uploadFile } from '../printer/job/helpers.ts';
import { waitFor } from '../printer/helpers.ts';
import { gcodeWithThumbnails, LARGE_PNG } from '../helpers/thumbnail-gcode.ts';
import { readThumbnail } from '../../src/files/analysis/thumbnails.ts';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from '../helpers/temp-dir.ts';

test('readThumbnail picks the largest PNG preview and skips JPG blocks; a file without one gives null', async (t) => {
  const dir = await tempDir(t, 'gantry-thumb-');
  await writeFile(join(dir, 'a.gcode'), gcodeWithThumbnails());
  await writeFile(join(dir, 'b.gcode'), 'G28\nG1 X1\n');
  const thumb = await readThumbnail(join(dir, 'a.gcode'));
  assert.deepEqual([thumb?.width, thumb?.height], [220, 124]);
  assert.ok(thumb?.png.equals(LARGE_PNG));
  assert.equal(await readThumbnail(join(dir, 'b.gcode')), null);
});

test('a G-code thumbnail is listed on the file entry and served with FILES_DOWNLOAD, also after a move', async (t) => {
  const s = await startTestServer(t);
  assert.equal((await uploadFile(s, 'benchy.gcode', gcodeWithThumbnails())).status, 201);
  assert.equal((await uploadFile(s, 'plain.gcode', 'G28\nG1 X1\n')).status, 201);
  type Entry = { thumbnail?: string; thumbnail_src?: string; gcodeAnalysis?: unknown };
  const entry = await waitFor('the analysis', async () => {
    const e = await (await s.api('/api/files/local/benchy.gcode')).json() as Entry;
    return e.gcodeAnalysis && e.thumbnail ? e : undefined;
  });
  assert.match(entry.thumbnail!, /^plugin\/prusaslicerthumbnails\/thumbnail\/benchy\.png\?\d+$/);
  assert.equal(entry.thumbnail_src, 'prusaslicerthumbnails');
  const png = await s.api(`/${entry.thumbnail}`);
  assert.equal(png.status, 200);
  assert.equal(png.headers.get('content-type'), 'image/png');
  assert.ok(Buffer.from(await png.arrayBuffer()).equals(LARGE_PNG));
  assert.equal((await s.api(`/${entry.thumbnail}`, { key: null })).status, 403, 'anonymous callers get no picture');
  await waitFor('plain analysed', async () => ((await (await s.api('/api/files/local/plain.gcode')).json()) as Entry).gcodeAnalysis);
  const plain = await (await s.api('/api/files/local/plain.gcode')).json() as Entry;
  assert.equal(plain.thumbnail, undefined, 'no preview, no field');
  assert.equal((await s.api('/plugin/prusaslicerthumbnails/thumbnail/plain.png')).status, 404);

  const form = new FormData();
  form.append('foldername', 'parts');
  assert.equal((await s.api('/api/files/local', { method: 'POST', body: form })).status, 201);
  assert.equal((await s.api('/api/files/local/benchy.gcode', { method: 'POST', json: { command: 'move', destination: 'parts' } })).status, 201);
  const moved = await (await s.api('/api/files/local/parts/benchy.gcode')).json() as Entry;
  assert.match(moved.thumbnail!, /^plugin\/prusaslicerthumbnails\/thumbnail\/parts\/benchy\.png\?\d+$/);
  assert.equal((await s.api(`/${moved.thumbnail}`)).status, 200);
});

test('the print history endpoint answers FILES_LIST callers with the recorded prints', async (t) => {
  const s = await startTestServer(t);
  const res = await s.api('/plugin/gantry/history');
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { prints: [] });
  assert.equal((await s.api('/plugin/gantry/history', { key: null })).status, 403);
});

test('a temperature preset below 0 °C or without a number is refused with a 400 naming the field; nothing is saved', async (t) => {
  const s = await startTestServer(t);
  const save = (profiles: unknown) => s.api('/api/settings', { method: 'POST', json: { temperature: { profiles } } });
  const bad = await save([{ name: 'PLA', extruder: 200, bed: 60 }, { name: 'Cold', extruder: 200, bed: -5 }]);
  assert.equal(bad.status, 400);
  assert.match(((await bad.json()) as { error: string }).error, /temperature\.profiles\.1\.bed/);
  assert.equal((await save([{ name: 'Blank', extruder: null, bed: 60 }])).status, 400);
  assert.equal((await save([{ name: ' ', extruder: 200, bed: 60 }])).status, 400);
  const now = await (await s.api('/api/settings')).json() as { temperature: { profiles: Array<{ name: string }> } };
  assert.deepEqual(now.temperature.profiles.map((p) => p.name), ['ABS', 'PLA']);
  assert.equal((await save([{ name: 'PETG', extruder: 240, bed: 80 }])).status, 200);
});

test('a locked-out login says for how long (Retry-After)', async (t) => {
  const s = await startTestServer(t);
  await s.access.users.addUser({ name: 'lou', password: 'right-password-1', groups: ['users'] });
  const login = (pass: string) => fetch(`${s.url}/api/login`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Api-Key': s.apiKey }, body: JSON.stringify({ user: 'lou', pass }) });
  for (let i = 0; i < 3; i++) assert.equal((await login('wrong')).status, 403);
  const locked = await login('right-password-1');
  assert.equal(locked.status, 429);
  const wait = Number(locked.headers.get('retry-after'));
  assert.ok(wait > 0 && wait <= 60, `Retry-After ${wait}`);
});
