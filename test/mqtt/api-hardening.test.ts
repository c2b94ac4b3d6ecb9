// The API over MQTT under attack, against a real Mosquitto: paths that leave /api/ by dot segments, bodies nested
// beyond what a serialiser can carry, messages far over the size cap, and request floods (every request answered).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { Recorder, SKIP, startBroker, type Broker } from './helpers.ts';

const BASE = 'harden/p1/';

type Protocol = 'MQTTv31' | 'MQTTv311' | 'MQTTv5';

async function setUp(t: TestContext, protocol: Protocol = 'MQTTv31', gantry: Record<string, unknown> = {}): Promise<{ broker: Broker; server: TestServer; rec: Recorder }> {
  const broker = await startBroker(t);
  const server = await startTestServer(t, { settings: { plugins: { mqtt: {
    broker: { url: '127.0.0.1', port: broker.port, protocol }, publish: { baseTopic: BASE },
    gantry: { reconnectMin: 0.1, reconnectMax: 0.5, discovery: false, ...gantry },
  } } } });
  const rec = await Recorder.connect(t, broker.url, [`${BASE}api/response/#`, `${BASE}api/response`, `${BASE}mqtt`]);
  await rec.wait((m) => m.topic === `${BASE}mqtt` && m.text === 'connected', 'connected');
  return { broker, server, rec };
}

type Answer = { id: unknown; status: number; body: Record<string, unknown> };

function asker(rec: Recorder) {
  return async (req: Record<string, unknown>): Promise<Answer> => {
    await rec.client.publishAsync(`${BASE}api/request`, JSON.stringify(req), { qos: 1 });
    return (await rec.topic(`${BASE}api/response/${String(req.id)}`)).json() as Answer;
  };
}

test('API over MQTT: a path is confined to /api/ after decoding and resolving dot segments', { skip: SKIP }, async (t) => {
  const { server, rec } = await setUp(t);
  const ask = asker(rec);
  const key = server.apiKey;
  const hostile = [
    '/api/../downloads/logs/gantry.log',
    '/api/%2e%2e/downloads/logs/gantry.log',
    '/api/%2E%2E/downloads/logs/gantry.log',
    '/api/.%2e/downloads/logs/gantry.log',
    '/api/../plugin/appkeys/request',
    '/api/../apps/auth',
    '/api/..\\downloads/logs/gantry.log',
    '/api\\..\\plugin\\appkeys\\request',
    '/api//../../downloads/logs/gantry.log',
    '/api/files/../../downloads/logs/gantry.log',
    '/api/files/local/..%2f..%2fdownloads',
    '/api/..',
    '//api/../downloads/logs/gantry.log',
    '/apix',
    '/',
    'api/version',
    '\\\\evil\\api\\version',
    '/api/\u0000version',
  ];
  let n = 0;
  for (const path of hostile) {
    for (const apikey of [key, undefined]) {
      const id = `h${n++}`;
      const res = await ask({ id, method: apikey ? 'GET' : 'POST', path, apikey, body: apikey ? undefined : { app: 'evil' } });
      assert.equal(res.status, 400, `${path} (${apikey ? 'key' : 'no key'}) answered ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      assert.match(String(res.body.error), /under \/api\//);
    }
  }
  // Normalising is not refusing: a path that resolves inside /api/ is answered as its normal form.
  for (const path of ['/api/./version', '/api/files/../version', '/api//version', '/api\\version', '/api/%76ersion?x=1']) {
    const res = await ask({ id: `ok${n++}`, method: 'GET', path, apikey: key });
    assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
    assert.equal(typeof res.body.api, 'string');
  }
  // Encoded twice, the dots are a literal segment name to the router: an API 404, never the log.
  const twice = await ask({ id: `twice${n}`, method: 'GET', path: '/api/%252e%252e/downloads/logs/gantry.log', apikey: key });
  assert.equal(twice.status, 404);
  // No app key request was started through a hostile path.
  const pending = await server.api('/plugin/appkeys/request/nothing');
  assert.notEqual(pending.status, 500);
});
