// The bed mesh end to end: a probe on the virtual printer (Marlin's and Prusa's commands and layouts) through
// /api/plugin/bedmesh, the mesh with its points in mm, Bed Level Visualizer's routes and event, the kept history.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { connectedServer } from '../helpers/connected-server.ts';
import { waitFor, nextEvent, waitForFile } from '../helpers/wait.ts';
import { probe, DEFAULT_BED_SHAPE } from '../../src/virtual-printer/bed-shape.ts';
import type { TestServer } from '../helpers/server.ts';

interface Meshes { probing: boolean; latest: { format: string; z: number[][]; x: number[]; y: number[]; probeCount: number; min: number; max: number; range: number; id: string } | null; history: { id: string }[] }
const meshes = async (s: TestServer) => (await (await s.api('/api/plugin/bedmesh')).json()) as Meshes;

test('Probe on a Marlin printer: G28, G29, M420 V; the bilinear grid read back with its points, the event, the history on disk', async (t) => {
  const server = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.001, busyInterval: 0.2, bedShape: { points: 4, tiltX: 0.3 } } } });
  assert.equal((await meshes(server)).latest, null);
  const collected = nextEvent(server.events, 'plugin_bedlevelvisualizer_mesh_data_collected', () => true, 30_000);
  assert.equal((await server.api('/api/plugin/bedmesh', { method: 'POST', json: { command: 'probe' } })).status, 204);
  const event = await collected;
  await waitFor('the mesh', async () => (await meshes(server)).latest !== null, { timeoutMs: 30_000 });
  const m = (await meshes(server)).latest!;
  const expected = probe({ ...DEFAULT_BED_SHAPE, points: 4, tiltX: 0.3 });
  assert.equal(m.format, 'marlin-bilinear');
  assert.deepEqual(m.z, expected.z);
  assert.equal(m.probeCount, 16);
  assert.deepEqual([m.x[0], m.x[3], m.y[0], m.y[3]], [0, 200, 0, 200], 'points spread over the profile\'s bed');
  assert.equal(m.range, Math.round((m.max - m.min) * 1e4) / 1e4);
  assert.equal(event.mesh.length, 4);
  assert.match(event.mesh[0][0], /^[+-]\d\.\d{3}$/, 'the cells as strings, as the plugin sends them');
  assert.deepEqual(event.bed, { type: 'rectangular', x_min: 0, x_max: 200, y_min: 0, y_max: 200, z_min: 0, z_max: 200 });
  // G29 printed it and M420 V again: one mesh, not two.
  assert.equal((await meshes(server)).history.length, 1);
  const onDisk = JSON.parse(await waitForFile(join(server.paths.data, 'bed-meshes.json'))) as { meshes: { id: string }[] };
  assert.deepEqual(onDisk.meshes.map((x) => x.id), [m.id]);

  // Bed Level Visualizer's own routes answer as the plugin does.
  assert.equal((await server.api('/api/plugin/bedlevelvisualizer')).status, 204);
  assert.deepEqual(await (await server.api('/api/plugin/bedlevelvisualizer?stopProcessing=true')).json(), { stopped: true });
  assert.equal((await server.api('/api/plugin/bedlevelvisualizer', { method: 'POST', json: { command: 'stopProcessing' } })).status, 204);
  // Bad commands and unknown meshes.
  assert.equal((await server.api('/api/plugin/bedmesh', { method: 'POST', json: { command: 'fly' } })).status, 400);
  assert.equal((await server.api('/api/plugin/bedmesh', { method: 'POST', json: { command: 'delete', id: 'nope' } })).status, 404);
  assert.equal((await server.api('/api/plugin/bedmesh', { method: 'POST', json: { command: 'delete', id: m.id } })).status, 204);
  assert.equal((await meshes(server)).latest, null);
});

test('Probe on a Prusa printer uses G80 and G81; a mesh printed from the terminal is captured too', async (t) => {
  const server = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.001, busyInterval: 0.2, firmwareName: 'Prusa-Firmware 3.13.2', bedShape: { format: 'prusa', warp: -0.2 } } } });
  assert.equal((await server.api('/api/plugin/bedmesh', { method: 'POST', json: { command: 'probe' } })).status, 204);
  await waitFor('the mesh', async () => (await meshes(server)).latest !== null, { timeoutMs: 30_000 });
  const m = (await meshes(server)).latest!;
  assert.equal(m.format, 'prusa');
  assert.deepEqual(m.z, probe({ ...DEFAULT_BED_SHAPE, format: 'prusa', warp: -0.2 }).z);
  // BED_MESH_OUTPUT typed in the terminal prints the same mesh in Klipper's layout: captured, and the same values.
  assert.equal((await server.api('/api/printer/command', { method: 'POST', json: { commands: ['BED_MESH_OUTPUT'] } })).status, 204);
  const seen = (await meshes(server)).history.length;
  assert.equal(seen, 1, 'the same values again within a minute are the same mesh');
});
