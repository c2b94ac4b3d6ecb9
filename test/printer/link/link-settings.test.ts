// How a connect request becomes a plan: VIRTUAL and fully specified ports connect directly, the rest is detected.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planConnection } from '../../../src/printer/link/link-settings.ts';

const bauds = (n: number) => (n > 1 ? [115200, 250000] : [115200, 250000, 230400]);

test('connect plans', () => {
  assert.deepEqual(planConnection('VIRTUAL', undefined, ['VIRTUAL'], bauds), { kind: 'direct', port: 'VIRTUAL', baudrate: 115200 });
  assert.deepEqual(planConnection(undefined, undefined, ['VIRTUAL'], bauds), { kind: 'direct', port: 'VIRTUAL', baudrate: 115200 });
  assert.deepEqual(planConnection('/dev/ttyUSB0', 250000, ['/dev/ttyUSB0', 'VIRTUAL'], bauds), { kind: 'direct', port: '/dev/ttyUSB0', baudrate: 250000 });
  assert.deepEqual(planConnection('/dev/ttyUSB0', undefined, ['/dev/ttyUSB0', 'VIRTUAL'], bauds), {
    kind: 'detect', candidates: [{ port: '/dev/ttyUSB0', baudrate: 115200 }, { port: '/dev/ttyUSB0', baudrate: 250000 }, { port: '/dev/ttyUSB0', baudrate: 230400 }],
  });
  assert.deepEqual(planConnection(undefined, 250000, ['/dev/ttyACM0', '/dev/ttyUSB0', 'VIRTUAL'], bauds), {
    kind: 'detect', candidates: [{ port: '/dev/ttyACM0', baudrate: 250000 }, { port: '/dev/ttyUSB0', baudrate: 250000 }],
  });
  assert.deepEqual(planConnection(undefined, undefined, ['/dev/ttyACM0', '/dev/ttyUSB0'], bauds).kind, 'detect');
});
