// The job streaming primitive end to end on the virtual printer: a file streamed to the end, pause/resume/cancel with
// the printer's states, progress by byte position, and a job surviving injected line corruption.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { connectedServer, waitFor } from '../helpers.ts';
import { fileLineSource } from '../../../src/printer/job/file-line-source.ts';
import { SdJob } from '../../../src/printer/job/sd-job.ts';
import type { ConnectionStateId } from '../../../src/printer/printer-state.ts';

function gcode(lines: number): string {
  const out = ['; generated test file', 'G28', 'G90', 'M104 S0'];
  for (let i = 0; i < lines; i++) out.push(`G1 X${(i % 100) + 1} Y${(i % 50) + 1} E${(i * 0.01).toFixed(2)} F3000 ; move ${i}`);
  out.push('M400', '');
  return out.join('\n');
}

test('a file streams to the end: progress in bytes, Printing then Operational, done', async (t) => {
  const s = await connectedServer(t);
  const file = join(s.baseDir, 'job.gcode');
  await writeFile(file, '\ufeff' + gcode(300));
  const size = (await stat(file)).size;
  const states: ConnectionStateId[] = [];
  let progress = 0;
  const stream = s.printer.streamJob(fileLineSource(file), {
    progress: (p) => { progress = p; },
    stateChanged: (st) => states.push(st),
    finished: () => {},
  }, { epilogue: ['M117 done'] });
  assert.equal(await stream.done, 'done');
  assert.equal(stream.filepos, size);
  assert.equal(progress, size);
  assert.deepEqual(states, ['STARTING', 'PRINTING', 'FINISHING', 'OPERATIONAL']);
  assert.equal(s.printer.state().text, 'Operational');
  assert.equal(s.printer.currentZ(), null);
  await waitFor('epilogue sent', () => s.printer.terminal().some((l) => /^Send: N\d+ M117 done\*\d+$/.test(l)) || undefined);
});

test('pause, resume and cancel move through the printer states', async (t) => {
  const s = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.02 } } });
  const file = join(s.baseDir, 'long.gcode');
  await writeFile(file, gcode(5000));
  const stream = s.printer.streamJob(fileLineSource(file), { finished: () => {} }, { onCancel: ['M117 cancelled'] });
  await waitFor('Printing', () => s.printer.state().text === 'Printing' || undefined);
  await stream.pause();
  assert.equal(s.printer.state().text, 'Paused');
  assert.equal(s.printer.state().flags.paused, true);
  assert.equal(s.printer.state().flags.printing, false);
  const pausedAt = stream.filepos;
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(stream.filepos, pausedAt, 'no file lines are sent while paused');
  assert.ok(s.printer.lastPosition().x !== null, 'the position was recorded on pause');
  stream.resume();
  await waitFor('Printing again', () => s.printer.state().text === 'Printing' || undefined);
  await waitFor('progress after resume', () => stream.filepos > pausedAt || undefined);
  await stream.cancel();
  assert.equal(await stream.done, 'cancelled');
  assert.equal(s.printer.state().text, 'Operational');
  await waitFor('cancel script', () => s.printer.terminal().some((l) => /M117 cancelled/.test(l)) || undefined);
});

test('a job survives a corrupted line every 25 (resends) and a dropped ok every 150', async (t) => {
  const s = await connectedServer(t, { devel: { virtualPrinter: { resendEveryN: 25, dropOkEveryN: 150 } }, serial: { timeout: { communication: 1, temperature: 0.5 }, capabilities: { autoreport_temp: false } } });
  const file = join(s.baseDir, 'noisy.gcode');
  await writeFile(file, gcode(400));
  const stream = s.printer.streamJob(fileLineSource(file), { finished: () => {} });
  assert.equal(await stream.done, 'done');
  assert.ok(s.printer.resends().count > 0);
  assert.equal(s.printer.state().text, 'Operational');
});

test('the link dropping mid-print ends the job with error and Offline after error', async (t) => {
  const s = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.02 } } });
  const file = join(s.baseDir, 'drop.gcode');
  await writeFile(file, gcode(2000));
  let error = '';
  const stream = s.printer.streamJob(fileLineSource(file), { finished: (_o, _p, e) => { error = e ?? ''; } });
  await waitFor('Printing', () => s.printer.state().text === 'Printing' || undefined);
  const r = await s.api('/api/printer/command', { method: 'POST', json: { command: 'M112' } });
  assert.equal(r.status, 204);
  assert.equal(await stream.done, 'error');
  assert.match(error, /emergency stop/);
  assert.equal(s.printer.state().text, 'Offline after error');
  const p = await s.api('/api/printer');
  assert.equal(p.status, 409);
  const conn = (await (await s.api('/api/connection')).json()) as { current: { state: string } };
  assert.equal(conn.current.state, 'Offline after error');
});

test('an SD print driven by the job runner shows the "from SD" state texts', async (t) => {
  const s = await connectedServer(t);
  const texts: string[] = [];
  s.events.on('test', 'PrinterStateChanged', (p) => texts.push(p.state_string));
  // The SD driver's handle on the link's one lifecycle: a second job is refused while it runs.
  const sd = s.printer.beginSdJob();
  sd.move('STARTING');
  sd.move('PRINTING');
  assert.throws(() => s.printer.beginSdJob(), /already printing/);
  assert.equal(s.printer.state().text, 'Printing from SD');
  assert.equal(s.printer.state().flags.printing, true);
  const r = await s.api('/api/printer/printhead', { method: 'POST', json: { command: 'jog', x: 1 } });
  assert.equal(r.status, 409);
  sd.move('PAUSED');
  assert.equal(s.printer.state().text, 'Paused');
  sd.move('PRINTING');
  sd.end();
  assert.equal(s.printer.state().text, 'Operational');
  assert.deepEqual(texts, ['Starting print from SD', 'Printing from SD', 'Paused', 'Printing from SD', 'Operational']);

  // The SD driver itself on that lifecycle: a file the card does not have ends the job with the firmware's error, and
  // the printer's state leaves Printing (the driver's end is the link's, not a copy of it).
  const ended: Array<{ outcome: string; error?: string }> = [];
  const job = new SdJob(s.printer, 'no-such-file.gco', { finished: (outcome, _pos, error) => ended.push({ outcome, error }) },
    { pollSeconds: 1, logPositionOnPause: false, positionLogWaitMs: 1000 });
  job.start();
  assert.equal(s.printer.state().text, 'Printing from SD');
  assert.equal(await job.done, 'error');
  assert.match(ended[0]?.error ?? '', /open failed/);
  assert.equal(job.state, 'ENDED');
  assert.equal(s.printer.state().text, 'Operational');
  assert.equal(texts.at(-1), 'Operational');
});

for (const [name, settings, flow] of [
  ['ADVANCED_OK', { devel: { virtualPrinter: { advancedOk: true, resendEveryN: 40 } } }, 'advanced-ok'],
  ['a 127-byte receive buffer', { serial: { rxBufferSize: 127 }, devel: { virtualPrinter: { resendEveryN: 40 } } }, 'send-ahead'],
] as const) {
  test(`send-ahead with ${name} streams a file to the end on the simulator, through resends`, async (t) => {
    const s = await connectedServer(t, settings);
    const file = join(s.baseDir, 'ahead.gcode');
    await writeFile(file, gcode(600));
    const stream = s.printer.streamJob(fileLineSource(file), { finished: () => {} });
    assert.equal(await stream.done, 'done');
    assert.equal(s.printer.flowControl(), flow);
    assert.ok(s.printer.resends().count > 0);
    assert.equal(s.printer.state().text, 'Operational');
  });
}
