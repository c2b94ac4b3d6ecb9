// Unit tests: client address classification and the failed-login throttle windows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import fc from 'fast-check';
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

test('subnet matching agrees with node:net BlockList on generated addresses and subnets', () => {
  const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((b) => b.join('.'));
  // Mostly-zero groups so that '::' compression and shared prefixes come up often.
  const group = fc.oneof(fc.constant(0), fc.constant(0), fc.nat(0xffff), fc.constantFrom(0xfe80, 0xfc00, 0xfd12, 0xffff));
  const v6 = fc.tuple(fc.array(group, { minLength: 8, maxLength: 8 }), fc.boolean()).map(([g, compress]) => {
    const full = g.map((x) => x.toString(16)).join(':');
    return compress ? full.replace(/(^|:)0(:0)+(:|$)/, '::') : full;
  });
  const addr = fc.oneof(v4, v6, v4.map((a) => `::ffff:${a}`));
  const cidr = fc.oneof(fc.tuple(v4, fc.nat(32)), fc.tuple(v6, fc.nat(128))).map(([a, p]) => `${a}/${p}`);
  fc.assert(fc.property(fc.array(cidr, { maxLength: 4 }), fc.array(addr, { minLength: 1, maxLength: 6 }), (cidrs, addrs) => {
    const reference = new BlockList();
    for (const c of cidrs) {
      const [net, bits] = c.split('/');
      reference.addSubnet(net, Number(bits), isIPv4(net) ? 'ipv4' : 'ipv6');
    }
    const ours = networkList(cidrs);
    for (const a of addrs) {
      const plain = a.startsWith('::ffff:') && isIPv4(a.slice(7)) ? a.slice(7) : a;
      const expected = reference.check(plain, isIPv4(plain) ? 'ipv4' : 'ipv6');
      assert.equal(inNetworks(a, ours), expected, `${a} in ${cidrs.join(', ')}`);
    }
  }), { numRuns: 300 });
});

test('malformed subnets and addresses match nothing; scoped link-local addresses are local', () => {
  for (const bad of ['garbage', '1.2.3.4/33', '1.2.3/8', '01.2.3.4/8', '1.2.3.4/8/1', '::1::/8', '1:2:3:4:5:6:7:8:9/64', 'fe80::/x', '::/129']) {
    assert.equal(inNetworks('1.2.3.4', networkList([bad])) || inNetworks('::1', networkList([bad])), false, bad);
  }
  for (const bad of ['', '1.2.3', '256.1.1.1', '1.2.3.4.5', ':::', '1::2::3', 'g::1', '12345::1']) {
    assert.equal(inNetworks(bad, networkList(['0.0.0.0/0', '::/0'])), false, JSON.stringify(bad));
    assert.equal(isIPv4(bad) || isIPv6(bad), false, `node agrees ${bad} is no address`);
  }
  assert.equal(inNetworks('8.8.8.8', networkList(['0.0.0.0/0'])), true);
  assert.equal(inNetworks('8.8.8.8', networkList(['::/0'])), true, 'IPv4 clients are IPv4-mapped IPv6 ones, as for BlockList');
  assert.equal(inNetworks('::1', networkList(['0.0.0.0/0'])), false);
  assert.equal(inNetworks('::ffff:10.0.0.1', networkList(['10.0.0.0/8'])), true);
  assert.equal(inNetworks('64:ff9b::1.2.3.4', networkList(['64:ff9b::/96'])), true);
  assert.equal(isExternalAddress('fe80::1%eth0', []), false);
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
