// The recovery settings: the `recovery` config slice and serial.resetOnConnect through /api/settings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import type { Json } from './helpers.ts';

test('serial.resetOnConnect is off by default and set through /api/settings; the recovery slice has its defaults and bounds', async (t) => {
  const s = await startTestServer(t);
  const before = (await (await s.api('/api/settings')).json()) as Json;
  assert.equal(before.serial.resetOnConnect, false);
  assert.equal((await s.api('/api/settings', { method: 'POST', json: { serial: { resetOnConnect: true } } })).status, 200);
  assert.equal(s.config.current.serial.resetOnConnect, true);
  assert.equal(((await (await s.api('/api/settings')).json()) as Json).serial.resetOnConnect, true);
  assert.equal((await s.api('/api/settings', { method: 'POST', json: { serial: { resetOnConnect: 'yes' } } })).status, 400);

  const r = s.config.current.recovery;
  assert.deepEqual({ ...r }, {
    journal: true, autoReconnect: true, reconnectDelay: 1, reconnectMaxDelay: 10, reconnectGiveUp: 3600, probeTimeout: 3,
    journalInterval: 3, journalTick: 0.5, plannerDepth: 20,
  });
});
