// Long fuzz run (`npm run bench -- fuzz`, FUZZ_SECONDS default 600, FUZZ_SEED to replay): the CI fuzzer's engine against
// a fresh server on loopback; prints requests, statuses and every distinct 5xx, and exits 1 when it found any.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../test/helpers/server.ts';
import { fuzz, describeFindings } from '../test/http/fuzz-engine.ts';
import { SKIP as NO_MOSQUITTO, startBroker } from '../test/mqtt/helpers.ts';
import { describeMqttFuzz, mqttFuzz } from '../test/mqtt/fuzz-engine.ts';

const seconds = Number(process.env.FUZZ_SECONDS ?? 600);
// The MQTT API bridge is fuzzed at the same time on the same server when mosquitto is there (test/mqtt/fuzz-engine.ts).
const cleanups: Array<() => Promise<void>> = [];
const broker = NO_MOSQUITTO ? undefined
  : await startBroker({ after: (fn) => cleanups.push(fn) }, { extra: ['max_queued_messages 0', 'max_inflight_messages 0'] });
const MQTT_BASE = 'fuzz/bench/';
const s = await startTestServer(undefined, broker ? { settings: { plugins: { mqtt: {
  broker: { url: '127.0.0.1', port: broker.port, protocol: 'MQTTv311' }, publish: { baseTopic: MQTT_BASE },
  gantry: { reconnectMin: 0.1, reconnectMax: 0.5, discovery: false } } } } } : undefined);
if (broker) while (!s.mqtt.status().connected) await new Promise((r) => setTimeout(r, 20));
const mqttRun = broker ? mqttFuzz({ url: broker.url, base: MQTT_BASE, apikey: s.apiKey, seconds }) : undefined;
await mkdir(join(s.paths.uploads, 'parts'), { recursive: true });
await writeFile(join(s.paths.uploads, 'cube.gcode'), 'G28\nG1 X10 E1\n');
let last = Date.now();
const result = await fuzz(s, {
  seconds,
  seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined,
  concurrency: Number(process.env.FUZZ_CONCURRENCY ?? 4),
  onProgress: (r) => {
    if (Date.now() - last < 30_000) return;
    last = Date.now();
    const mem = process.memoryUsage();
    console.log(`${r.requests} requests, ${r.findings.size} findings, rss ${Math.round(mem.rss / 1e6)} MB heap ${Math.round(mem.heapUsed / 1e6)} MB`);
  },
});
const mqttResult = await mqttRun;
const alive = (await fetch(`${s.url}/api/version`, { headers: { 'X-Api-Key': s.config.current.api.key ?? '' } })).status;
console.log(`seed ${result.seed}: ${result.requests} requests in ${(result.ms / 1000).toFixed(0)} s (${Math.round(result.requests / (result.ms / 1000))}/s); server still answers: ${alive}`);
console.log(`statuses: ${JSON.stringify(Object.fromEntries(result.statuses))}`);
console.log(result.findings.size === 0 ? 'no 5xx found' : `${result.findings.size} distinct 5xx:\n${describeFindings(result)}`);
const mqttClean = !mqttResult || (mqttResult.findings.length === 0 && mqttResult.unanswered.length === 0 && mqttResult.duplicated.length === 0);
console.log(mqttResult ? `MQTT bridge: ${describeMqttFuzz(mqttResult)}` : `MQTT bridge not fuzzed: ${String(NO_MOSQUITTO)}`);
await s.stop();
for (const c of cleanups) await c();
process.exit(result.findings.size === 0 && alive === 200 && mqttClean ? 0 : 1);
