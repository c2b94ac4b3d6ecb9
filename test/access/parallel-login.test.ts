// The failed-login limit holds under concurrency: attempts are counted before the password is checked, per client
// address and per user name, and 100 parallel logins never answer 500.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addUser } from './helpers.ts';

/** POST /api/login from a chosen loopback source address (Linux answers all of 127/8). */
function loginFrom(s: TestServer, localAddress: string, user: string, pass: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ user, pass });
    const req = request(`${s.url}/api/login`, {
      method: 'POST', localAddress, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
    }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)); });
    req.on('error', reject);
    req.end(body);
  });
}

/** Counts how many credential checks really run (the ~90 ms scrypt an attacker wants to run many of). */
function countVerifications(s: TestServer): { n: number } {
  const counter = { n: 0 };
  const original = s.access.checkCredentials.bind(s.access);
  s.access.checkCredentials = async (name, password) => { counter.n++; return original(name, password); };
  return counter;
}

test('100 parallel logins for one user, the right password among them: at most 3 are verified, the rest 429, no 500', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  const verified = countVerifications(s);
  const statuses = await Promise.all(Array.from({ length: 100 }, (_, i) =>
    s.api('/api/login', { key: null, method: 'POST', json: { user: 'bob', pass: i === 50 ? 'hunter22' : `guess-${i}` } }).then((r) => r.status)));
  const tally = (code: number) => statuses.filter((x) => x === code).length;
  assert.equal(statuses.filter((x) => ![200, 403, 429].includes(x)).length, 0, `unexpected statuses ${statuses.join(',')}`);
  assert.ok(verified.n <= 3, `${verified.n} passwords verified`);
  assert.ok(tally(200) + tally(403) <= 3, `${tally(200)}×200 ${tally(403)}×403`);
  assert.equal(tally(429), 100 - tally(200) - tally(403));
  // The window is used up by failures: even the right password is refused now.
  assert.equal((await s.api('/api/login', { key: null, method: 'POST', json: { user: 'bob', pass: 'hunter22' } })).status, 429);
});

test('parallel logins with the right password answer 200 or 429, never 500, and leave the limit unused', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  const statuses = await Promise.all(Array.from({ length: 100 }, () =>
    s.api('/api/login', { key: null, method: 'POST', json: { user: 'bob', pass: 'hunter22' } }).then((r) => r.status)));
  assert.ok(statuses.every((x) => x === 200 || x === 429), statuses.join(','));
  assert.ok(statuses.filter((x) => x === 200).length >= 1);
  // Successful logins give their attempt back: sequential logins keep working afterwards.
  for (let i = 0; i < 4; i++) assert.equal((await s.api('/api/login', { key: null, method: 'POST', json: { user: 'bob', pass: 'hunter22' } })).status, 200);
});

test('the limit holds per user name across client addresses, and per address across user names', async (t) => {
  const s = await startTestServer(t);
  await addUser(s, 'bob', 'hunter22');
  await addUser(s, 'eve', 'pw-eve-1');
  // Three addresses, one failure each, all against bob: bob is locked, also from a fresh address.
  for (const a of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) assert.equal(await loginFrom(s, a, 'bob', 'wrong'), 403);
  assert.equal(await loginFrom(s, '127.0.0.5', 'bob', 'hunter22'), 429);
  // Others are not affected by bob's lock.
  assert.equal(await loginFrom(s, '127.0.0.5', 'eve', 'pw-eve-1'), 200);
  // One address, three names: the address is locked, whichever name it tries next.
  for (const name of ['x1', 'x2', 'x3']) assert.equal(await loginFrom(s, '127.0.0.6', name, 'nope'), 403);
  assert.equal(await loginFrom(s, '127.0.0.6', 'eve', 'pw-eve-1'), 429);
});
