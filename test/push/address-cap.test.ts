// Push connections per client address are capped (`server.connections.maxPerAddress`, the host's own addresses
// exempt): SockJS polling sessions hold no socket between polls, so the socket cap alone does not bound them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** One SockJS xhr-polling request on a socket of its own (closed after the answer, so the socket cap never counts it). */
function xhr(s: TestServer, session: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: s.port, method: 'POST', path: `/sockjs/000/${session}/xhr`, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { body += d; });
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

test('an address gets maxPerAddress push sessions; the next is closed with 4029 unless the address is exempt', async (t) => {
  const s = await startTestServer(t, { settings: { server: { connections: { maxPerAddress: 3, uncapped: [] } } } });
  for (const session of ['one', 'two', 'three']) {
    assert.equal(await xhr(s, session), 'o\n');
    assert.match(await xhr(s, session), /^a\[.*connected/, `${session} gets connected`);
  }
  assert.equal(await xhr(s, 'four'), 'o\n');
  assert.equal(await xhr(s, 'four'), 'c[4029,"Too many push connections from this address"]\n');
  assert.equal(s.push.clientCount, 3);
  // A reverse proxy on this host speaks for every client: its address is exempt.
  await s.config.patch({ server: { connections: { maxPerAddress: 3, uncapped: ['127.0.0.1'] } } });
  assert.equal(await xhr(s, 'five'), 'o\n');
  assert.match(await xhr(s, 'five'), /^a\[.*connected/);
  assert.equal(s.push.clientCount, 4);
});
