// /api/plugin/psucontrol against stand-in devices (Tasmota, Shelly Gen1/Gen2, Home Assistant, Kasa): OctoPod's and
// OctoFarm's call sequences, the state read back from the device, permissions, and a device that does not answer.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addUser } from '../access/helpers.ts';
import { fakeHomeAssistant, fakeKasa, fakeShellyGen1, fakeShellyGen2, fakeTasmota, type FakeDevice } from './fake-devices.ts';

async function usePlugin(s: TestServer, gantry: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<void> {
  const res = await s.api('/api/settings', { method: 'POST', json: { plugins: { psucontrol: { switchingMethod: 'PLUGIN', sensingMethod: 'PLUGIN', gantry: { timeout: 1, ...gantry }, ...extra } } } });
  assert.equal(res.status, 200, await res.clone().text());
}

const command = (s: TestServer, cmd: string, key?: string) => s.api('/api/plugin/psucontrol', { method: 'POST', json: { command: cmd }, ...(key ? { key } : {}) });

/** OctoPod: turnPSUOn (204), getPSUState (200, isPSUOn), turnPSUOff (204); OctoFarm reads the first key. */
async function octoPodSequence(s: TestServer, dev: FakeDevice, isOn: () => boolean = () => dev.on): Promise<void> {
  let res = await command(s, 'turnPSUOn');
  assert.equal(res.status, 204, await res.text());
  assert.equal(await res.text(), '');
  assert.equal(isOn(), true, 'the device was switched on');
  res = await command(s, 'getPSUState');
  assert.equal(res.status, 200);
  const text = await res.text();
  assert.match(text, /^\{"isPSUOn":true\}$/, 'isPSUOn first (and only)');
  res = await command(s, 'togglePSU');
  assert.equal(res.status, 204);
  assert.equal(isOn(), false, 'toggle switched it off');
  res = await s.api('/api/plugin/psucontrol');
  assert.deepEqual(await res.json(), { isPSUOn: false });
  // The state comes from the device: switched by hand there, Gantry reads it back.
  dev.on = true;
  if ('outlets' in dev) (dev as unknown as { outlets: boolean[] }).outlets[1] = true;
  assert.deepEqual(await (await command(s, 'getPSUState')).json(), { isPSUOn: true });
  res = await command(s, 'turnPSUOff');
  assert.equal(res.status, 204);
  assert.equal(isOn(), false);
}

let server: TestServer;
test.before(async () => { server = await startTestServer(undefined); });
test.after(async () => {
  await server.stop();
  const { rm } = await import('node:fs/promises');
  await rm(server.baseDir, { recursive: true, force: true });
});

async function device<T extends FakeDevice>(t: TestContext, dev: Promise<T>): Promise<T> {
  const d = await dev;
  t.after(() => d.close());
  return d;
}

test('/api/settings lists plugins.psucontrol with PSU Control\'s own keys and defaults (clients take it as installed)', async () => {
  const settings = await (await server.api('/api/settings')).json() as { plugins: Record<string, Record<string, unknown>> };
  const p = settings.plugins.psucontrol;
  assert.equal(p.switchingMethod, 'GCODE');
  assert.equal(p.onGCodeCommand, 'M80');
  assert.equal(p.sensingMethod, 'INTERNAL');
  assert.equal(p.sensePollingInterval, 5);
  assert.equal(p.idleTimeout, 30);
  assert.equal(p.idleTimeoutWaitTemp, 50);
  assert.equal(p.autoOnTriggerGCodeCommands, 'G0,G1,G2,G3,G10,G11,G28,G29,G32,M104,M106,M109,M140,M190');
});

test('Tasmota: Power1 On/Off and the state from Status 0 (with user/password)', async (t) => {
  const dev = await device(t, fakeTasmota({ user: 'admin', password: 'pw' }));
  await usePlugin(server, { kind: 'tasmota', address: dev.address, plug: 1, username: 'admin', password: 'pw' });
  await octoPodSequence(server, dev);
  assert.ok(dev.requests.some((r) => r.includes('cmnd=Power1+On') || r.includes('cmnd=Power1%20On')), dev.requests.join('\n'));
  assert.ok(dev.requests.some((r) => /cmnd=Status(\+|%20)0/.test(r)));
});

test('Shelly Gen1: /relay/0?turn=on|off, ison read back, HTTP Basic', async (t) => {
  const dev = await device(t, fakeShellyGen1({ user: 'u', password: 'p' }));
  await usePlugin(server, { kind: 'shelly1', address: dev.address, plug: 0, username: 'u', password: 'p' });
  await octoPodSequence(server, dev);
  assert.ok(dev.requests.includes('GET /relay/0?turn=on'));
});

test('Shelly Gen2: Switch.Set and Switch.GetStatus over RPC', async (t) => {
  const dev = await device(t, fakeShellyGen2());
  await usePlugin(server, { kind: 'shelly2', address: dev.address, plug: 0 });
  await octoPodSequence(server, dev);
  assert.ok(dev.requests.includes('GET /rpc/Switch.Set?id=0&on=true'));
  assert.ok(dev.requests.includes('GET /rpc/Switch.GetStatus?id=0'));
});

test('Home Assistant: services switch/turn_on|turn_off with the token, state from /api/states', async (t) => {
  const dev = await device(t, fakeHomeAssistant('tok123', 'switch.printer'));
  await usePlugin(server, { kind: 'homeassistant', address: `http://${dev.address}`, token: 'tok123', entityId: 'printer' });
  await octoPodSequence(server, dev);
  assert.ok(dev.requests.includes('POST /api/services/switch/turn_on {"entity_id":"switch.printer"}'));
  // A wrong token is a clear error, not a silent "off" to the caller who asked to switch.
  await usePlugin(server, { kind: 'homeassistant', address: `http://${dev.address}`, token: 'wrong', entityId: 'printer' });
  const res = await command(server, 'turnPSUOn');
  assert.equal(res.status, 502);
  assert.match((await res.json() as { error: string }).error, /Home Assistant entity switch\.printer answered HTTP 401 \(check the credentials\)/);
});

test('Kasa: the legacy protocol on TCP (XOR autokey, 32-bit length), a plug and a strip outlet', async (t) => {
  const plug = await device(t, fakeKasa());
  await usePlugin(server, { kind: 'kasa', address: plug.address, plug: 0 });
  await octoPodSequence(server, plug);
  assert.ok(plug.requests.includes('{"system":{"set_relay_state":{"state":1}}}'));
  const strip = await device(t, fakeKasa(3));
  await usePlugin(server, { kind: 'kasa', address: strip.address, plug: 2 });
  await octoPodSequence(server, strip, () => strip.outlets[1]);
  assert.equal(strip.outlets[0], false, 'only outlet 2 was switched');
  assert.ok(strip.requests.includes('{"system":{"set_relay_state":{"state":1}},"context":{"child_ids":["800601"]}}'), strip.requests.join('\n'));
});

test('a device that does not answer: 502 with the device named and "no answer in time", within the timeout', async (t) => {
  const dev = await device(t, fakeShellyGen2());
  dev.silent = true;
  await usePlugin(server, { kind: 'shelly2', address: dev.address, timeout: 0.5 });
  const started = Date.now();
  const res = await command(server, 'turnPSUOn');
  assert.equal(res.status, 502);
  assert.match((await res.json() as { error: string }).error, /^Shelly \(Gen2\) at 127\.0\.0\.1:\d+ did not answer: no answer in time$/);
  assert.ok(Date.now() - started < 3000);
  // Sensing a dead device reads as off (as the plugin does), so status clients keep working.
  assert.deepEqual(await (await command(server, 'getPSUState')).json(), { isPSUOn: false });
  // Nothing listening at all.
  await dev.close();
  await usePlugin(server, { kind: 'tasmota', address: dev.address, timeout: 0.5 });
  const refused = await command(server, 'turnPSUOn');
  assert.equal(refused.status, 502);
  assert.match((await refused.json() as { error: string }).error, /^Tasmota at .* did not answer: .*ECONNREFUSED/);
});

test('SYSTEM switching and sensing run the commands (exit 0 on, 1 off)', async (t) => {
  const { mkdtemp, rm } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const dir = await mkdtemp(join(tmpdir(), 'psu-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const flag = join(dir, 'on');
  const res = await server.api('/api/settings', { method: 'POST', json: { plugins: { psucontrol: {
    switchingMethod: 'SYSTEM', sensingMethod: 'SYSTEM', onSysCommand: `touch ${flag}`, offSysCommand: `rm -f ${flag}`, senseSystemCommand: `test -e ${flag}`,
  } } } });
  assert.equal(res.status, 200);
  assert.equal((await command(server, 'turnPSUOn')).status, 204);
  assert.deepEqual(await (await command(server, 'getPSUState')).json(), { isPSUOn: true });
  assert.equal((await command(server, 'turnPSUOff')).status, 204);
  assert.deepEqual(await (await command(server, 'getPSUState')).json(), { isPSUOn: false });
  await server.api('/api/settings', { method: 'POST', json: { plugins: { psucontrol: { offSysCommand: 'exit 3' } } } });
  await command(server, 'turnPSUOn');
  const failed = await command(server, 'turnPSUOff');
  assert.equal(failed.status, 502);
  assert.match((await failed.json() as { error: string }).error, /exited with 3/);
});

test('SimpleApi rules and permissions: unknown command 400, a user without PSU Control: Control may read but not switch', async (t) => {
  const dev = await device(t, fakeShellyGen2());
  await usePlugin(server, { kind: 'shelly2', address: dev.address });
  const bad = await command(server, 'explode');
  assert.equal(bad.status, 400);
  assert.deepEqual(await bad.json(), { error: 'command is invalid' });
  await addUser(server, 'operator', 'secret-pw-1', ['users']);
  const keyRes = await server.api('/api/access/users/operator/apikey', { method: 'POST', json: {} });
  assert.equal(keyRes.status, 200, await keyRes.clone().text());
  const key = (await keyRes.json() as { apikey: string }).apikey;
  assert.equal((await command(server, 'getPSUState', key)).status, 200);
  const denied = await command(server, 'turnPSUOn', key);
  assert.equal(denied.status, 403);
  assert.equal(dev.on, false, 'nothing was switched');
  const perms = await (await server.api('/api/access/permissions')).json() as { permissions: Array<{ key: string; dangerous: boolean; default_groups: string[] }> };
  const p = perms.permissions.find((x) => x.key === 'PLUGIN_PSUCONTROL_CONTROL');
  assert.ok(p?.dangerous);
});

test('GPIO switching through gpiod: a chip that is not there is a clear 502, not a crash', { skip: process.platform !== 'linux' }, async () => {
  const { existsSync } = await import('node:fs');
  if (existsSync('/dev/gpiochip9')) return;
  const res = await server.api('/api/settings', { method: 'POST', json: { plugins: { psucontrol: { switchingMethod: 'GPIO', sensingMethod: 'INTERNAL', GPIODevice: '/dev/gpiochip9', onoffGPIOPin: 3 } } } });
  assert.equal(res.status, 200);
  const on = await command(server, 'turnPSUOn');
  assert.equal(on.status, 502);
  assert.match((await on.json() as { error: string }).error, /^GPIO gpiochip9 line 3 (failed: |cannot be used: gpioset is not installed)/);
});
