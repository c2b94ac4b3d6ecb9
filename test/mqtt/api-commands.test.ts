// The HTTP API over MQTT (same routes, validation and permission checks as HTTP) and the Home Assistant command
// topics, refused while off and obeyed with the configured user's permissions when on; settings applied live.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { Recorder, SKIP, startBroker } from './helpers.ts';

const BASE = 'farm/p1/';

test('API over MQTT: GET/POST/DELETE with a key, 403 for a bad key, errors for bad JSON, unknown paths and a 1 MB body, MQTT 5 response topics', { skip: SKIP }, async (t) => {
  const broker = await startBroker(t);
  const server = await startTestServer(t, { settings: { plugins: { mqtt: {
    broker: { url: '127.0.0.1', port: broker.port, protocol: 'MQTTv5' }, publish: { baseTopic: BASE },
    gantry: { reconnectMin: 0.1, reconnectMax: 0.5, discovery: false },
  } } } });
  const rec = await Recorder.connect(t, broker.url, [`${BASE}api/response/#`, 'my/replies/#', `${BASE}mqtt`], { protocolVersion: 5 });
  await rec.wait((m) => m.topic === `${BASE}mqtt` && m.text === 'connected', 'connected');
  const ask = async (req: Record<string, unknown>) => {
    await rec.client.publishAsync(`${BASE}api/request`, JSON.stringify(req), { qos: 1 });
    return (await rec.topic(`${BASE}api/response/${String(req.id)}`)).json() as { id: unknown; status: number; body: Record<string, unknown> };
  };
  const key = server.apiKey;

  const version = await ask({ id: 'v1', method: 'GET', path: '/api/version', apikey: key });
  assert.equal(version.id, 'v1');
  assert.equal(version.status, 200);
  assert.equal(typeof version.body.api, 'string');

  const created = await ask({ id: 'p1', method: 'POST', path: '/api/printerprofiles', apikey: key, body: { profile: { id: 'from_mqtt', name: 'From MQTT' } } });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  assert.equal((await server.api('/api/printerprofiles/from_mqtt')).status, 200, 'the profile exists over HTTP too');
  const deleted = await ask({ id: 'd1', method: 'DELETE', path: '/api/printerprofiles/from_mqtt', apikey: key });
  assert.equal(deleted.status, 204);
  assert.equal((await server.api('/api/printerprofiles/from_mqtt')).status, 404);

  // Validation and errors are the HTTP API's own, byte for byte.
  const bad = { profile: { id: 'x', volume: { width: 'wide' } } };
  const viaMqtt = await ask({ id: 'bad-body', method: 'POST', path: '/api/printerprofiles', apikey: key, body: bad });
  const viaHttp = await server.api('/api/printerprofiles', { method: 'POST', json: bad });
  assert.equal(viaMqtt.status, viaHttp.status);
  assert.deepEqual(viaMqtt.body, await viaHttp.json());
  assert.equal(viaMqtt.status, 400);

  const wrongKey = await ask({ id: 'k1', method: 'GET', path: '/api/settings', apikey: 'NOT-A-KEY' });
  assert.deepEqual([wrongKey.status, wrongKey.body.error], [403, 'Invalid API key']);
  const noKey = await ask({ id: 'k2', method: 'POST', path: '/api/printerprofiles', body: { profile: { id: 'nokey' } } });
  assert.equal(noKey.status, 403);
  const unknown = await ask({ id: 'u1', method: 'GET', path: '/api/does/not/exist', apikey: key });
  assert.equal(unknown.status, 404);
  assert.equal(typeof unknown.body.error, 'string');
  const notApi = await ask({ id: 'u2', method: 'GET', path: '/', apikey: key });
  assert.equal(notApi.status, 400);
  const huge = await ask({ id: 'big', method: 'POST', path: '/api/printerprofiles', apikey: key, body: { profile: { id: 'big', name: 'x'.repeat(1024 * 1024) } } });
  assert.equal(huge.status, 413, 'a 1 MB body reaches the route and gets its body limit');
  assert.equal((await server.api('/api/printerprofiles/big')).status, 404);

  await rec.client.publishAsync(`${BASE}api/request`, '{"id": "broken", "method": ', { qos: 1 });
  const broken = await rec.topic(`${BASE}api/response`, 'bad JSON answer');
  assert.deepEqual(broken.json(), { id: null, status: 400, body: { error: 'Malformed JSON request' } });
  await rec.client.publishAsync(`${BASE}api/request`, Buffer.alloc(2 * 1024 * 1024, 'a'), { qos: 1 });
  await rec.wait((m) => m.topic === `${BASE}api/response` && m.json().status === 413, 'oversized message refused');

  // A reply topic of the client's choosing, and MQTT 5 response topic with correlation data.
  await rec.client.publishAsync(`${BASE}api/request`, JSON.stringify({ id: 7, method: 'GET', path: '/api/version', apikey: key, replyTo: 'my/replies/a' }), { qos: 1 });
  assert.equal((await rec.topic('my/replies/a')).json().status, 200);
  const answered = new Promise<{ body: Record<string, unknown>; corr: string }>((resolve) => {
    rec.client.on('message', (topic, payload, packet) => {
      if (topic === 'my/replies/v5') resolve({ body: JSON.parse(payload.toString()) as Record<string, unknown>, corr: String(packet.properties?.correlationData) });
    });
  });
  await rec.client.publishAsync(`${BASE}api/request`, JSON.stringify({ method: 'GET', path: '/api/job', apikey: key }),
    { qos: 1, properties: { responseTopic: 'my/replies/v5', correlationData: Buffer.from('corr-42') } });
  const v5 = await answered;
  assert.equal(v5.corr, 'corr-42');
  assert.equal(v5.body.status, 200);
  // A reply topic inside this host's own topics (other than api/response) is not honoured.
  await rec.client.publishAsync(`${BASE}api/request`, JSON.stringify({ id: 'own', method: 'GET', path: '/api/version', apikey: key, replyTo: `${BASE}mqtt` }), { qos: 1 });
  assert.equal((await rec.topic(`${BASE}api/response/own`)).json().status, 200);
  assert.equal(server.mqtt.status().connected, true, 'still connected after all of it');
});

test('hassControl commands: refused while off, then run as the configured user with that user\'s permissions; settings apply live', { skip: SKIP }, async (t) => {
  const broker = await startBroker(t);
  const server = await startTestServer(t, { settings: {
    devel: { virtualPrinter: { throttle: 0 } },
    plugins: { mqtt: { broker: { url: '127.0.0.1', port: broker.port, protocol: 'MQTTv311' }, publish: { baseTopic: BASE },
      gantry: { reconnectMin: 0.1, reconnectMax: 0.5 } } },
  } });
  await server.access.users.addUser({ name: 'viewer', password: 'viewer-pw-123', groups: ['readonly'] });
  await server.access.users.addUser({ name: 'operator', password: 'operator-pw-123', groups: ['users'] });
  const rec = await Recorder.connect(t, broker.url, `${BASE}#`);
  await rec.wait((m) => m.topic === `${BASE}mqtt` && m.text === 'connected', 'connected');
  assert.equal((await server.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL' } })).status, 204);
  await rec.topic(`${BASE}event/Connected`, 'Connected', 20_000);
  const result = `${BASE}hass/control_result`;
  const command = async (name: string, payload: string) => {
    const from = rec.messages.length;
    await rec.client.publishAsync(`${BASE}hassControl/${name}`, payload, { qos: 1 });
    return (await rec.topic(result, `${name} result`, 10_000, from)).json();
  };

  assert.deepEqual(await command('home', '["x", "y"]'), { command: 'home', status: 403, error: 'Commands over MQTT are off' });
  assert.ok(!rec.messages.some((m) => m.topic === `${BASE}event/Home`));

  const live = async (user: string) => {
    const from = rec.messages.length;
    const res = await server.api('/api/settings', { method: 'POST', json: { plugins: { mqtt: { gantry: { control: { enabled: true, user } } } } } });
    assert.equal(res.status, 200);
    const tree = (await res.json()) as { plugins: { mqtt: { gantry: { control: unknown }; broker: { port: number } } } };
    assert.deepEqual(tree.plugins.mqtt.gantry.control, { enabled: true, user });
    // A settings change reconnects: `disconnected` on the old session, then `connected` again.
    await rec.wait((m) => m.topic === `${BASE}mqtt` && m.text === 'connected', 'reconnected', 10_000, from);
  };
  await live('viewer');
  const refused = await command('home', '["x"]');
  assert.equal(refused.status, 403, JSON.stringify(refused));
  await live('operator');
  const from = rec.messages.length;
  assert.equal((await command('home', '["x", "y", "q"]')).status, 204);
  await rec.topic(`${BASE}event/Home`, 'Home event', 10_000, from);
  assert.equal((await command('commands', '["M117 from mqtt"]')).status, 204);
  assert.equal((await command('jog', '{"x": 5}')).status, 204);
  assert.equal((await command('pause', 'True')).status, 409, 'nothing to pause: the job API says so');
  assert.equal((await command('shutdown', 'PRESS')).status, 403, 'operators may not shut the host down');
  assert.equal((await command('nonsense', 'PRESS')).status, 400);

  // The whole tree posted back (as settings dialogs do) pins no plugin defaults in config.yaml.
  const all = (await (await server.api('/api/settings')).json()) as { plugins: Record<string, unknown> };
  assert.equal((await server.api('/api/settings', { method: 'POST', json: { plugins: all.plugins } })).status, 200);
  const stored = server.config.overrides.plugins as { mqtt: { publish: Record<string, unknown> } };
  assert.deepEqual(stored.mqtt.publish, { baseTopic: BASE });
  // Broker credentials are shown only to those who may change settings.
  await server.config.patch({ plugins: { mqtt: { broker: { password: 'secret' } } } });
  const readerKey = await server.access.users.generateUserKey('viewer');
  const asReader = (await (await server.api('/api/settings', { key: readerKey })).json()) as { plugins: { mqtt: { broker: { password: string } } } };
  assert.equal(asReader.plugins.mqtt.broker.password, '');
  const asAdmin = (await (await server.api('/api/settings')).json()) as { plugins: { mqtt: { broker: { password: string } } } };
  assert.equal(asAdmin.plugins.mqtt.broker.password, 'secret');

  // Settings validation: a bad value is refused by /api/settings and nothing changes.
  const bad = await server.api('/api/settings', { method: 'POST', json: { plugins: { mqtt: { broker: { port: 'many' } } } } });
  assert.equal(bad.status, 400);
  assert.equal(server.config.current.plugins.mqtt.broker.port, broker.port);
});
