// What clients receive besides the API: the psucontrol plugin message (always with isPSUOn, at every poll) and the
// state event on the push channel; the Home Assistant switch in discovery and its command topic.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { rawClient, userWithKey } from '../push/push-clients.ts';
import { effectiveConfig } from '../../src/config/config-store.ts';
import { mqttSettings } from '../../src/mqtt/settings.ts';
import { discoveryMessages } from '../../src/mqtt/hass-discovery.ts';
import { commandCall } from '../../src/mqtt/hass-control.ts';
import { fakeTasmota } from './fake-devices.ts';

test('push: plugin psucontrol {isPSUOn} every poll, and plugin_psucontrol_psu_state_changed on a change', async (t) => {
  const dev = await fakeTasmota();
  t.after(() => dev.close());
  const server = await startTestServer(t, { settings: { plugins: { psucontrol: {
    switchingMethod: 'PLUGIN', sensingMethod: 'PLUGIN', sensePollingInterval: 0.2, gantry: { kind: 'tasmota', address: dev.address, timeout: 1 },
  } } } });
  const { auth } = await userWithKey(server, 'watcher');
  const push = await rawClient(server);
  t.after(() => push.close());
  push.send({ auth });
  await push.next('history');
  const isPsu = (p: { plugin: string }) => p.plugin === 'psucontrol';
  const first = await push.next('plugin', isPsu as never) as { data: Record<string, unknown> };
  assert.deepEqual(first.data, { isPSUOn: false });
  const from = push.messages.length;
  // Polls go on while nothing changes (OctoApp and OctoPod read isPSUOn from every one).
  await push.next('plugin', isPsu as never, { from });
  dev.on = true;
  const changed = await push.next('event', ((e: { type: string }) => e.type === 'plugin_psucontrol_psu_state_changed') as never) as { payload: unknown };
  assert.deepEqual(changed.payload, { isPSUOn: true });
  for (const m of push.ofType('plugin') as Array<{ plugin: string; data: Record<string, unknown> }>) {
    if (m.plugin === 'psucontrol') assert.equal(typeof m.data.isPSUOn, 'boolean');
  }
});

test('Home Assistant: a Printer power switch in discovery, its state from the change event, hassControl/psu → the API', () => {
  const s = mqttSettings(effectiveConfig({ server: { uuid: 'caea63f6-f7bc-4d6f-8f4c-0ed1b1665846' }, plugins: { mqtt: { broker: { url: 'broker.lan' } } } }))!;
  const sw = discoveryMessages(s, { heaters: { extruders: 1, bed: true, chamber: false }, camera: false, version: '1' })
    .find((m) => m.topic.endsWith('_PSU/config'));
  assert.ok(sw);
  assert.match(sw.topic, /^homeassistant\/switch\//);
  assert.equal(sw.payload.val_tpl, '{{value_json.isPSUOn}}');
  assert.match(String(sw.payload.stat_t), /event\/plugin_psucontrol_psu_state_changed$/);
  assert.deepEqual(commandCall('psu', 'True'), { method: 'POST', path: '/api/plugin/psucontrol', body: { command: 'turnPSUOn' } });
  assert.deepEqual(commandCall('psu', 'False'), { method: 'POST', path: '/api/plugin/psucontrol', body: { command: 'turnPSUOff' } });
});
