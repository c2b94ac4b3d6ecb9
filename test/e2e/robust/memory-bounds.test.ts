// Issue 15 item 10: what load leaves behind is bounded — passive logins (every FDM Monster or push client reconnect
// makes one) no longer pile up sessions for hours; the push clients' state goes with their sockets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { startTestServer } from '../../helpers/server.ts';
import { SessionStore, MAX_SESSIONS_PER_USER } from '../../../src/access/sessions.ts';
import { systemClock } from '../../../src/core/clock.ts';

test('sessions per user are capped: the least recently used one goes first', () => {
  let now = 1_000;
  const store = new SessionStore({ now: () => now, monotonic: () => now }, () => 3_600_000);
  const ended: string[] = [];
  store.onEnd((s) => ended.push(s.id));
  const first = store.create('fdm', 'apikey');
  now++;
  const second = store.create('fdm', 'apikey');
  for (let i = 0; i < MAX_SESSIONS_PER_USER * 3; i++) {
    now++;
    assert.ok(store.get(first.id), 'the session in use stays'); // touched, so it is never the least recently used
    store.create('fdm', 'apikey');
  }
  assert.equal(store.size, MAX_SESSIONS_PER_USER);
  assert.ok(store.get(first.id));
  assert.equal(store.get(second.id), undefined);
  assert.ok(ended.includes(second.id));
  // Another user's sessions are not touched by fdm's churn.
  const other = store.create('browser', 'http');
  for (let i = 0; i < 50; i++) store.create('fdm', 'apikey');
  assert.ok(store.get(other.id));
  void systemClock;
});

test('a thousand passive logins and a hundred push clients leave bounded state once they are gone', async (t) => {
  const s = await startTestServer(t);
  for (let i = 0; i < 1000; i += 50) {
    await Promise.all(Array.from({ length: 50 }, () => s.api('/api/login', { method: 'POST', json: { passive: true } }).then((r) => r.arrayBuffer())));
  }
  assert.ok(s.access.sessions.size <= MAX_SESSIONS_PER_USER, `${s.access.sessions.size} sessions kept`);
  const login = await (await s.api('/api/login', { method: 'POST', json: { passive: true } })).json() as { name: string; session: string };
  const sockets = await Promise.all(Array.from({ length: 100 }, () => new Promise<WebSocket>((resolve, reject) => {
    const ws = new WebSocket(`${s.url.replace('http', 'ws')}/sockjs/websocket`);
    ws.on('open', () => { ws.send(JSON.stringify({ auth: `${login.name}:${login.session}` })); });
    ws.on('message', (d: Buffer) => { if (d.toString('latin1', 0, 11) === '{"history":') resolve(ws); });
    ws.on('error', reject);
  })));
  assert.equal(s.push.clientCount, 100);
  await Promise.all(sockets.map((ws) => new Promise((r) => { ws.on('close', r); ws.close(); })));
  for (let i = 0; i < 100 && s.push.clientCount > 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(s.push.clientCount, 0);
});
