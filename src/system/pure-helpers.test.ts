// Pure helpers of the admin area: CIDR arithmetic, archive member paths, log names, status specs, content-type patterns.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contains, lanSubnetOf, parseAddress, parseCidr, subnetToString } from './net-address.ts';
import { archiveKind, safeMemberPath } from './archive-extract.ts';
import { isBareName } from './log-files.ts';
import { contentTypeMatches, parseStatusSpec } from './url-test.ts';

test('CIDR parsing, networks and membership for IPv4, IPv6 and mapped addresses', () => {
  assert.equal(subnetToString(parseCidr('192.168.1.77/24')!), '192.168.1.0/24');
  assert.equal(subnetToString(parseCidr('fe80::fc:ff:fe00:1/64')!), 'fe80::/64');
  assert.equal(subnetToString(parseCidr('::1/128')!), '::1/128');
  assert.equal(subnetToString(parseCidr('2001:db8:0:0:1:0:0:1/128')!), '2001:db8::1:0:0:1/128');
  assert.equal(subnetToString(parseCidr('10.1.2.3/0')!), '0.0.0.0/0');
  assert.ok(contains(parseCidr('2001:db8::/32')!, '2001:db8:ffff::9'));
  assert.ok(!contains(parseCidr('2001:db8::/32')!, '2001:db9::1'));
  assert.ok(contains(parseCidr('10.0.0.0/8')!, '::ffff:10.9.8.7'));
  assert.ok(!contains(parseCidr('10.0.0.0/8')!, '::1'));
  assert.equal(parseAddress('::ffff:1.2.3.4')?.v, 4);
  assert.equal(parseAddress('1.2.3.4.5'), undefined);
  assert.equal(parseAddress('1::2::3'), undefined);
  assert.equal(parseCidr('10.0.0.0/33'), undefined);
  const nets = [parseCidr('10.0.0.0/8')!, parseCidr('10.1.0.0/16')!];
  assert.equal(subnetToString(lanSubnetOf('10.1.2.3', nets)!), '10.1.0.0/16', 'most specific network wins');
  assert.equal(lanSubnetOf('11.0.0.1', nets), undefined);
});

test('archive member paths stay below the root', () => {
  const root = '/srv/x';
  assert.equal(safeMemberPath(root, 'de/LC_MESSAGES/messages.mo'), '/srv/x/de/LC_MESSAGES/messages.mo');
  assert.equal(safeMemberPath(root, './de/./a'), '/srv/x/de/a');
  for (const bad of ['../x', 'de/../../x', '/etc/passwd', 'C:/x', 'de\\..\\x', '', 'a/\u0000b']) {
    assert.throws(() => safeMemberPath(root, bad), /Unsafe path/, JSON.stringify(bad));
  }
  assert.deepEqual(['a.zip', 'a.TAR.GZ', 'a.tgz', 'a.tar', 'a.rar', 'a.gz', 'zip'].map(archiveKind), ['zip', 'tgz', 'tgz', 'tar', undefined, undefined, undefined]);
});

test('log names are single plain path segments', () => {
  assert.ok(isBareName('gantry.log'));
  assert.ok(isBareName('20261121-serial.log.1'));
  for (const bad of ['', '.', '..', 'a/b', 'a\\b', '../x', 'x\n']) assert.ok(!isBareName(bad), JSON.stringify(bad));
});

test('status specs and content-type patterns', () => {
  assert.deepEqual(parseStatusSpec(undefined), [[100, 399]]);
  assert.deepEqual(parseStatusSpec(204), [[204, 204]]);
  assert.deepEqual(parseStatusSpec(['success', '404']), [[200, 299], [404, 404]]);
  assert.throws(() => parseStatusSpec('fine'), /Invalid status/);
  assert.throws(() => parseStatusSpec([{}]), /Invalid status/);
  assert.ok(contentTypeMatches('image/jpeg', 'image/*'));
  assert.ok(contentTypeMatches('IMAGE/JPEG', 'image/jpeg'));
  assert.ok(contentTypeMatches('text/plain', '*/*'));
  assert.ok(!contentTypeMatches('text/plain', 'image/*'));
  assert.ok(!contentTypeMatches('imagex/png', 'image/*'));
});
