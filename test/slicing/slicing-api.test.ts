// Slicing API with the real PrusaSlicer: slicer list, profile CRUD (overrides-only storage, default switching), import, 404 rows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { startTestServer } from '../helpers/server.ts';
import { cubeStl } from '../helpers/stl.ts';
import { needs } from '../helpers/tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

test('GET /api/slicing lists PrusaSlicer as configured and default', { skip: needs('prusa-slicer') }, async (t) => {
  const s = await startTestServer(t);
  const res = await s.api('/api/slicing');
  assert.equal(res.status, 200);
  const body = await res.json() as Json;
  assert.equal(body.prusaslicer.key, 'prusaslicer');
  assert.equal(body.prusaslicer.displayName, 'PrusaSlicer');
  assert.equal(body.prusaslicer.configured, true);
  assert.equal(body.prusaslicer.default, true);
  assert.equal(body.prusaslicer.sameDevice, true);
  assert.deepEqual(body.prusaslicer.profiles, {});
});

test('a slicer whose binary is missing is listed as not configured and its profiles are 404', { skip: needs('prusa-slicer') }, async (t) => {
  const s = await startTestServer(t, { settings: { slicing: { prusaSlicerPath: '/nonexistent/prusa-slicer' } } });
  const body = await (await s.api('/api/slicing')).json() as Json;
  assert.equal(body.prusaslicer.configured, false);
  assert.equal(body.prusaslicer.default, false);
  assert.equal((await s.api('/api/slicing/prusaslicer/profiles')).status, 404);
  // Pointing the setting at the real binary makes it configured without a restart.
  const set = await s.api('/api/settings', { method: 'POST', json: { slicing: { prusaSlicerPath: 'prusa-slicer' } } });
  assert.equal(set.status, 200);
  assert.equal((await set.json() as Json).slicing.prusaSlicerPath, 'prusa-slicer');
  let configured = false;
  for (let i = 0; i < 50 && !configured; i++) {
    configured = ((await (await s.api('/api/slicing')).json()) as Json).prusaslicer.configured;
    if (!configured) await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(configured, true);
});

test('profile CRUD: PUT 201 + Location, stored as overrides only, GET merges defaults, PATCH 200, default switching, DELETE 204', { skip: needs('prusa-slicer') }, async (t) => {
  const s = await startTestServer(t);
  const put = await s.api('/api/slicing/prusaslicer/profiles/fine', {
    method: 'PUT', json: { displayName: 'Fine', description: 'thin layers', data: { layer_height: 0.1, fill_density: '25%', nozzle_diameter: '0.4' } },
  });
  assert.equal(put.status, 201);
  const loc = put.headers.get('location') ?? '';
  assert.match(loc, /^http:\/\/127\.0\.0\.1:\d+\/api\/slicing\/prusaslicer\/profiles\/fine$/);
  assert.deepEqual(await put.json(), { displayName: 'Fine', description: 'thin layers', resource: loc });

  // On disk: only what differs from PrusaSlicer's defaults (nozzle_diameter 0.4 is the default).
  const stored = parse(await readFile(join(s.paths.slicingProfiles, 'prusaslicer', 'fine.profile'), 'utf8')) as Json;
  assert.deepEqual(stored.data, { layer_height: '0.1', fill_density: '25%' });

  const full = await (await s.api('/api/slicing/prusaslicer/profiles/fine')).json() as Json;
  assert.equal(full.key, 'fine');
  assert.equal(full.data.layer_height, '0.1');
  assert.equal(full.data.nozzle_diameter, '0.4');
  assert.ok(Object.keys(full.data).length > 100, 'retrieved data includes the defaults');
  assert.equal(full.default, false);
  assert.equal(full.resource, loc);

  const patch = await s.api('/api/slicing/prusaslicer/profiles/fine', { method: 'PATCH', json: { data: { perimeters: 4 }, default: true } });
  assert.equal(patch.status, 200);
  assert.equal((await patch.json() as Json).displayName, 'Fine');
  const after = await (await s.api('/api/slicing/prusaslicer/profiles/fine')).json() as Json;
  assert.equal(after.data.perimeters, '4');
  assert.equal(after.data.layer_height, '0.1');
  assert.equal(after.default, true);

  await s.api('/api/slicing/prusaslicer/profiles/coarse', { method: 'PUT', json: { displayName: 'Coarse', default: true, data: { layer_height: 0.3 } } });
  const list = await (await s.api('/api/slicing/prusaslicer/profiles')).json() as Json;
  assert.deepEqual(Object.keys(list).sort(), ['coarse', 'fine']);
  assert.equal(list.coarse.default, true);
  assert.equal(list.fine.default, false);
  assert.equal(list.fine.data, undefined, 'list entries carry no data');

  assert.equal((await s.api('/api/slicing/prusaslicer/profiles/coarse', { method: 'DELETE' })).status, 204);
  assert.equal((await s.api('/api/slicing/prusaslicer/profiles/coarse', { method: 'DELETE' })).status, 204, 'absent profile: still 204');
  assert.equal((await s.api('/api/slicing/prusaslicer/profiles/coarse')).status, 404);
});

test('parallel PATCHes of one profile are all kept, in memory and on disk', { skip: needs('prusa-slicer') }, async (t) => {
  const s = await startTestServer(t);
  const url = '/api/slicing/prusaslicer/profiles/fine';
  assert.equal((await s.api(url, { method: 'PUT', json: { displayName: 'Fine', data: { layer_height: 0.1 } } })).status, 201);
  const changes: Array<Record<string, unknown>> = [{ layer_height: 0.15 }, { fill_density: '35%' }, { perimeters: 5 }, { skirts: 2 }];
  const answers = await Promise.all(changes.map((data) => s.api(url, { method: 'PATCH', json: { data } })));
  assert.deepEqual(answers.map((r) => r.status), [200, 200, 200, 200]);
  // Before, each merged onto the stored copy as it was before all of them: the last written kept only its own change.
  const data = ((await (await s.api(url)).json()) as Json).data;
  assert.deepEqual([data.layer_height, data.fill_density, data.perimeters, data.skirts], ['0.15', '35%', '5', '2']);
  const stored = parse(await readFile(join(s.paths.slicingProfiles, 'prusaslicer', 'fine.profile'), 'utf8')) as Json;
  assert.deepEqual(stored.data, { layer_height: '0.15', fill_density: '35%', perimeters: '5', skirts: '2' });
});

test('unknown slicer and unknown profile rows answer 404; bad keys and values 400; SETTINGS needed to write', { skip: needs('prusa-slicer') }, async (t) => {
  const s = await startTestServer(t);
  assert.equal((await s.api('/api/slicing/cura/profiles')).status, 404);
  assert.equal((await s.api('/api/slicing/cura/profiles/x')).status, 404);
  assert.equal((await s.api('/api/slicing/cura/profiles/x', { method: 'PUT', json: {} })).status, 404);
  assert.equal((await s.api('/api/slicing/cura/profiles/x', { method: 'DELETE' })).status, 404);
  assert.equal((await s.api('/api/slicing/prusaslicer/profiles/nothere')).status, 404);
  assert.equal((await s.api('/api/slicing/prusaslicer/profiles/nothere', { method: 'PATCH', json: { displayName: 'x' } })).status, 404);
  assert.equal((await s.api('/api/slicing/prusaslicer/profiles/..%2Fescape', { method: 'PUT', json: {} })).status, 400);
  const inject = await s.api('/api/slicing/prusaslicer/profiles/evil', { method: 'PUT', json: { data: { layer_height: '0.2\nend_gcode = M112' } } });
  assert.equal(inject.status, 400, 'a newline in a value must not smuggle settings into the slicer config');
  await s.access.users.addUser({ name: 'op', password: 'pw', groups: ['users'] });
  const key = await s.access.users.generateUserKey('op');
  assert.equal((await s.api('/api/slicing', { key })).status, 200, 'operators may read');
  assert.equal((await s.api('/api/slicing/prusaslicer/profiles/x', { method: 'PUT', json: {}, key })).status, 403, 'but not write');
});

test('a native PrusaSlicer .ini imports as a profile', { skip: needs('prusa-slicer') }, async (t) => {
  const s = await startTestServer(t);
  const form = new FormData();
  form.set('file', new Blob(['# exported\nlayer_height = 0.15\nperimeters = 3\n']), 'my-pla.ini');
  form.set('displayName', 'My PLA');
  const res = await s.api('/plugin/prusaslicer/import', { method: 'POST', body: form });
  assert.equal(res.status, 201);
  const body = await res.json() as Json;
  assert.equal(body.key, 'my-pla');
  const full = await (await s.api('/api/slicing/prusaslicer/profiles/my-pla')).json() as Json;
  assert.equal(full.displayName, 'My PLA');
  assert.equal(full.data.layer_height, '0.15');
  const bad = new FormData();
  bad.set('file', new Blob(['[print:x]\nlayer_height = 0.2\n']), 'bundle.ini');
  assert.equal((await s.api('/plugin/prusaslicer/import', { method: 'POST', body: bad })).status, 400);
});

test('the service slices a real STL with a stored profile, reporting progress and events', { skip: needs('prusa-slicer') }, async (t) => {
  const s = await startTestServer(t);
  await s.api('/api/slicing/prusaslicer/profiles/quick', { method: 'PUT', json: { data: { layer_height: 0.3, fill_density: '10%' }, default: true } });
  const dir = await tempDir(t, 'gantry-slice-test-');
  const model = join(dir, 'cube.stl');
  await writeFile(model, cubeStl(10));
  const events: string[] = [];
  s.events.onAny('test', (name) => { if (String(name).startsWith('Slicing')) events.push(String(name)); });
  const progress: number[] = [];
  s.slicing.onProgress((p) => progress.push(p.progress));
  await s.slicing.ready();
  const job = s.slicing.slice({
    slicer: 'prusaslicer', source: { location: 'local', path: 'cube.stl', file: 'cube.stl' }, dest: { location: 'local', path: 'cube.gcode', file: 'cube.gcode' },
    printer: { volume: { width: 180, depth: 180, height: 180 }, extruder: { count: 1, nozzleDiameter: 0.4 } },
  }, model, join(dir, 'cube.gcode'));
  await job.done;
  const gcode = await readFile(join(dir, 'cube.gcode'), 'utf8');
  assert.match(gcode, /; layer_height = 0\.3/);
  assert.match(gcode, /; bed_shape = 0x0,180x0,180x180,0x180/);
  assert.match(gcode, /^G1 .*E/m);
  assert.deepEqual(events, ['SlicingStarted', 'SlicingDone']);
  assert.ok(progress.length >= 2 && progress[progress.length - 1] === 100, `progress ${progress.join(',')}`);
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i] >= progress[i - 1], 'progress never decreases');
});
