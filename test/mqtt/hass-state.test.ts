// Home Assistant state topics without a broker: what HassState publishes, with a printer and a job the test sets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { effectiveConfig } from '../../src/config/config-store.ts';
import { mqttSettings } from '../../src/mqtt/settings.ts';
import { HassState } from '../../src/mqtt/hass-state.ts';
import type { MqttJobSource, MqttPrinterSource } from '../../src/mqtt/types.ts';
import { stateFlags } from '../../src/printer/printer-state.ts';
import { HOUR_MS, jumpClock } from '../helpers/clock-jump.ts';
import { waitFor } from '../helpers/wait.ts';

test('hass/printing is sent at most every 500 ms, and still after the wall clock jumped back an hour', async (t) => {
  const s = mqttSettings(effectiveConfig({ server: { uuid: 'caea63f6-f7bc-4d6f-8f4c-0ed1b1665846' }, plugins: { mqtt: { broker: { url: 'broker.lan' } } } }))!;
  let z = 0.2;
  const printer: MqttPrinterSource = {
    state: () => ({ id: 'PRINTING', text: 'Printing', error: '', flags: stateFlags('PRINTING', false) }),
    currentZ: () => z, offsets: () => ({}), resends: () => ({ count: 0, transmitted: 0, ratio: 0 }),
    subscribe: () => () => {}, watchReplies: () => () => {}, heaters: () => ({ extruders: 1, bed: true, chamber: false }),
  };
  const jobs: MqttJobSource = { job: () => ({}), progress: () => ({ completion: 10 }) };
  const sent: number[] = [];
  const printing = s.base + s.topics.hassSub('printing');
  const hass = new HassState(s, (topic, payload) => {
    if (topic === printing) sent.push((payload as { currentZ: number }).currentZ);
  }, printer, jobs, () => Date.now());
  t.after(() => hass.stop());

  hass.event('ZChange', {});
  z = 0.4;
  hass.event('ZChange', {});
  assert.deepEqual(sent, [0.2], 'the second within 500 ms waits');
  await waitFor('the newest state at the end of the interval', () => sent.length === 2);
  assert.deepEqual(sent, [0.2, 0.4]);

  jumpClock(t, -HOUR_MS);
  z = 0.6;
  hass.event('ZChange', {});
  // Before, the wait was counted on the wall clock: an hour and a half second, hass/printing frozen meanwhile.
  await waitFor('hass/printing after the jump', () => sent.length === 3, 3_000);
  assert.deepEqual(sent, [0.2, 0.4, 0.6]);
});
