// Unit tests: client address classification and the failed-login throttle windows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isExternalAddress, inNetworks, networkList } from './network.ts';
import { LoginThrottle } from './login-throttle.ts';

test('LAN, loopback and trusted subnets are not external; public addresses are', () => {
  for (const a of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.5', '::1', 'fd00::1', 'fe80::1', '::ffff:192.168.0.9']) {
    assert.equal(isExternalAddress(a, []), false, a);
  }
  for (const a of ['8.8.8.8', '172.32.0.1', '2001:db8::1', '::ffff:1.2.3.4']) assert.equal(isExternalAddress(a, []), true, a);
  assert.equal(isExternalAddress('8.8.8.8', ['8.8.8.0/24']), false);
  assert.equal(isExternalAddress('8.8.9.8', ['8.8.8.0/24', 'garbage']), true);
  assert.equal(inNetworks('127.0.0.1', networkList(['127.0.0.0/8', '::1/128'])), true);
  assert.equal(inNetworks(undefined, networkList(['0.0.0.0/0'])), false);
});

test('the throttle blocks after 3 failures a minute and forgets them when the windows pass', () => {
  let now = 1_000_000;
  const throttle = new LoginThrottle({ now: () => now, monotonic: () => now });
  for (let i = 0; i < 3; i++) {
    assert.equal(throttle.blocked('1.2.3.4'), false);
    throttle.recordFailure('1.2.3.4');
  }
  assert.equal(throttle.blocked('1.2.3.4'), true);
  assert.equal(throttle.blocked('5.6.7.8'), false, 'per address');
  now += 61_000;
  assert.equal(throttle.blocked('1.2.3.4'), false, 'the minute window passed');
  throttle.recordFailure('1.2.3.4');
  throttle.recordFailure('1.2.3.4');
  assert.equal(throttle.blocked('1.2.3.4'), true, '5 in 10 minutes');
  now += 601_000;
  assert.equal(throttle.blocked('1.2.3.4'), false);
});
