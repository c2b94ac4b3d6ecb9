// The wall clock jumps (a board without a real-time clock sets its time from NTP after boot, a hand-set clock is
// corrected): what measures time spans keeps measuring them. Only the server's main thread sees the jump here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { connectedServer, FAST_PRINTER } from '../../helpers/connected-server.ts';
import { startTestServer } from '../../helpers/server.ts';
import { nextEvent, waitFor } from '../../helpers/wait.ts';
import { HOUR_MS, jumpClock } from '../../helpers/clock-jump.ts';

/** One layer (no Z change after the first), many moves: the journal is written only by its interval, never by a layer. */
function oneLayer(moves: number): string {
  const lines = ['G28', 'G90', 'M82', 'G92 E0', 'G1 Z0.2 F600'];
  for (let i = 0; i < moves; i++) lines.push(`G1 X${10 + (i % 2) * 10} Y${10 + (i % 100) * 0.5} E${((i + 1) * 0.02).toFixed(2)} F1200`);
  return `${lines.join('\n')}\n`;
}

interface Journal { status: string; executed: { filepos: number } }
const journalOf = (baseDir: string): Promise<Journal | null> =>
  readFile(join(baseDir, 'data', 'print-journal.json'), 'utf8').then((text) => JSON.parse(text) as Journal, () => null);

test('the print journal goes on being written after the wall clock jumps back an hour mid-print', async (t) => {
  const s = await connectedServer(t, {
    // Each 10 mm move takes 5 ms: 2,000 of them print for ≈ 10 s.
    devel: { virtualPrinter: { ...FAST_PRINTER.devel.virtualPrinter, throttle: 0.01 } },
    recovery: { journalInterval: 0.5, journalTick: 0.05 },
  });
  const form = new FormData();
  form.set('file', new Blob([oneLayer(2000)]), 'flat.gcode');
  assert.equal((await s.api('/api/files/local', { method: 'POST', body: form })).status, 201);
  assert.equal((await s.api('/api/files/local/flat.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
  const before = await waitFor('a journal write past the start', async () => {
    const j = await journalOf(s.baseDir);
    return j?.status === 'printing' && j.executed.filepos > 0 ? j : undefined;
  });

  jumpClock(t, -HOUR_MS);
  // Written again within a few intervals, while the print still runs (before, nothing until the clock caught up).
  const after = await waitFor('a journal write after the jump', async () => {
    const j = await journalOf(s.baseDir);
    return j && j.executed.filepos > before.executed.filepos ? j : undefined;
  }, 5_000);
  assert.equal(after.status, 'printing');
  assert.equal(s.printer.state().flags.printing, true, 'the print was still running: the write came from its interval');
});

test('a request body that stalled is still cut when the wall clock jumped back an hour', async (t) => {
  const s = await startTestServer(t, { settings: { server: { connections: { bodyTimeout: 1, bodyMinRate: 64 } } } });
  const socket = connect({ host: '127.0.0.1', port: s.port });
  t.after(() => socket.destroy());
  socket.on('error', () => {});
  socket.resume();
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  // The guard's own 'request' listener came first: once this one runs, the body is being watched.
  const watched = new Promise<void>((resolve) => s.app.server.once('request', () => resolve()));
  socket.write('POST /api/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"user":"');
  await watched;
  jumpClock(t, -HOUR_MS);
  // A 1 s window checked every 250 ms: cut within 1.25 s on a quiet machine (before, only once the clock caught up).
  const cut = await Promise.race([closed.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 6_000))]);
  assert.equal(cut, true, 'the stalled body was not cut within 6 s');
});

test('an SD transfer during which the wall clock jumped an hour ahead reports the seconds it took', async (t) => {
  const s = await connectedServer(t);
  await waitFor('SD ready', () => s.printer.sdReady());
  const started = nextEvent(s.events, 'TransferStarted');
  const done = nextEvent(s.events, 'TransferDone', () => true, 30_000);
  const form = new FormData();
  form.set('file', new Blob([oneLayer(200)]), 'card.gcode');
  assert.equal((await s.api('/api/files/sdcard', { method: 'POST', body: form })).status, 201);
  await started;
  jumpClock(t, HOUR_MS);
  const { time } = await done;
  // Before, the hour counted: time ≈ 3,600 s.
  assert.ok(time !== undefined && time >= 0 && time < 60, `TransferDone time ${time} s`);
});
