// Access timeouts kept in memory (sessions, login blocks, app key requests, app session keys) follow the time that
// passed, not the wall clock: that one jumps when NTP sets a board's time after boot or a hand-set clock is corrected.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import type { Clock } from '../../src/core/clock.ts';
import { SessionStore } from '../../src/access/sessions.ts';
import { LoginThrottle } from '../../src/access/login-throttle.ts';
import { AppKeyService } from '../../src/access/appkeys.ts';
import { AppSessionKeys } from '../../src/access/app-sessions.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const HOUR = 3_600_000;

/** Time the test moves by hand: `pass` moves both clocks, `jump` the wall clock alone. */
class JumpingClock implements Clock {
  private wall = Date.UTC(2026, 10, 28);
  private mono = 1_000;
  now(): number { return this.wall; }
  monotonic(): number { return this.mono; }
  pass(ms: number): void { this.wall += ms; this.mono += ms; }
  jump(ms: number): void { this.wall += ms; }
}

test('a login session outlives the wall clock jumping ahead of its validity, and still ends when its time has passed', () => {
  const clock = new JumpingClock();
  const sessions = new SessionStore(clock, () => HOUR);
  const s = sessions.create('alice', 'http');
  clock.jump(2 * HOUR);
  assert.equal(sessions.get(s.id)?.user, 'alice', 'ended by a jump of the wall clock');
  clock.pass(HOUR + 1);
  assert.equal(sessions.get(s.id), undefined, 'an hour without use ends it');
});

test('a blocked login address is let in again when its minute has passed, though the wall clock jumped back an hour', () => {
  const clock = new JumpingClock();
  const throttle = new LoginThrottle(clock);
  for (let i = 0; i < 3; i++) throttle.recordFailure('10.0.0.9');
  assert.equal(throttle.blocked('10.0.0.9'), true);
  assert.equal(throttle.retryAfter('10.0.0.9'), 60);
  clock.jump(-HOUR);
  assert.equal(throttle.retryAfter('10.0.0.9'), 60, 'the wait did not grow by the jump');
  clock.pass(60_001);
  assert.equal(throttle.blocked('10.0.0.9'), false, 'blocked an hour longer');
});

test('an app key request that keeps polling survives a jump of the wall clock; one that stops polling times out', async (t) => {
  const clock = new JumpingClock();
  const keys = new AppKeyService(`${await tempDir(t, 'gantry-appkeys-')}/keys.yaml`, clock, { idleMs: 5_000, maxMs: 600_000 });
  await keys.start();
  t.after(() => keys.stop());
  const polling = keys.request('Slicer', null, '10.0.0.5');
  const quiet = keys.request('Phone', null, '10.0.0.6');
  clock.jump(HOUR);
  assert.deepEqual(await keys.poll(polling.appToken), { state: 'pending' }, 'timed out by a jump of the wall clock');
  clock.pass(4_000);
  assert.deepEqual(await keys.poll(polling.appToken), { state: 'pending' });
  clock.pass(2_000);
  keys.sweep();
  assert.deepEqual(await keys.poll(polling.appToken), { state: 'pending' });
  assert.equal(await keys.poll(quiet.appToken), undefined, 'no poll for 6 s: timed out');
});

test('an app session key stays valid through a jump of the wall clock and ends when its time has passed; the app is told its end in wall-clock time', () => {
  const clock = new JumpingClock();
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
  const apps = { 'Remote:1.0': { pubkey: publicKey.export({ type: 'spki', format: 'pem' }).toString() } };
  const sessions = new AppSessionKeys(() => apps, clock, { unverifiedMs: 60_000, verifiedMs: 2 * HOUR });
  const temporary = sessions.createTemporary('10.0.0.7');
  assert.equal(temporary.validUntil, clock.now() + 60_000);
  clock.jump(HOUR);
  const signature = sign('sha1', Buffer.from(`Remote:1.0:${temporary.key}`), privateKey).toString('base64');
  const verified = sessions.verify('Remote', '1.0', temporary.key, signature);
  assert.equal(verified.validUntil, clock.now() + 2 * HOUR);
  clock.jump(-3 * HOUR);
  clock.pass(HOUR);
  assert.equal(sessions.isValid(verified.key), true, 'an hour into two it is valid, whatever the wall clock says');
  clock.jump(5 * HOUR);
  assert.equal(sessions.isValid(verified.key), true, 'ended by a jump of the wall clock');
  clock.pass(HOUR + 1);
  assert.equal(sessions.isValid(verified.key), false, 'two hours have passed');
});
