// App session keys (/apps/auth) with a real RSA key pair: valid, tampered, disabled app, expired.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { OffsetClock } from './helpers.ts';

const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pubkeyBody = (publicKey.export({ type: 'spki', format: 'der' })).toString('base64');
const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;

const signFor = (key: KeyObject, appid: string, version: string, temp: string) =>
  sign('sha1', Buffer.from(`${appid}:${version}:${temp}`), key).toString('base64');

async function server(t: Parameters<typeof startTestServer>[0], clock = new OffsetClock()): Promise<TestServer> {
  return startTestServer(t, {
    clock,
    settings: { api: { apps: { 'com.example.app:1.0': { pubkey: pubkeyBody }, 'com.example.app:0.9': { pubkey: pubkeyBody, enabled: false } } } },
  });
}

async function temporary(s: TestServer): Promise<{ unverifiedKey: string; validUntil: number }> {
  const res = await s.api('/apps/auth', { key: null });
  assert.equal(res.status, 200);
  return await res.json() as { unverifiedKey: string; validUntil: number };
}

const verify = (s: TestServer, body: Record<string, string>) => s.api('/apps/auth', { key: null, method: 'POST', json: body });

test('a correctly signed temporary key becomes a working API key', async (t) => {
  const s = await server(t);
  const temp = await temporary(s);
  assert.ok(temp.validUntil > Date.now() / 1000 && temp.validUntil < Date.now() / 1000 + 3600);
  assert.equal((await s.api('/api/version', { key: temp.unverifiedKey })).status, 403, 'unverified keys unlock nothing');
  const res = await verify(s, { appid: 'com.example.app', appversion: '1.0', key: temp.unverifiedKey, _sig: signFor(privateKey, 'com.example.app', '1.0', temp.unverifiedKey) });
  assert.equal(res.status, 200);
  const verified = await res.json() as { key: string; validUntil: number };
  assert.equal(verified.key, temp.unverifiedKey);
  assert.ok(verified.validUntil > temp.validUntil);
  assert.equal((await s.api('/api/version', { key: verified.key })).status, 200);
  assert.equal((await s.api('/api/version', { key: null, headers: { Authorization: `Bearer ${verified.key}` } })).status, 200);
});

test('a tampered or foreign signature unlocks nothing', async (t) => {
  const s = await server(t);
  const temp = await temporary(s);
  const sig = Buffer.from(signFor(privateKey, 'com.example.app', '1.0', temp.unverifiedKey), 'base64');
  sig[10] ^= 0xff;
  const tampered = await verify(s, { appid: 'com.example.app', appversion: '1.0', key: temp.unverifiedKey, _sig: sig.toString('base64') });
  assert.equal(tampered.status, 403);
  assert.ok((await tampered.json() as { error: string }).error);
  assert.equal((await s.api('/api/version', { key: temp.unverifiedKey })).status, 403);
  // The failed attempt consumed the temporary key: even a correct signature now fails.
  const retry = await verify(s, { appid: 'com.example.app', appversion: '1.0', key: temp.unverifiedKey, _sig: signFor(privateKey, 'com.example.app', '1.0', temp.unverifiedKey) });
  assert.equal(retry.status, 403);

  const temp2 = await temporary(s);
  const foreign = await verify(s, { appid: 'com.example.app', appversion: '1.0', key: temp2.unverifiedKey, _sig: signFor(other, 'com.example.app', '1.0', temp2.unverifiedKey) });
  assert.equal(foreign.status, 403);
  const temp3 = await temporary(s);
  const wrongData = await verify(s, { appid: 'com.example.app', appversion: '1.0', key: temp3.unverifiedKey, _sig: signFor(privateKey, 'com.example.app', '1.1', temp3.unverifiedKey) });
  assert.equal(wrongData.status, 403);
  assert.equal((await s.api('/api/version', { key: temp3.unverifiedKey })).status, 403);
});

test('a disabled or unknown app version cannot verify keys; missing fields are 400', async (t) => {
  const s = await server(t);
  const temp = await temporary(s);
  const disabled = await verify(s, { appid: 'com.example.app', appversion: '0.9', key: temp.unverifiedKey, _sig: signFor(privateKey, 'com.example.app', '0.9', temp.unverifiedKey) });
  assert.equal(disabled.status, 403);
  assert.equal((await s.api('/api/version', { key: temp.unverifiedKey })).status, 403);
  const temp2 = await temporary(s);
  const unknown = await verify(s, { appid: 'com.other', appversion: '1.0', key: temp2.unverifiedKey, _sig: signFor(privateKey, 'com.other', '1.0', temp2.unverifiedKey) });
  assert.equal(unknown.status, 403);
  const missing = await verify(s, { appid: 'com.example.app', key: temp2.unverifiedKey });
  assert.equal(missing.status, 400);
});

test('temporary and verified keys expire', async (t) => {
  const clock = new OffsetClock();
  const s = await server(t, clock);
  const temp = await temporary(s);
  clock.advance(2 * 60_000);
  const late = await verify(s, { appid: 'com.example.app', appversion: '1.0', key: temp.unverifiedKey, _sig: signFor(privateKey, 'com.example.app', '1.0', temp.unverifiedKey) });
  assert.equal(late.status, 403);

  const fresh = await temporary(s);
  const ok = await verify(s, { appid: 'com.example.app', appversion: '1.0', key: fresh.unverifiedKey, _sig: signFor(privateKey, 'com.example.app', '1.0', fresh.unverifiedKey) });
  const verified = await ok.json() as { key: string; validUntil: number };
  assert.equal((await s.api('/api/version', { key: verified.key })).status, 200);
  clock.offset = verified.validUntil * 1000 - Date.now() + 1_000;
  assert.equal((await s.api('/api/version', { key: verified.key })).status, 403);
});
