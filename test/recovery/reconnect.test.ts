// A pulled cable through a real pty: fakefw is killed mid-print and a fresh one comes back on the same path. Without
// a reset (it still has its line counter) Gantry reconnects by itself and the print goes on, every file line reaching
// the firmware exactly once; when the counter cannot be placed, nothing is sent and the offer says why.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { waitFor, stateText } from '../printer/helpers.ts';
import { uploadFile, recorder, type Json } from '../printer/job/helpers.ts';
import { layeredGcode } from './helpers.ts';
import { command, isLinkChatter, fakeFwPrinter, setLineCounter, startLoggedFw, type LoggedFw } from './fakefw.ts';

const fileCommands = (gcode: string): string[] => gcode.split('\n').map((l) => l.replace(/;.*/, '').trim()).filter(Boolean);
const fileLinesIn = (received: string[]): string[] => received.map(command).filter((c) => c !== '' && !isLinkChatter(c));

async function rig(t: TestContext, serial: Record<string, unknown> = {}): Promise<{ s: TestServer; dir: string; port: string; fw: LoggedFw }> {
  // -d: 2 ms a line, so the print is still running when the cable is pulled.
  const { dir, port, fw } = await fakeFwPrinter(t, 'gantry-reconnect-', ['-d', '2000']);
  const s = await startTestServer(t, {
    settings: { serial: { additionalPorts: [port], log: false, ...serial }, recovery: { reconnectDelay: 0.2, reconnectMaxDelay: 0.4, probeTimeout: 2 } },
  });
  const r = await s.api('/api/connection', { method: 'POST', json: { command: 'connect', port, baudrate: 115200 } });
  assert.equal(r.status, 204);
  await waitFor('Operational', async () => (await stateText(s)) === 'Operational' || undefined);
  return { s, dir, port, fw };
}

/** Pulls the cable: fakefw dies and its device node goes (as a USB device's does). */
async function pull(fw: LoggedFw, port: string): Promise<void> {
  await fw.kill();
  await unlink(port);
}

/** Plugs it back: a fresh fakefw, its line counter set first, appears at the same path in one step. */
async function plugBack(t: TestContext, dir: string, port: string, counter: number): Promise<LoggedFw> {
  const staging = join(dir, 'ttyUSB-staging');
  const fw = await startLoggedFw(staging, ['-d', '2000']);
  t.after(() => fw.kill());
  setLineCounter(staging, counter);
  await rename(staging, port);
  return fw;
}

// Ping-pong has one line in flight at the pull; send-ahead several (and one pulled ahead, unsent).
for (const [mode, serial] of [['ping-pong', {}], ['send-ahead', { rxBufferSize: 128 }]] as const) {
  test(`cable pulled mid-print and back without a reset (${mode}): reconnects by itself, continues, every file line reaches the firmware once`, async (t) => {
    const { s, dir, port, fw } = await rig(t, serial);
    const rec = recorder(s);
    const gcode = layeredGcode(12, 80);
    assert.equal((await uploadFile(s, 'part.gcode', gcode)).status, 201);
    assert.equal((await s.api('/api/files/local/part.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
    await waitFor('300 file lines at the firmware', () => fileLinesIn(fw.received).length >= 300 || undefined, 30_000);

    await pull(fw, port);
    const failed = await waitFor('PrintFailed', () => rec.events.find((e) => e.name === 'PrintFailed'), 10_000);
    assert.equal(failed.payload.interruption.cause, 'port-vanished');
    // The board kept running: its counter is the number of the last line it read whole.
    const lastTaken = fw.received.filter((l) => /^N\d+ /.test(l)).at(-1)!;
    const counter = Number(/^N(\d+)/.exec(lastTaken)![1]);
    const fw2 = await plugBack(t, dir, port, counter);

    const recovered = await waitFor('PrintRecovered', () => rec.events.find((e) => e.name === 'PrintRecovered'), 20_000);
    assert.equal(recovered.payload.automatic, true);
    await waitFor('PrintDone', () => rec.names().includes('PrintDone') || undefined, 60_000);

    // Before the pull and after the return, together: the whole file, each line once, in order.
    const before = fileLinesIn(fw.received);
    const after = fileLinesIn(fw2.received);
    assert.ok(before.length >= 300 && after.length > 0, `${before.length} before, ${after.length} after`);
    assert.equal(after[0], fileCommands(gcode)[before.length], 'continues with the first line the firmware did not get');
    assert.deepEqual([...before, ...after], fileCommands(gcode));
    // Nothing else from the file went to the firmware after the return (no recovery script: it did not reset).
    assert.ok(!fw2.received.map(command).some((c) => /^G28/.test(c)), 'no homing after a reconnect without a reset');
    assert.deepEqual(await (await s.api('/api/plugin/recovery')).json(), { available: false });
  });
}

test('back with a line counter that matches nothing sent: no line is sent, the offer stays with the reason', async (t) => {
  const { s, dir, port, fw } = await rig(t);
  const rec = recorder(s);
  assert.equal((await uploadFile(s, 'part.gcode', layeredGcode(12, 80))).status, 201);
  assert.equal((await s.api('/api/files/local/part.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
  await waitFor('200 file lines at the firmware', () => fileLinesIn(fw.received).length >= 200 || undefined, 30_000);
  await pull(fw, port);
  await waitFor('PrintFailed', () => rec.events.find((e) => e.name === 'PrintFailed'), 10_000);
  // 5: long before the lines sent last (as if the board had restarted its count without saying `start`).
  const fw2 = await plugBack(t, dir, port, 5);
  const offer = await waitFor('offer with the reconnect outcome', async () => {
    const o = (await (await s.api('/api/plugin/recovery')).json()) as Json;
    return o.reconnect ? o : undefined;
  }, 20_000);
  assert.equal(offer.available, true);
  assert.equal(offer.reconnect.outcome, 'unsure');
  assert.match(offer.reconnect.reason, /line counter \(5\)/);
  assert.equal(await stateText(s), 'Operational');
  assert.equal(rec.names().filter((n) => n === 'PrintStarted').length, 1, 'no print started by itself');
  assert.deepEqual(fileLinesIn(fw2.received), [], 'no file line was sent');
});
