// A USB drop on the virtual printer: Gantry reconnects by itself, the board restarted on the open (`start`), so the
// offer stays; `resume` with `{"line": N}` or `{"layer": N}` through the API runs the recovery script, then streams
// the file from exactly that line.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer, waitFor, stateText } from '../printer/helpers.ts';
import { uploadFile, recorder } from '../printer/job/helpers.ts';
import { journalOnDisk, layeredGcode, type Json } from './helpers.ts';
import type { TestServer } from '../helpers/server.ts';

const command = (sent: string): string => sent.replace(/^N\d+\s+/, '').replace(/\*\d+$/, '').trim();
// What the link sends by itself (polls, line numbers, the busy keepalive interval once the firmware reports busy, SD status).
const chatter = (l: string): boolean => /^M(105|110|113|115|20|21|27|155|400)\b/.test(l);

async function interrupted(t: TestContext): Promise<{ s: TestServer; gcode: string; sent: string[]; offer: Json; rec: ReturnType<typeof recorder> }> {
  const s = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.05, busyInterval: 0.2 } }, recovery: { reconnectDelay: 0.2, reconnectMaxDelay: 0.5 } });
  const rec = recorder(s);
  const sent: string[] = [];
  s.printer.subscribe({ log: (lines) => { for (const l of lines) if (l.startsWith('Send: ')) sent.push(command(l.slice(6))); } });
  const gcode = layeredGcode(8, 15, 20);
  assert.equal((await uploadFile(s, 'part.gcode', gcode)).status, 201);
  assert.equal((await s.api('/api/files/local/part.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
  await waitFor('journal at layer 3', async () => ((await journalOnDisk(s.baseDir))?.layer ?? -1) >= 3 || undefined, 60_000);
  assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { command: '!!DEBUG:disconnect' } })).status, 204);
  const failed = await waitFor('PrintFailed', () => rec.events.find((e) => e.name === 'PrintFailed'), 20_000);
  assert.equal(failed.payload.interruption.cause, 'port-vanished');
  // Back by itself; the fresh board greets with `start`, so nothing continues on its own.
  const offer = await waitFor('reconnected, offer says reset', async () => {
    const o = (await (await s.api('/api/plugin/recovery')).json()) as Json;
    return o.reconnect?.outcome === 'reset' ? o : undefined;
  }, 20_000);
  await waitFor('Operational', async () => (await stateText(s)) === 'Operational' || undefined, 20_000);
  assert.equal(offer.available, true);
  assert.equal(offer.cause, 'port-vanished');
  assert.ok(!rec.names().includes('PrintRecovered'));
  return { s, gcode, sent, offer, rec };
}

/** After `mark`: the recovery script (it homes X and Y only), then the file from 1-based `line` to its end, once. */
function assertStreamedFrom(sent: string[], mark: number, gcode: string, line: number): void {
  const after = sent.slice(mark).filter((l) => !chatter(l));
  const rest = gcode.split('\n').slice(line - 1).map((l) => l.replace(/;.*/, '').trim()).filter(Boolean);
  const home = after.indexOf('G28 X Y');
  assert.ok(home >= 0, `the recovery script ran: ${after.slice(0, 20).join(' | ')}`);
  assert.ok(!after.slice(0, home).some((l) => /^G1 /.test(l)), 'nothing moved before the script');
  const start = after.indexOf(rest[0], home);
  assert.deepEqual(after.slice(start, start + rest.length), rest);
  const script = after.slice(home, start);
  assert.ok(script.filter((l) => /^G1 X/.test(l)).length <= 1, `only the script's own return move: ${script.join(' | ')}`);
}

test('USB drop, back with a reset: resume {"line": N} through the API streams from line N', async (t) => {
  const { s, gcode, sent, offer, rec } = await interrupted(t);
  const line = offer.line - 25;
  const mark = sent.length;
  const r = await s.api('/api/plugin/recovery', { method: 'POST', json: { command: 'resume', line } });
  assert.equal(r.status, 200, await r.clone().text());
  assert.equal(((await r.json()) as Json).line, line);
  await waitFor('PrintDone', () => rec.names().includes('PrintDone') || undefined, 60_000);
  await waitFor('last line logged', () => sent.slice(mark).includes('M140 S0') || undefined);
  assertStreamedFrom(sent, mark, gcode, line);
});

test('USB drop, back with a reset: resume {"layer": N} through the API streams from the start of layer N', async (t) => {
  const { s, gcode, sent, rec } = await interrupted(t);
  const mark = sent.length;
  const r = await s.api('/api/plugin/recovery', { method: 'POST', json: { command: 'resume', layer: 2 } });
  assert.equal(r.status, 200, await r.clone().text());
  const { line } = (await r.json()) as Json;
  const lines = gcode.split('\n');
  // The resume line opens layer 2: the next command is its Z move.
  assert.equal(lines.slice(line - 1).find((l) => l.trim() && !l.startsWith(';')), 'G1 Z0.60 F600');
  assert.ok(lines.slice(0, line - 1).includes('G1 Z0.40 F600') && !lines.slice(0, line - 1).includes('G1 Z0.60 F600'));
  await waitFor('PrintDone', () => rec.names().includes('PrintDone') || undefined, 60_000);
  await waitFor('last line logged', () => sent.slice(mark).includes('M140 S0') || undefined);
  assertStreamedFrom(sent, mark, gcode, line);
  // Done: nothing is left to resume.
  const again = await s.api('/api/plugin/recovery', { method: 'POST', json: { command: 'resume', layer: 99 } });
  assert.equal(again.status, 409);
});
