// A printer reset mid-print (`start` with the port open): the cause is told apart (API, event, history), and resume
// runs the recovery script then streams the rest of the file from the resume line, nothing before it again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connectedServer, waitFor } from '../printer/helpers.ts';
import { uploadFile, job, recorder } from '../printer/job/helpers.ts';
import { journalOnDisk, layeredGcode, zAfterLines, type Json } from './helpers.ts';

/** `N12 G1 X1*34` → `G1 X1`; comments and blanks are never sent. */
const command = (sent: string): string => sent.replace(/^N\d+\s+/, '').replace(/\*\d+$/, '').trim();
const fileCommand = (l: string): string => l.replace(/;.*/, '').trim();

test('printer reset mid-print: cause reported, resume runs the recovery script and streams the rest from the resume line', async (t) => {
  const s = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.05, busyInterval: 0.2 } } });
  const rec = recorder(s);
  const sent: string[] = [];
  s.printer.subscribe({ log: (lines) => { for (const l of lines) if (l.startsWith('Send: ')) sent.push(command(l.slice(6))); } });
  const gcode = layeredGcode(8, 15, 20);
  assert.equal((await uploadFile(s, 'part.gcode', gcode)).status, 201);
  assert.equal((await s.api('/api/files/local/part.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
  await waitFor('journal at layer 2', async () => {
    const j = await journalOnDisk(s.baseDir);
    return j && (j.layer ?? -1) >= 2 ? j : undefined;
  }, 60_000);

  assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { command: '!!DEBUG:reset' } })).status, 204);
  const failed = await waitFor('PrintFailed', () => rec.events.find((e) => e.name === 'PrintFailed'), 20_000);
  assert.equal(failed.payload.interruption.cause, 'printer-reset');
  const jobDoc = await job(s);
  assert.equal(jobDoc.interruption.cause, 'printer-reset');
  assert.equal(typeof jobDoc.interruption.line, 'number');
  assert.ok(rec.names().includes('PrintRecoveryAvailable'));
  const history = await waitFor('history written', () => readFile(join(s.baseDir, 'data', 'print-history.json'), 'utf8').then((t) => JSON.parse(t) as Json[], () => undefined));
  assert.equal(history.at(-1)!.result, 'failed');
  assert.equal(history.at(-1)!.interruption.cause, 'printer-reset');
  assert.equal(history.at(-1)!.interruption.line, jobDoc.interruption.line);

  const offer = (await (await s.api('/api/plugin/recovery')).json()) as Json;
  assert.equal(offer.available, true);
  assert.equal(offer.cause, 'printer-reset');
  assert.equal(offer.line, jobDoc.interruption.line);
  await waitFor('Operational', async () => (await job(s)).state === 'Operational' || undefined, 20_000);

  // Only lines before the acknowledged one may be asked for; a later one is refused.
  const tooLate = await s.api('/api/plugin/recovery', { method: 'POST', json: { command: 'resume', line: offer.acknowledged.line + 50 } });
  assert.equal(tooLate.status, 400);

  const mark = sent.length;
  const r = await s.api('/api/plugin/recovery', { method: 'POST', json: { command: 'resume' } });
  assert.equal(r.status, 200, await r.clone().text());
  const resumed = (await r.json()) as Json;
  assert.equal(resumed.line, offer.line);
  assert.ok(rec.names().includes('PrintRecovered'));
  await waitFor('PrintDone', () => rec.names().includes('PrintDone') || undefined, 60_000);
  // The terminal log comes in batches: wait for the file's last line in it.
  await waitFor('last line logged', () => sent.slice(mark).includes('M140 S0') || undefined);

  const after = sent.slice(mark).filter((l) => !/^M105\b|^M110\b|^M155\b|^M27\b/.test(l));
  const z = zAfterLines(gcode, offer.line - 1);
  assert.equal(offer.z, z);
  // The recovery script first: heat, home X/Y only, Z set from the journal (never homed), E restored.
  const script = after.slice(0, after.indexOf('G92 E' + String(Math.round(Number(/E([\d.]+)/.exec(gcode.split('\n').slice(0, offer.line - 1).filter((l) => /^G1 .*E/.test(l)).at(-1) ?? 'E0')![1]) * 1e5) / 1e5)) + 1);
  assert.ok(script.includes('M109 S200') && script.includes('M190 S60'), script.join(' | '));
  assert.ok(script.includes('G28 X Y'));
  assert.ok(!script.some((l) => /^G28(?!.*X Y)/.test(l)), 'Z is not homed');
  assert.ok(script.includes(`G92 Z${z}`), script.join(' | '));
  assert.ok(script.at(-1)!.startsWith('G92 E'));
  // Then the file from the resume line to its end, each line once, nothing from before it.
  const rest = gcode.split('\n').slice(offer.line - 1).map(fileCommand).filter(Boolean);
  const streamed = after.slice(script.length).filter((l) => l !== 'M400');
  const fromScriptEnd = streamed.slice(streamed.indexOf(rest[0]));
  assert.deepEqual(fromScriptEnd.slice(0, rest.length), rest);
  const between = streamed.slice(0, streamed.indexOf(rest[0]));
  assert.ok(between.every((l) => !/^G1 X/.test(l)), `only the script's restore lines before the file: ${between.join(' | ')}`);
  // A normal end clears the journal.
  await waitFor('journal cleared', async () => (await journalOnDisk(s.baseDir)) === null || undefined);
  assert.deepEqual(await (await s.api('/api/plugin/recovery')).json(), { available: false });
});

test('the port vanishing mid-print is told apart from a reset: cause port-vanished in the job, the event and the offer', async (t) => {
  // Without reconnecting by itself (the virtual port never goes away, so it would be back at once).
  const s = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.05, busyInterval: 0.2 } }, recovery: { autoReconnect: false } });
  const rec = recorder(s);
  assert.equal((await uploadFile(s, 'part.gcode', layeredGcode(8, 15, 20))).status, 201);
  assert.equal((await s.api('/api/files/local/part.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
  await waitFor('journal at layer 1', async () => ((await journalOnDisk(s.baseDir))?.layer ?? -1) >= 1 || undefined, 60_000);
  assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { command: '!!DEBUG:disconnect' } })).status, 204);
  const failed = await waitFor('PrintFailed', () => rec.events.find((e) => e.name === 'PrintFailed'), 20_000);
  assert.equal(failed.payload.interruption.cause, 'port-vanished');
  assert.equal((await job(s)).interruption.cause, 'port-vanished');
  const offer = (await (await s.api('/api/plugin/recovery')).json()) as Json;
  assert.equal(offer.available, true);
  assert.equal(offer.cause, 'port-vanished');
  // Offline: a resume is refused until the printer is connected again.
  assert.equal((await s.api('/api/plugin/recovery', { method: 'POST', json: { command: 'resume' } })).status, 409);
  await waitFor('cause on disk', async () => (await journalOnDisk(s.baseDir))?.cause === 'port-vanished' || undefined);
});
