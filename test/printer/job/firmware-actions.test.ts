// Job changes the firmware asks for or reports (`//action:pause|paused|resume|resumed|cancel`) on the virtual printer:
// they run through the job owner, with the API's events and scripts, and no script for what the firmware did itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { connectedServer, waitFor } from '../helpers.ts';
import { uploadFile, jobCommand, job, recorder } from './helpers.ts';
import { SMALL_GCODE } from '../../helpers/shared-data.ts';
import { needs } from '../../helpers/tools.ts';

test('firmware actions: paused/resumed change the job without scripts, pause/resume/cancel run them like the API', { skip: needs('shared-data') }, async (t) => {
  const s = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.1, busyInterval: 0.2 } } });
  const settings = await s.api('/api/settings', { method: 'POST', json: { scripts: { gcode: {
    afterPrintPaused: 'M117 after paused', beforePrintResumed: 'M117 before resumed',
  } } } });
  assert.equal(settings.status, 200);
  const rec = recorder(s);
  const count = (name: string): number => rec.names().filter((n) => n === name).length;
  const firmware = async (action: string): Promise<void> => {
    const r = await s.api('/api/printer/command', { method: 'POST', json: { command: `!!DEBUG:action ${action}` } });
    assert.equal(r.status, 204);
  };
  assert.equal((await uploadFile(s, 'corpus.gcode', await readFile(SMALL_GCODE))).status, 201);
  assert.equal((await s.api('/api/files/local/corpus.gcode', { method: 'POST', json: { command: 'select' } })).status, 204);
  assert.equal(await jobCommand(s, 'start'), 204);
  await waitFor('printing past the start', async () => ((await job(s)).progress.filepos ?? 0) > 4000 || undefined, 60_000);

  // The firmware paused by itself (its display, a runout sensor handled on the board): Paused, event, no script.
  await firmware('paused');
  await waitFor('Paused (firmware)', async () => (await job(s)).state === 'Paused' || undefined, 30_000);
  assert.equal(count('PrintPaused'), 1);
  assert.equal(rec.events.find((e) => e.name === 'PrintPaused')!.payload.user, undefined, 'no user paused it');
  assert.equal(count('GcodeScriptAfterPrintPausedRunning'), 0);
  const posAtPause = (await job(s)).progress.filepos as number;

  await firmware('resumed');
  await waitFor('Printing (firmware resumed)', async () => (await job(s)).state === 'Printing' || undefined, 30_000);
  assert.equal(count('PrintResumed'), 1);
  assert.equal(count('GcodeScriptBeforePrintResumedRunning'), 0);
  await waitFor('progress after the resume', async () => ((await job(s)).progress.filepos ?? 0) > posAtPause || undefined, 30_000);

  // The firmware asks the host to pause and resume: as if a client had asked, scripts included.
  await firmware('pause');
  await waitFor('Paused (asked)', async () => (await job(s)).state === 'Paused' || undefined, 30_000);
  await waitFor('afterPrintPaused ran', () => count('GcodeScriptAfterPrintPausedRunning') === 1 || undefined);
  assert.equal(count('PrintPaused'), 2);
  await firmware('resume');
  await waitFor('Printing (asked)', async () => (await job(s)).state === 'Printing' || undefined, 30_000);
  assert.equal(count('GcodeScriptBeforePrintResumedRunning'), 1);
  assert.equal(count('PrintResumed'), 2);
  // Paused time is left out of the print time: both pauses were accounted for, so the job is not "paused" now.
  assert.equal(typeof (await job(s)).progress.printTime, 'number');

  await firmware('cancel');
  await waitFor('PrintCancelled', () => count('PrintCancelled') === 1 || undefined, 30_000);
  assert.equal(count('PrintCancelling'), 1);
  // The script runs once the cancel has stopped the stream, which may be just after PrintCancelled.
  await waitFor('afterPrintCancelled ran', () => count('GcodeScriptAfterPrintCancelledRunning') === 1 || undefined);
  await waitFor('Operational', async () => (await job(s)).state === 'Operational' || undefined, 30_000);
  // A cancel the firmware asked for is no firmware error.
  assert.equal(rec.events.find((e) => e.name === 'PrintCancelling')!.payload.firmwareError, undefined);
});

test('a firmware error that leaves the link up cancels the print, and PrintCancelling carries it as firmwareError', { skip: needs('shared-data') }, async (t) => {
  const s = await connectedServer(t, { serial: { disconnectOnErrors: false }, devel: { virtualPrinter: { throttle: 0.1, busyInterval: 0.2 } } });
  const rec = recorder(s);
  assert.equal((await uploadFile(s, 'corpus.gcode', await readFile(SMALL_GCODE))).status, 201);
  assert.equal((await s.api('/api/files/local/corpus.gcode', { method: 'POST', json: { command: 'select' } })).status, 204);
  assert.equal(await jobCommand(s, 'start'), 204);
  await waitFor('printing past the start', async () => ((await job(s)).progress.filepos ?? 0) > 4000 || undefined, 60_000);
  const r = await s.api('/api/printer/command', { method: 'POST', json: { command: '!!DEBUG:send Error:Probing failed' } });
  assert.equal(r.status, 204);
  const cancelling = await waitFor('PrintCancelling', () => rec.events.find((e) => e.name === 'PrintCancelling')?.payload, 30_000);
  assert.equal(cancelling.firmwareError, 'Probing failed');
  assert.equal(cancelling.path, 'corpus.gcode');
  await waitFor('PrintCancelled', () => rec.names().includes('PrintCancelled') || undefined, 30_000);
  await waitFor('Operational', async () => (await job(s)).state === 'Operational' || undefined, 30_000);
  assert.ok(!rec.names().includes('Disconnected'), 'the link stays up');
  const failed = await waitFor('PrintFailed', () => rec.events.find((e) => e.name === 'PrintFailed')?.payload, 10_000);
  assert.equal(failed.reason, 'cancelled');
});

test('serial.logPositionOnCancel: the cancel queries the position (M400, M114) and PrintCancelled and the script get it', { skip: needs('shared-data') }, async (t) => {
  const s = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.1, busyInterval: 0.2 } } });
  const settings = await s.api('/api/settings', { method: 'POST', json: {
    serial: { logPositionOnCancel: true },
    scripts: { gcode: { afterPrintCancelled: 'M117 cancelled at X{{ cancel_position.x }} Z{{ cancel_position.z }}' } },
  } });
  assert.equal(settings.status, 200);
  const rec = recorder(s);
  assert.equal((await uploadFile(s, 'corpus.gcode', await readFile(SMALL_GCODE))).status, 201);
  assert.equal((await s.api('/api/files/local/corpus.gcode', { method: 'POST', json: { command: 'select' } })).status, 204);
  assert.equal(await jobCommand(s, 'start'), 204);
  await waitFor('printing past the start', async () => ((await job(s)).progress.filepos ?? 0) > 4000 || undefined, 60_000);
  assert.equal(await jobCommand(s, 'cancel'), 204);
  const cancelled = await waitFor('PrintCancelled', () => rec.events.find((e) => e.name === 'PrintCancelled'), 30_000);
  const pos = cancelled.payload.position as Record<string, number | null>;
  assert.equal(typeof pos.x, 'number');
  assert.equal(typeof pos.z, 'number');
  const failed = await waitFor('PrintFailed', () => rec.events.find((e) => e.name === 'PrintFailed'), 30_000);
  assert.deepEqual(failed.payload, cancelled.payload, 'PrintFailed repeats the cancel, position included');
  const terminal = (): string[] => s.printer.terminal();
  const script = await waitFor('the script with the position', () => terminal().find((l) => /^Send: (N\d+ )?M117 cancelled at/.test(l)), 30_000);
  assert.match(script, new RegExp(`M117 cancelled at X${pos.x} Z${pos.z}`));
  // The query went out after the cancel, before the script.
  const sent = terminal().filter((l) => l.startsWith('Send: '));
  const m114 = sent.findLastIndex((l) => /M114/.test(l));
  assert.ok(m114 >= 0 && m114 < sent.findIndex((l) => /M117 cancelled at/.test(l)));
});
