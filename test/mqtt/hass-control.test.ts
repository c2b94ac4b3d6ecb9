// Home Assistant commands over MQTT without a broker: the command topics' handler with a dispatch the test answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { effectiveConfig } from '../../src/config/config-store.ts';
import { mqttSettings } from '../../src/mqtt/settings.ts';
import { HassControl } from '../../src/mqtt/hass-control.ts';
import type { ApiResult } from '../../src/mqtt/types.ts';

test('at most api.concurrency commands are dispatched at once; more answer 503 until one is done', async () => {
  const s = mqttSettings(effectiveConfig({ server: { uuid: 'caea63f6-f7bc-4d6f-8f4c-0ed1b1665846' }, plugins: { mqtt: {
    broker: { url: 'broker.lan' }, gantry: { api: { concurrency: 2 }, control: { enabled: true, user: 'ha' } } } } }))!;
  const results: unknown[] = [];
  const pending: Array<(r: ApiResult) => void> = [];
  const control = new HassControl(s, (_topic, payload) => { results.push(payload); },
    () => new Promise<ApiResult>((resolve) => { pending.push(resolve); }), async () => Buffer.alloc(0), () => {}, pino({ level: 'silent' }));
  const topic = (name: string) => s.base + s.topics.controlSub(name);
  for (let i = 0; i < 5; i++) control.handle(topic('cancel'), Buffer.from(''));
  // Before the cap, all five were dispatched at once (a flood from the broker had no bound).
  assert.equal(pending.length, 2);
  assert.deepEqual(results, [1, 2, 3].map(() => ({ command: 'cancel', status: 503, error: 'Too many commands in flight, try again' })));
  pending.shift()!({ status: 204, body: null });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(results.at(-1), { command: 'cancel', status: 204 });
  control.handle(topic('cancel'), Buffer.from(''));
  assert.equal(pending.length, 2, 'a place came free');
});
