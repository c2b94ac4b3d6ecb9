// Auto-reconnect's give-up time without a printer: the port never comes back, and the wall clock jumps meanwhile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { EventBus } from '../../src/core/event-bus.ts';
import { AutoReconnect } from '../../src/recovery/auto-reconnect.ts';
import { HOUR_MS, jumpClock } from '../helpers/clock-jump.ts';
import { waitFor } from '../helpers/wait.ts';

test('reconnecting gives up after reconnectGiveUp seconds of waiting, not at once when the wall clock jumped an hour ahead', async (t) => {
  const events = new EventBus();
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => { warnings.push((JSON.parse(line) as { msg: string }).msg); } });
  let looks = 0;
  const reconnect = new AutoReconnect({
    printer: {
      connect: async () => { throw new Error('the port is gone'); },
      isOperational: () => false,
      connection: () => ({ state: 'Error', port: '/dev/ttyGONE0', baudrate: 115200, printerProfile: '_default' }),
    },
    // The port is never listed again.
    ports: { listPorts: async () => { looks++; return []; }, transports: () => { throw new Error('not opened'); } },
    journal: { awaitsReconnect: () => false, noteReconnect: () => {}, continueAfterReconnect: async () => ({ continued: false, reason: '' }) },
    events, logger,
    config: { get: () => ({ recovery: { autoReconnect: true, reconnectDelay: 0.1, reconnectMaxDelay: 0.1, reconnectGiveUp: 1.5, probeTimeout: 1 } }) },
    byIdDir: '/nonexistent',
  });
  await reconnect.start();
  t.after(() => reconnect.stop());
  events.emit('Connected', { port: '/dev/ttyGONE0', baudrate: 115200 });
  events.emit('Error', { error: 'the cable was pulled', reason: 'connection' });
  await waitFor('the first look for the port', () => looks >= 1);
  const started = performance.now();
  jumpClock(t, HOUR_MS);

  await waitFor('giving up', () => warnings.includes('auto-reconnect: the port did not come back; giving up'), 10_000);
  const waited = performance.now() - started;
  // Before, the first miss after the jump counted an hour of waiting and gave up at once (≈ 0.1 s).
  assert.ok(waited >= 1_200, `gave up after ${Math.round(waited)} ms of a 1.5 s wait`);
  assert.ok(looks >= 2, `looked ${looks} time(s): not again after the jump`);
});
