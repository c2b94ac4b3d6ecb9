// Back-pressure: a push client that stops reading its socket neither holds up the other clients nor grows the
// server's memory without bound; it is dropped once its unsent backlog passes the limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { rawClient, userWithKey, sleep } from './push-clients.ts';

test('a stalled client is dropped while a reading client receives every event', async (t) => {
  const server = await startTestServer(t);
  const { auth } = await userWithKey(server, 'reader');
  const good = await rawClient(server);
  const stalled = await rawClient(server);
  t.after(() => { good.close(); stalled.ws.terminate(); });
  for (const c of [good, stalled]) c.send({ auth });
  await Promise.all([good.next('history'), stalled.next('history')]);
  const closed: string[] = [];
  server.events.on('test', 'ClientClosed', (p) => closed.push(p.remoteAddress));

  // Stop reading: the kernel buffers fill, then the server's own buffer for this client grows. (ws.pause() rather
  // than pausing the socket itself, which ws would resume when its parser drains.)
  stalled.ws.pause();
  const blob = 'x'.repeat(100_000);
  const COUNT = 400; // 40 MB: well beyond the kernel socket buffers plus the 4 MiB per-client limit
  const BATCH = 20;
  const isPath = (path: string) => (e: { payload: { path?: string } }) => e.payload?.path === path;
  for (let i = 0; i < COUNT; i++) {
    server.events.emit('MetadataStatisticsUpdated', { storage: 'local', path: `f${i}.gcode`, blob });
    // The reading client reads at its own pace (on a slow machine slower than a tight loop can emit); the next batch
    // goes out once it has this one, so only the stalled client falls behind.
    if (i % BATCH === BATCH - 1) await good.next('event', isPath(`f${i}.gcode`), { timeoutMs: 30_000 });
  }
  await good.next('event', isPath(`f${COUNT - 1}.gcode`), { timeoutMs: 30_000 });
  const got = good.ofType('event').filter((e) => (e as { type: string }).type === 'MetadataStatisticsUpdated');
  assert.equal(got.length, COUNT);

  const end = Date.now() + 20_000;
  while (server.push.clientCount > 1 && Date.now() < end) await sleep(50);
  assert.equal(server.push.clientCount, 1, 'the stalled client was dropped');
  assert.equal(closed.length, 1);

  // The remaining client keeps working.
  server.events.emit('PrinterProfileAdded', { identifier: 'after' });
  await good.next('event', (e: { type: string }) => e.type === 'PrinterProfileAdded');
});
