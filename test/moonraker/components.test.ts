// The optional components a Marlin host has through Gantry's own services: the bed mesh as Klipper's `bed_mesh` object
// with BED_MESH_CALIBRATE (the virtual printer's probe), the PSU as the power device `printer` (a fake Tasmota plug,
// the one boundary faked), and Gantry's webcam settings as Moonraker's webcam.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer } from '../helpers/connected-server.ts';
import { startTestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';
import { probe, DEFAULT_BED_SHAPE } from '../../src/virtual-printer/bed-shape.ts';
import { fakeTasmota } from '../power/fake-devices.ts';
import { RpcClient, mergeStatus } from './rpc-client.ts';

type RpcErr = Error & { code?: number };
const identify = { client_name: 'fluidd', version: '1.37.4', type: 'web', url: 'x' };

test('bed_mesh: BED_MESH_CALIBRATE probes and resolves with the mesh; the object, its profiles, LOAD, CLEAR and REMOVE', async (t) => {
  const shape = { points: 4, tiltX: 0.3 };
  const server = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.001, busyInterval: 0.2, bedShape: shape } } });
  const c = await RpcClient.open(`${server.url}/websocket`, { 'X-Api-Key': server.apiKey });
  t.after(() => c.close());
  await c.call('server.connection.identify', identify);
  const { objects } = await c.call<{ objects: string[] }>('printer.objects.list');
  assert.ok(objects.includes('bed_mesh'));
  const sub = await c.call<{ status: Record<string, Record<string, unknown>> }>('printer.objects.subscribe', { objects: { bed_mesh: null, configfile: ['settings'] } });
  assert.equal(sub.status.bed_mesh.profile_name, '', 'no mesh yet');
  assert.ok((sub.status.configfile.settings as Record<string, unknown>).bed_mesh, 'configfile has a bed_mesh section: the UIs show their height map');
  const help = await c.call<Record<string, string>>('printer.gcode.help');
  assert.ok(help.BED_MESH_CALIBRATE && help.BED_MESH_PROFILE && help.BED_MESH_CLEAR);

  // Klipper's calibrate resolves once the mesh is there: the bed mesh service's probe (G28, G29, M420 V) read back.
  assert.equal(await c.call('printer.gcode.script', { script: 'BED_MESH_CALIBRATE' }), 'ok');
  const expected = probe({ ...DEFAULT_BED_SHAPE, ...shape }).z;
  const q = async () => (await c.call<{ status: { bed_mesh: Record<string, unknown> } }>('printer.objects.query', { objects: { bed_mesh: null } })).status.bed_mesh;
  const mesh = await q();
  assert.equal(mesh.profile_name, 'default');
  assert.deepEqual(mesh.probed_matrix, expected);
  assert.deepEqual(mesh.mesh_matrix, expected);
  assert.deepEqual([mesh.mesh_min, mesh.mesh_max], [[0, 0], [200, 200]], 'the probe points over the profile\'s bed');
  const profiles = mesh.profiles as Record<string, { points: number[][]; mesh_params: Record<string, unknown> }>;
  assert.deepEqual(Object.keys(profiles), ['default']);
  assert.equal(profiles.default.mesh_params.x_count, 4);
  assert.ok(server.printer.terminal().some((l) => /Send: .*G29/.test(l)), 'the probe went to Marlin');
  // Again at once: the same bed gives the same mesh, which the service keeps as that one; the command still finishes.
  assert.equal(await c.call('printer.gcode.script', { script: 'BED_MESH_CALIBRATE' }), 'ok');
  assert.equal(Object.keys((await q()).profiles as object).length, 1);
  // Subscribers get it as a change.
  await waitFor('the subscriber sees the mesh', () => mergeStatus(structuredClone(sub.status), c.notifications).bed_mesh.profile_name === 'default');

  // CLEAR switches levelling off; LOAD=default back on; older profiles cannot be loaded into Marlin; unknown ones are errors.
  await c.call('printer.gcode.script', { script: 'BED_MESH_CLEAR' });
  assert.equal((await q()).profile_name, '');
  assert.ok(server.printer.terminal().some((l) => /Send: .*M420 S0/.test(l)));
  const mark = c.notifications.length;
  await c.call('printer.gcode.script', { script: 'BED_MESH_PROFILE LOAD=default' });
  assert.equal((await q()).profile_name, 'default');
  assert.ok(server.printer.terminal().some((l) => /Send: .*M420 S1/.test(l)));
  await c.next('notify_gcode_response', (n) => n.params![0] === '// bed_mesh: profile [default] loaded', mark);
  await assert.rejects(c.call('printer.gcode.script', { script: 'BED_MESH_PROFILE LOAD=nope' }), (e: RpcErr) => e.code === 400 && /Unknown profile \[nope\]/.test(e.message));
  // A read-only user may not calibrate.
  await server.access.users.addUser({ name: 'reader', password: 'pw-reader-123', groups: ['readonly'] });
  const ro = await RpcClient.open(`${server.url}/websocket`, { 'X-Api-Key': await server.access.users.generateUserKey('reader') });
  t.after(() => ro.close());
  await assert.rejects(ro.call('printer.gcode.script', { script: 'BED_MESH_CALIBRATE' }), (e: RpcErr) => e.code === 403);
  // REMOVE drops it from the history (Gantry's own API sees that too).
  await c.call('printer.gcode.script', { script: 'BED_MESH_PROFILE REMOVE=default' });
  assert.deepEqual((await q()).profiles, {});
  assert.equal(((await (await server.api('/api/plugin/bedmesh')).json()) as { latest: unknown }).latest, null);
});

test('power: the PSU is the device `printer`; status, on/off, notify_power_changed; switching needs PSU Control\'s permission', async (t) => {
  const dev = await fakeTasmota();
  t.after(() => dev.close());
  const server = await startTestServer(t, { settings: { plugins: { psucontrol: {
    switchingMethod: 'PLUGIN', sensingMethod: 'PLUGIN', sensePollingInterval: 0.2, gantry: { kind: 'tasmota', address: dev.address, timeout: 1 },
  } } } });
  const c = await RpcClient.open(`${server.url}/websocket`, { 'X-Api-Key': server.apiKey });
  t.after(() => c.close());
  await c.call('server.connection.identify', identify);
  assert.ok((await c.call<{ components: string[] }>('server.info')).components.includes('power'));
  assert.deepEqual(await c.call('machine.device_power.devices'), { devices: [{ device: 'printer', status: 'off', locked_while_printing: true, type: 'tasmota' }] });

  const mark = c.notifications.length;
  assert.deepEqual(await c.call('machine.device_power.on', { printer: null }), { printer: 'on' });
  assert.equal(dev.on, true, 'the plug switched');
  const n = await c.next('notify_power_changed', () => true, mark);
  assert.deepEqual(n.params, [{ device: 'printer', status: 'on', locked_while_printing: true, type: 'tasmota' }]);
  // The HTTP mirror: Moonraker's paths and query forms.
  const status = await server.api('/machine/device_power/status?printer');
  assert.deepEqual(await status.json(), { result: { printer: 'on' } });
  assert.deepEqual(await (await server.api('/machine/device_power/device?device=printer')).json(), { result: { printer: 'on' } });
  const off = await server.api('/machine/device_power/device?device=printer&action=off', { method: 'POST' });
  assert.deepEqual(await off.json(), { result: { printer: 'off' } });
  assert.equal(dev.on, false);
  // A device the plug turned on by itself is seen at the next poll and told.
  const mark2 = c.notifications.length;
  dev.on = true;
  await c.next('notify_power_changed', (x) => (x.params![0] as { status: string }).status === 'on', mark2);
  await assert.rejects(c.call('machine.device_power.status', { lamp: null }), (e: RpcErr) => e.code === -32601 && /Invalid device/.test(e.message));
  await assert.rejects(c.call('machine.device_power.post_device', { device: 'printer', action: 'explode' }), (e: RpcErr) => e.code === 400);

  // A read-only user sees the state but cannot switch; an operator without PSU Control's permission neither.
  for (const [name, group] of [['reader', 'readonly'], ['op', 'users']] as const) {
    await server.access.users.addUser({ name, password: `pw-${name}-123456`, groups: [group] });
    const u = await RpcClient.open(`${server.url}/websocket`, { 'X-Api-Key': await server.access.users.generateUserKey(name) });
    t.after(() => u.close());
    assert.equal((await u.call<{ devices: Array<{ status: string }> }>('machine.device_power.devices')).devices[0].status, 'on');
    await assert.rejects(u.call('machine.device_power.off', { printer: null }), (e: RpcErr) => e.code === 403, `${name} may not switch`);
  }
  assert.equal(dev.on, true);
});

test('power is not listed while power control is not set up; webcams from Gantry\'s webcam settings', async (t) => {
  const server = await startTestServer(t, { settings: { webcam: { webcamEnabled: true, stream: 'http://cam.lan/stream', snapshot: 'http://cam.lan/snap', flipH: true } } });
  const c = await RpcClient.open(`${server.url}/websocket`, { 'X-Api-Key': server.apiKey });
  t.after(() => c.close());
  assert.ok(!(await c.call<{ components: string[] }>('server.info')).components.includes('power'));
  const { webcams } = await c.call<{ webcams: Array<Record<string, unknown>> }>('server.webcams.list');
  assert.equal(webcams.length, 1);
  assert.equal(webcams[0].stream_url, 'http://cam.lan/stream');
  assert.equal(webcams[0].snapshot_url, 'http://cam.lan/snap');
  assert.equal(webcams[0].flip_horizontal, true);
  const item = await server.api('/server/webcams/item?uid=gantry-webcam');
  assert.equal(((await item.json()) as { result: { webcam: { name: string } } }).result.webcam.name, 'webcam');
  assert.equal((await server.api('/server/webcams/item?name=other')).status, 404);
  await server.api('/api/settings', { method: 'POST', json: { webcam: { webcamEnabled: false } } });
  assert.deepEqual(await c.call('server.webcams.list'), { webcams: [] });
});
