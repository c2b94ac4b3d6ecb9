// The MQTT bridge fuzzer in the suite: a few seconds (MQTT_FUZZ_SECONDS, bounded in count too) of hostile paths,
// bursts, packets over the cap and deep bodies against a real Mosquitto; `npm run bench -- fuzz` runs it long.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { SKIP, startBroker } from './helpers.ts';
import { describeMqttFuzz, mqttFuzz } from './fuzz-engine.ts';

const SECONDS = Number(process.env.MQTT_FUZZ_SECONDS ?? 4);
const BASE = 'fuzz/p1/';

test(`fuzzing the MQTT API bridge for ${SECONDS} s: no 5xx, every request answered once`, { skip: SKIP, timeout: (SECONDS + 90) * 1000 }, async (t) => {
  // The broker's own per-client queue limits would drop messages on its side: not what is tested.
  const broker = await startBroker(t, { extra: ['max_queued_messages 0', 'max_inflight_messages 0'] });
  const server = await startTestServer(t, { settings: { plugins: { mqtt: {
    broker: { url: '127.0.0.1', port: broker.port, protocol: 'MQTTv311' }, publish: { baseTopic: BASE },
    gantry: { reconnectMin: 0.1, reconnectMax: 0.5, discovery: false },
  } } } });
  const deadline = Date.now() + 10_000;
  while (!server.mqtt.status().connected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const r = await mqttFuzz({ url: broker.url, base: BASE, apikey: server.apiKey, seconds: SECONDS, maxRequests: SECONDS * 2000,
    seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined });
  t.diagnostic(describeMqttFuzz(r));
  assert.ok(r.requests >= Math.min(SECONDS * 20, 50), `only ${r.requests} requests`);
  assert.deepEqual([r.findings.length, r.unanswered.length, r.duplicated.length], [0, 0, 0], describeMqttFuzz(r));
  assert.equal(r.anonymousAnswers, r.anonymous, 'one answer per request without an id');
  assert.equal(server.mqtt.status().connected, true);
  // A fuzzed POST /api/settings/apikey may have drawn a new global key (a legitimate change): ask with the current one.
  assert.equal((await server.api('/api/version', { key: server.config.current.api.key ?? '' })).status, 200);
});
