// HTTP/1.1 pipelining: a connection with more requests unanswered than MAX_REQUESTS_IN_FLIGHT is closed; one request at a time on a kept-alive connection goes on for ever.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { MAX_REQUESTS_IN_FLIGHT } from '../../src/http/connection-guard.ts';

function open(s: TestServer): Promise<Socket> {
  const { port } = new URL(s.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

const request = (s: TestServer, path: string): string => `GET ${path} HTTP/1.1\r\nHost: localhost\r\nX-Api-Key: ${s.apiKey}\r\n\r\n`;
const statusLines = (text: string): number => text.match(/HTTP\/1\.1 200 /g)?.length ?? 0;

test('200 requests pipelined in one write: the connection is closed, not 200 requests worked on at once', async (t) => {
  const s = await startTestServer(t);
  const socket = await open(s);
  t.after(() => socket.destroy());
  let received = '';
  socket.on('data', (d: Buffer) => { received += d.toString('latin1'); });
  socket.on('error', () => {}); // the reset of a connection closed with unread requests
  // Closed, or (where nothing limits a connection) every answer in: either way the wait ends.
  const closedOrAnswered = new Promise<void>((resolve) => {
    socket.once('close', () => resolve());
    socket.on('data', () => { if (statusLines(received) === 200) resolve(); });
  });
  socket.write(request(s, '/api/settings').repeat(200));
  await closedOrAnswered;
  assert.ok(statusLines(received) < 200, `${statusLines(received)} answers: the connection should have been closed`);
  // The server is up and answers others.
  assert.equal((await s.api('/api/version')).status, 200);
});

test(`one request at a time on a kept-alive connection: far more than ${MAX_REQUESTS_IN_FLIGHT} in turn are all answered`, async (t) => {
  const s = await startTestServer(t);
  const socket = await open(s);
  t.after(() => socket.destroy());
  let received = '';
  let waiting: (() => void) | undefined;
  socket.on('data', (d: Buffer) => {
    received += d.toString('latin1');
    waiting?.();
  });
  const n = 3 * MAX_REQUESTS_IN_FLIGHT;
  for (let i = 1; i <= n; i++) {
    const answered = new Promise<void>((resolve) => {
      waiting = () => { if (statusLines(received) >= i && received.endsWith('}')) resolve(); };
    });
    socket.write(request(s, '/api/version'));
    await answered;
  }
  assert.equal(statusLines(received), n);
  assert.equal(socket.destroyed, false);
});

test(`${MAX_REQUESTS_IN_FLIGHT} requests pipelined are all answered, in order`, async (t) => {
  const s = await startTestServer(t);
  const socket = await open(s);
  t.after(() => socket.destroy());
  let received = '';
  const all = new Promise<void>((resolve) => {
    socket.on('data', (d: Buffer) => {
      received += d.toString('latin1');
      if (statusLines(received) === MAX_REQUESTS_IN_FLIGHT && received.endsWith('}')) resolve();
    });
  });
  socket.write(request(s, '/api/version').repeat(MAX_REQUESTS_IN_FLIGHT));
  await all;
  assert.equal(socket.destroyed, false);
});
