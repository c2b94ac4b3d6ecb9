// GET /apps/auth is anonymous: the unverified keys it hands out are bounded per client address and in total, and
// nothing is kept at all while no app is configured (such a key could never be verified).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { generateKeyPairSync, sign } from 'node:crypto';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { AppSessionKeys } from '../../src/access/app-sessions.ts';
import { OffsetClock } from './helpers.ts';

const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pubkey = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');

function getFrom(s: TestServer, localAddress: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    request(`${s.url}/apps/auth`, { localAddress }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    }).on('error', reject).end();
  });
}

test('anonymous callers get at most 10 outstanding keys per address; others still get theirs; a used key frees a slot', async (t) => {
  const s = await startTestServer(t, { settings: { api: { apps: { 'com.example.app:1.0': { pubkey } } } } });
  const keys: string[] = [];
  for (let i = 0; i < 10; i++) {
    const r = await getFrom(s, '127.0.0.2');
    assert.equal(r.status, 200);
    keys.push(String(r.body.unverifiedKey));
  }
  const refused = await getFrom(s, '127.0.0.2');
  assert.equal(refused.status, 429);
  assert.match(String(refused.body.error), /unverified app session keys/);
  assert.equal((await getFrom(s, '127.0.0.3')).status, 200, 'another client is not affected');
  assert.equal(s.access.appSessions.pendingCount(), 11);
  // Completing a handshake turns one pending key into a session key: that client may start another.
  const sig = sign('sha1', Buffer.from(`com.example.app:1.0:${keys[0]}`), privateKey).toString('base64');
  const verified = await s.api('/apps/auth', { key: null, method: 'POST', json: { appid: 'com.example.app', appversion: '1.0', key: keys[0], _sig: sig } });
  assert.equal(verified.status, 200);
  assert.equal((await getFrom(s, '127.0.0.2')).status, 200);
});

test('with no app configured, 500 calls keep nothing', async (t) => {
  const s = await startTestServer(t);
  const replies = await Promise.all(Array.from({ length: 500 }, () => s.api('/apps/auth', { key: null })));
  assert.ok(replies.every((r) => r.status === 200));
  const body = await replies[0].json() as { unverifiedKey: string; validUntil: number };
  assert.match(body.unverifiedKey, /^[A-Za-z0-9_-]{20,}$/);
  assert.ok(body.validUntil > Date.now() / 1000);
  assert.equal(s.access.appSessions.pendingCount(), 0);
});

test('the total is capped across addresses, and expired keys free their slots', () => {
  const clock = new OffsetClock();
  const keys = new AppSessionKeys(() => ({ 'a:1': { pubkey } }), clock, { maxPending: 50, maxPendingPerClient: 10 });
  for (let i = 0; i < 50; i++) keys.createTemporary(`10.0.0.${i}`);
  assert.throws(() => keys.createTemporary('10.0.1.1'), /Too many/);
  assert.equal(keys.pendingCount(), 50);
  clock.advance(61_000);
  assert.equal(keys.pendingCount(), 0);
  keys.createTemporary('10.0.1.1');
});
