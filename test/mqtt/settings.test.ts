// Pure parts of the MQTT service: settings → broker URL, protocol, topics (the plugin's defaults, the per-host base),
// command payloads → API calls, durations as the HomeAssistant plugin formats them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { effectiveConfig } from '../../src/config/config-store.ts';
import { mqttSettings, hostKey, eventClass } from '../../src/mqtt/settings.ts';
import { commandCall } from '../../src/mqtt/hass-control.ts';
import { formatDuration } from '../../src/mqtt/hass-state.ts';
import { discoveryMessages } from '../../src/mqtt/hass-discovery.ts';

const UUID = 'caea63f6-f7bc-4d6f-8f4c-0ed1b1665846';

test('off until a broker is set; the plugin\'s defaults otherwise, with a per-host default base topic', () => {
  assert.equal(mqttSettings(effectiveConfig({ server: { uuid: UUID } })), null);
  assert.equal(mqttSettings(effectiveConfig({ server: { uuid: UUID }, plugins: { mqtt: { broker: { url: '  ' } } } })), null);
  const s = mqttSettings(effectiveConfig({ server: { uuid: UUID }, plugins: { mqtt: { broker: { url: 'broker.lan' } } } }))!;
  assert.equal(s.url, 'mqtt://broker.lan:1883');
  assert.equal(s.base, `gantry/${hostKey(UUID)}/`);
  assert.equal(hostKey(UUID), 'caea63f6f7bc');
  assert.deepEqual([s.client.protocolId, s.client.protocolVersion, s.client.keepalive, s.client.clean], ['MQIsdp', 3, 60, true]);
  assert.equal(s.client.username, undefined, 'no credentials without a user name');
  assert.deepEqual(s.client.will, { topic: `${s.base}mqtt`, payload: Buffer.from('disconnected'), qos: 1, retain: true });
  assert.equal(s.topics.event('PrintDone'), `${s.base}event/PrintDone`);
  assert.equal(s.topics.progress('slicing'), `${s.base}progress/slicing`);
  assert.equal(s.topics.temperature('bed'), `${s.base}temperature/bed`);
  assert.deepEqual([s.retain, s.stateQos, s.threshold, s.tsField, s.control.enabled], [true, 0, 0.1, '_timestamp', false]);
  assert.equal(s.ha.nodeId, UUID.replace(/-/g, ''));
  assert.ok(s.client.clientId!.length <= 23, 'MQTT 3.1 client ids are at most 23 characters');

  const o = mqttSettings(effectiveConfig({ server: { uuid: UUID }, plugins: { mqtt: {
    broker: { url: 'mqtts://broker.lan:8883', protocol: 'MQTTv5', username: 'u', password: 'p' },
    publish: { baseTopic: 'octoPrint/', eventActive: false, progressTopic: '', lwActive: false },
  } } }))!;
  assert.equal(o.url, 'mqtts://broker.lan:8883');
  assert.deepEqual([o.client.protocolVersion, o.client.username, o.client.password], [5, 'u', 'p']);
  assert.equal(o.topics.event('PrintDone'), null);
  assert.equal(o.topics.progress('printing'), null);
  assert.equal(o.topics.lw, null);
  assert.equal(o.client.will, undefined);
  assert.equal(mqttSettings(effectiveConfig({ plugins: { mqtt: { broker: { url: 'h', tls_active: true, port: 8883 } } } }))!.url, 'mqtts://h:8883');
  assert.deepEqual([eventClass('ZChange'), eventClass('PrintDone'), eventClass('GcodeScriptBeforePrintStartingRunning')], ['position', 'printjob', 'unclassified']);
});

test('Home Assistant command payloads map onto the API calls, anything else is refused', () => {
  assert.deepEqual(commandCall('connect', 'True'), { method: 'POST', path: '/api/connection', body: { command: 'connect' } });
  // The farm queue's bed clear: the payload names the printer (empty: the default one); no path tricks.
  assert.deepEqual(commandCall('bedclear', ''), { method: 'POST', path: '/api/farm/printers/default/bedclear', body: {} });
  assert.deepEqual(commandCall('bedclear', 'mk4-2'), { method: 'POST', path: '/api/farm/printers/mk4-2/bedclear', body: {} });
  assert.ok('error' in commandCall('bedclear', '../job'));
  assert.ok('error' in commandCall('bedclear', '..'));
  assert.deepEqual(commandCall('pause', 'False'), { method: 'POST', path: '/api/job', body: { command: 'pause', action: 'resume' } });
  assert.deepEqual(commandCall('home', '["x","Q","z"]'), { method: 'POST', path: '/api/printer/printhead', body: { command: 'home', axes: ['x', 'z'] } });
  assert.deepEqual(commandCall('jog', '{"x": 10, "y": -5, "evil": "M112", "speed": 3000}'),
    { method: 'POST', path: '/api/printer/printhead', body: { command: 'jog', x: 10, y: -5, speed: 3000 } });
  assert.deepEqual(commandCall('commands', 'G28\nM117 hi'), { method: 'POST', path: '/api/printer/command', body: { commands: ['G28', 'M117 hi'] } });
  assert.deepEqual(commandCall('restart', 'PRESS'), { method: 'POST', path: '/api/system/commands/core/restart', body: {} });
  for (const [c, p] of [['connect', 'maybe'], ['home', 'not json'], ['psu', 'maybe'], ['__proto__', 'x']]) assert.ok('error' in commandCall(c, p), c);
  assert.deepEqual([formatDuration(3725), formatDuration(59), formatDuration(null)], ['1:02:05', '0:00:59', null]);
});

test('discovery: one sensor pair per heater of the profile, camera entities only with a snapshot URL', () => {
  const s = mqttSettings(effectiveConfig({ server: { uuid: UUID }, plugins: { mqtt: { broker: { url: 'b' } } } }))!;
  const ids = (camera: boolean, chamber: boolean) => discoveryMessages(s, { heaters: { extruders: 2, bed: false, chamber }, camera, version: '1.0' })
    .map((m) => m.topic.split('/')[2].slice(UUID.replace(/-/g, '').length + 1));
  const plain = ids(false, false);
  for (const id of ['TOOL0', 'TOOL0_TARGET', 'TOOL1', 'TOOL1_TARGET', 'SOC', 'CONNECT', 'STOP', 'SHUTDOWN']) assert.ok(plain.includes(id), id);
  assert.ok(!plain.includes('BED') && !plain.includes('CHAMBER') && !plain.some((i) => i.startsWith('CAMERA')));
  const full = ids(true, true);
  for (const id of ['CHAMBER', 'CHAMBER_TARGET', 'CAMERA_SNAPSHOT', 'CAMERA']) assert.ok(full.includes(id), id);
  const camera = discoveryMessages(s, { heaters: { extruders: 1, bed: true, chamber: false }, camera: true, version: '1.0' })
    .find((m) => m.topic.endsWith('_CAMERA/config'))!;
  assert.equal(camera.topic, `homeassistant/camera/${UUID.replace(/-/g, '')}_CAMERA/config`);
  assert.deepEqual([camera.payload['~'], camera.payload.t], [s.base, '~camera']);
});
