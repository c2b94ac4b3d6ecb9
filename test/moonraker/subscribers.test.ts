// Ten subscribed clients while printing: each follows the print (printing → complete), one snapshot per tick is shared
// by all of them. How fast the print streams with them against none is a figure for a quiet machine:
// bench/moonraker-clients.ts (here it is only printed, since the suite shares the cores).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connectedServer } from '../helpers/connected-server.ts';
import { GCODE_DIR } from '../helpers/shared-data.ts';
import { nextEvent, waitFor } from '../helpers/wait.ts';
import { RpcClient, mergeStatus } from './rpc-client.ts';
import type { TestServer } from '../helpers/server.ts';

const FILE = join(GCODE_DIR, 'cura-4.8.0_ce3_3dbenchy.gcode');

async function timedPrint(server: TestServer): Promise<number> {
  const done = nextEvent(server.events, 'PrintDone', undefined, 120_000);
  const started = performance.now();
  const r = await server.api('/printer/print/start?filename=benchy.gcode', { method: 'POST' });
  assert.equal(r.status, 200);
  await done;
  return performance.now() - started;
}

test('10 subscribed clients while printing: all follow it, one snapshot per tick', async (t) => {
  const server = await connectedServer(t, { gcodeAnalysis: { runAt: 'never' } });
  const form = new FormData();
  form.append('file', new Blob([await readFile(FILE)]), 'benchy.gcode');
  assert.equal((await server.api('/server/files/upload', { method: 'POST', body: form })).status, 201);

  const alone = await timedPrint(server);
  const clients = await Promise.all(Array.from({ length: 10 }, () => RpcClient.open(`${server.url}/websocket`, { 'X-Api-Key': server.apiKey })));
  t.after(() => { for (const c of clients) c.close(); });
  const { objects } = await clients[0].call<{ objects: string[] }>('printer.objects.list');
  const views = await Promise.all(clients.map(async (c) => {
    await c.call('server.connection.identify', { client_name: 'load', version: '1', type: 'other', url: 'x' });
    return (await c.call<{ status: Record<string, Record<string, unknown>> }>('printer.objects.subscribe', { objects: Object.fromEntries(objects.map((o) => [o, null])) })).status;
  }));
  const ticksBefore = server.moonraker!.snapshotsComputed;
  const t0 = performance.now();
  const loaded = await timedPrint(server);
  const ticks = server.moonraker!.snapshotsComputed - ticksBefore;
  // Ticks are 250 ms: one snapshot each, not one per client.
  assert.ok(ticks <= Math.ceil((performance.now() - t0) / 250) + 2, `${ticks} snapshots in ${Math.round(performance.now() - t0)} ms`);
  // The first tick after subscribing repeats the earlier print's 'complete': this print's is the one after 'printing'
  // (the test once read the progress before that last tick came and saw 0.955).
  const states = (c: RpcClient) => c.notifications.filter((n) => n.method === 'notify_status_update')
    .map((n) => (n.params![0] as { print_stats?: { state?: string } }).print_stats?.state).filter(Boolean);
  await Promise.all(clients.map((c, i) => waitFor(`client ${i} sees the print complete`, () => {
    const seen = states(c);
    return seen.lastIndexOf('complete') > seen.indexOf('printing') && seen.includes('printing');
  })));
  clients.forEach((c, i) => {
    const seen = states(c);
    assert.ok(seen.includes('printing') && seen.includes('complete'), `client ${i} saw ${seen.join(',')}`);
    assert.equal(mergeStatus(views[i], c.notifications).virtual_sdcard.progress, 1);
  });
  const ratio = alone / loaded;
  t.diagnostic(`print alone ${Math.round(alone)} ms, with 10 subscribed clients ${Math.round(loaded)} ms: streaming ratio ${ratio.toFixed(2)} (shared machine)`);
});
