// The print history (data/print-history.json, files' `prints`): cancelled and failed prints, kept across a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestServer } from '../../helpers/server.ts';
import { connectedServer, waitFor } from '../helpers.ts';
import { uploadFile, jobCommand, job, recorder, smallGcode, type Json } from './helpers.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const now = (): number => Date.now() / 1000;

async function historyOf(s: TestServer): Promise<Json[]> {
  return JSON.parse(await readFile(join(s.baseDir, 'data', 'print-history.json'), 'utf8').catch(() => '[]')) as Json[];
}

test('print history: a cancelled and a failed print are recorded with result and times, and survive a restart', async (t) => {
  const baseDir = await mkdtemp(join(tmpdir(), 'gantry-history-'));
  const servers: TestServer[] = [];
  // Registered first, so it runs first: both servers are down before their base dir goes.
  t.after(async () => {
    for (const server of servers) await server.stop();
    await rm(baseDir, { recursive: true, force: true });
  });
  const settings = { devel: { virtualPrinter: { throttle: 0.02, busyInterval: 0.2 } } };
  const s = await connectedServer(t, settings, { baseDir });
  servers.push(s);
  const rec = recorder(s);
  const last = (name: string): Json | undefined => rec.events.filter((e) => e.name === name).at(-1)?.payload;
  const printing = (): Promise<unknown> => waitFor('printing on', async () => ((await job(s)).progress.filepos ?? 0) > 3000 || undefined, 30_000);
  assert.equal((await uploadFile(s, 'long.gcode', smallGcode(3000), [{ name: 'select', value: 'true' }])).status, 201);

  // Cancelled after a pause: the pause is left out of the duration.
  const before1 = now();
  assert.equal(await jobCommand(s, 'start'), 204);
  await printing();
  assert.equal(await jobCommand(s, 'pause', 'pause'), 204);
  await waitFor('Paused', async () => (await job(s)).state === 'Paused' || undefined, 20_000);
  await sleep(500);
  assert.equal(await jobCommand(s, 'cancel'), 204);
  await waitFor('PrintFailed (cancelled)', () => last('PrintFailed'), 20_000);
  const after1 = now();
  const [cancelled] = await waitFor('the cancel in the history', async () => ((await historyOf(s)).length === 1 ? historyOf(s) : undefined));
  assert.deepEqual({ ...cancelled, start: 0, end: 0, duration: 0 }, {
    origin: 'local', path: 'long.gcode', name: 'long.gcode', start: 0, end: 0, duration: 0, result: 'cancelled', user: '_api',
    printerProfile: '_default',
  });
  assert.ok(before1 <= cancelled.start && cancelled.start < cancelled.end && cancelled.end <= after1, JSON.stringify(cancelled));
  assert.ok(cancelled.duration > 0 && cancelled.duration <= cancelled.end - cancelled.start - 0.4, `paused time excluded: ${JSON.stringify(cancelled)}`);
  assert.equal(cancelled.duration, last('PrintCancelled')!.time);

  // Failed: the printer vanishes mid-print.
  await waitFor('Operational', async () => (await job(s)).state === 'Operational' || undefined, 20_000);
  const before2 = now();
  assert.equal(await jobCommand(s, 'start'), 204);
  await printing();
  assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { command: '!!DEBUG:disconnect' } })).status, 204);
  const failedEvent = await waitFor('PrintFailed (error)', () => rec.events.find((e) => e.name === 'PrintFailed' && e.payload.reason === 'error')?.payload, 20_000);
  const after2 = now();
  const history = await waitFor('the failure in the history', async () => { const h = await historyOf(s); return h.length === 2 ? h : undefined; });
  assert.deepEqual(history[0], cancelled, 'the earlier entry is kept as it was');
  const failed = history[1];
  assert.equal(failed.result, 'failed');
  assert.equal(failed.path, 'long.gcode');
  assert.equal(typeof failed.error, 'string');
  assert.ok(failed.error.length > 0);
  assert.equal(failed.error, failedEvent.error);
  assert.ok(before2 <= failed.start && failed.start < failed.end && failed.end <= after2, JSON.stringify(failed));
  assert.ok(cancelled.end <= failed.start);
  assert.ok(failed.duration > 0 && failed.duration <= failed.end - failed.start + 0.01, JSON.stringify(failed));
  assert.equal(failed.duration, failedEvent.time);
  const prints = async (server: TestServer): Promise<Json> => ((await (await server.api('/api/files/local/long.gcode')).json()) as Json).prints;
  const printsBefore = await waitFor('both failures on the file', async () => { const p = await prints(s); return p?.failure === 2 ? p : undefined; });

  // Restart on the same base dir: nothing is lost, and new prints are added to what was there.
  await s.stop();
  const s2 = await connectedServer(t, settings, { baseDir });
  servers.push(s2);
  assert.deepEqual(await historyOf(s2), history);
  assert.deepEqual(await prints(s2), printsBefore);
  const rec2 = recorder(s2);
  assert.equal((await uploadFile(s2, 'short.gcode', smallGcode(10), [{ name: 'print', value: 'true' }])).status, 201);
  await waitFor('PrintDone after the restart', () => rec2.names().includes('PrintDone') || undefined, 30_000);
  const all = await waitFor('three entries', async () => { const h = await historyOf(s2); return h.length === 3 ? h : undefined; });
  assert.deepEqual(all.slice(0, 2), history);
  assert.equal(all[2].result, 'success');
  assert.equal(all[2].path, 'short.gcode');
  assert.ok(all[2].start >= failed.end);
});
