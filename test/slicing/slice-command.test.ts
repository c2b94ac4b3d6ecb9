// End to end: upload an STL, slice it through the files API with the real PrusaSlicer, and print the G-code on the virtual printer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer, waitFor } from '../printer/helpers.ts';
import { uploadFile, recorder, job, type Json } from '../printer/job/helpers.ts';
import { cubeStl } from '../helpers/stl.ts';
import { rawClient, userWithKey } from '../push/push-clients.ts';
import { needs } from '../helpers/tools.ts';

test('STL upload → slice (202 + Location) → analysed G-code in the store → printed to completion', { skip: needs('prusa-slicer') }, async (t) => {
  const s = await connectedServer(t);
  const rec = recorder(s);
  const up = await uploadFile(s, 'cube.stl', cubeStl(8));
  assert.equal(up.status, 201, 'model files are accepted once a slicer is installed');
  const entry = await (await s.api('/api/files/local/cube.stl')).json() as Json;
  assert.deepEqual(entry.typePath, ['model', 'stl']);

  await s.api('/api/slicing/prusaslicer/profiles/draft', { method: 'PUT', json: { data: { layer_height: 0.3, fill_density: '10%', perimeters: 1 } } });
  const progress: number[] = [];
  s.slicing.onProgress((p) => progress.push(p.progress));
  // Push clients see the progress as slicingProgress messages.
  const { auth } = await userWithKey(s, 'slicer-watcher');
  const push = await rawClient(s);
  t.after(() => push.close());
  push.send({ auth });
  await push.next('history');
  const res = await s.api('/api/files/local/cube.stl', {
    method: 'POST',
    json: { command: 'slice', slicer: 'prusaslicer', profile: 'draft', destination: 'cube-draft.gcode', print: true, 'profile.skirts': 0 },
  });
  assert.equal(res.status, 202);
  const body = await res.json() as Json;
  assert.equal(body.name, 'cube-draft.gcode');
  assert.equal(body.origin, 'local');
  assert.match(res.headers.get('location') ?? '', /\/api\/files\/local\/cube-draft\.gcode$/);

  await waitFor('SlicingDone', () => rec.names().includes('SlicingDone') || undefined, 120_000);
  await waitFor('PrintStarted', () => rec.names().includes('PrintStarted') || undefined, 30_000);
  const started = rec.events.find((e) => e.name === 'PrintStarted')!;
  assert.equal(started.payload.path, 'cube-draft.gcode');
  await waitFor('PrintDone', () => rec.names().includes('PrintDone') || undefined, 120_000);

  const gcode = await (await s.api('/downloads/files/local/cube-draft.gcode')).text();
  assert.match(gcode, /; layer_height = 0\.3/);
  assert.match(gcode, /; skirts = 0/);
  const stored = await waitFor('analysis', async () => {
    const f = await (await s.api('/api/files/local/cube-draft.gcode')).json() as Json;
    return f.gcodeAnalysis?.estimatedPrintTime ? f : undefined;
  }, 60_000);
  assert.ok(stored.gcodeAnalysis.filament.tool0.length > 0);
  assert.ok(progress.length > 0 && progress[progress.length - 1] === 100);
  const pushed = push.ofType('slicingProgress') as Json[];
  assert.ok(pushed.length > 0, 'slicingProgress pushed');
  assert.deepEqual({ ...pushed[pushed.length - 1] }, {
    slicer: 'prusaslicer', source_location: 'local', source_path: 'cube.stl', dest_location: 'local', dest_path: 'cube-draft.gcode', progress: 100,
  });
  assert.equal((await job(s)).state, 'Operational');
  const order = rec.names().filter((n) => ['SlicingStarted', 'SlicingDone', 'FileAdded', 'PrintStarted', 'PrintDone'].includes(n));
  assert.deepEqual(order.slice(order.indexOf('SlicingStarted')), ['SlicingStarted', 'SlicingDone', 'FileAdded', 'PrintStarted', 'PrintDone']);
});

test('slice errors: 415 for G-code sources, 404 unknown slicer / profile / file', { skip: needs('prusa-slicer') }, async (t) => {
  const s = await connectedServer(t);
  await uploadFile(s, 'part.gcode', 'G28\n');
  await uploadFile(s, 'part.stl', cubeStl(5));
  const slice = (path: string, extra: Json = {}) => s.api(`/api/files/local/${path}`, { method: 'POST', json: { command: 'slice', ...extra } });
  assert.equal((await slice('part.gcode')).status, 415);
  assert.equal((await slice('part.stl', { slicer: 'cura' })).status, 404);
  assert.equal((await slice('part.stl', { profile: 'nope' })).status, 404);
  assert.equal((await slice('missing.stl')).status, 404);
  assert.equal((await slice('part.stl', { position: { x: 'a' } })).status, 400);
});
