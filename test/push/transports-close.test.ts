// Closing the push transports at a stop: every client gets its close (SockJS frame or websocket close) and the close is over when they have it, not after the grace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { attachPushTransports, type PushConnection } from '../../src/push/transports.ts';
import { silentLogger } from '../../src/core/logger.ts';

test('a stop closes SockJS (xhr-streaming) and websocket clients politely and is over once they have their close, long before the grace', async (t) => {
  const server = createServer((_req, res) => { res.writeHead(404).end(); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => { server.closeAllConnections(); server.close(); });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const connections: PushConnection[] = [];
  const transports = attachPushTransports(server, { logger: silentLogger, allowCrossOrigin: () => true, onConnection: (c) => connections.push(c) });

  // A SockJS client on xhr-streaming: its open frame, then whatever the server sends until the response ends.
  let streamed = '';
  let ended: () => void = () => undefined;
  const streamEnded = new Promise<void>((resolve) => { ended = resolve; });
  const opened = new Promise<void>((resolve, reject) => {
    const req = request(`${base}/sockjs/000/closing/xhr_streaming`, { method: 'POST' }, (res: IncomingMessage) => {
      res.on('data', (d: Buffer) => { streamed += d.toString(); if (/^o$/m.test(streamed)) resolve(); });
      res.on('end', () => ended());
      res.on('error', () => ended());
    });
    req.on('error', reject);
    req.end();
  });
  await opened;
  const ws = new WebSocket(`${base.replace('http', 'ws')}/sockjs/websocket`);
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
  const wsClosed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  assert.equal(connections.length, 2);

  // Before, the SockJS session reported its end only after its 5 s wait for the client's return (a stop waited out its
  // 1 s grace); now it is over once the close frame is on its way (≈ 0.1 s here).
  let bound: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    transports.close(60_000).then(() => 'closed'),
    new Promise((resolve) => { bound = setTimeout(() => resolve('still closing after 3 s'), 3_000); }),
  ]);
  clearTimeout(bound);
  assert.equal(outcome, 'closed');
  await streamEnded;
  assert.match(streamed, /^c\[1001,"Server shutting down"\]$/m, 'the SockJS client got its close frame');
  assert.equal(await wsClosed, 1001, 'the websocket client got its close');
});
