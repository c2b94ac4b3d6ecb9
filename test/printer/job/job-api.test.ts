// Job control through the HTTP API on the virtual printer: the spec's transition table, a print to completion with
// progress and history, and a real slicer file taken through pause → resume → restart → cancel.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../../helpers/server.ts';
import { connectedServer, waitFor } from '../helpers.ts';
import { uploadFile, jobCommand, job, recorder, smallGcode, type Json } from './helpers.ts';
import { SMALL_GCODE } from '../../helpers/shared-data.ts';
import { multipartBody } from '../../files/multipart.ts';
import { needs } from '../../helpers/tools.ts';

const CORPUS = SMALL_GCODE;

test('without a printer every job command is 409; a malformed command is 400; GET /api/job has the start-up shape', async (t) => {
  const s = await startTestServer(t);
  const j = await job(s);
  assert.deepEqual(j.job, { file: { name: null, path: null, size: null, origin: null, date: null }, estimatedPrintTime: null,
    lastPrintTime: null, filament: { length: null, volume: null }, user: null });
  assert.deepEqual(j.progress, { completion: null, filepos: null, printTime: null, printTimeLeft: null, printTimeOrigin: null });
  assert.equal(j.state, 'Offline');
  for (const c of ['start', 'cancel', 'restart', 'pause']) assert.equal(await jobCommand(s, c), 409, c);
  assert.equal(await jobCommand(s, 'frobnicate'), 400);
  assert.equal((await s.api('/api/job', { method: 'POST', json: {} })).status, 400);
  assert.equal((await s.api('/api/job', { method: 'POST', json: { command: 'start' }, key: null })).status, 403);
});

test('connected with no job: start without selection, cancel, restart, pause are 409', async (t) => {
  const s = await connectedServer(t);
  for (const c of ['start', 'cancel', 'restart']) assert.equal(await jobCommand(s, c), 409, c);
  for (const a of [undefined, 'pause', 'resume', 'toggle']) assert.equal(await jobCommand(s, 'pause', a), 409, String(a));
  assert.equal(await jobCommand(s, 'pause', 'sideways'), 400);
});

test('a small file prints to completion: events, progress 100 %, prints/statistics and the history file', async (t) => {
  const s = await connectedServer(t);
  const rec = recorder(s);
  const up = await uploadFile(s, 'small.gcode', smallGcode(60, true), [{ name: 'select', value: 'true' }]);
  assert.equal(up.status, 201);
  const body = await up.json() as Json;
  assert.equal(body.effectiveSelect, true);
  assert.equal(body.effectivePrint, false);
  const selected = await job(s);
  assert.equal(selected.job.file.name, 'small.gcode');
  assert.equal(selected.job.file.origin, 'local');
  assert.equal(selected.progress.printTimeLeftOrigin, null);
  // The analysis finishes in the background and completes the job information.
  const analysed = await waitFor('analysis in job info', async () => {
    const j = await job(s);
    return typeof j.job.estimatedPrintTime === 'number' ? j : undefined;
  }, 20_000);
  assert.equal(typeof analysed.job.filament.tool0.length, 'number');
  assert.ok(analysed.job.estimatedPrintTime > 0);
  assert.equal(await jobCommand(s, 'start'), 204);
  await waitFor('PrintDone', () => rec.names().includes('PrintDone') || undefined, 30_000);
  const done = rec.events.find((e) => e.name === 'PrintDone')!.payload;
  assert.equal(done.name, 'small.gcode');
  assert.equal(done.origin, 'local');
  assert.equal(typeof done.time, 'number');
  const names = rec.names();
  assert.ok(names.indexOf('FileSelected') < names.indexOf('PrintStarted') && names.indexOf('PrintStarted') < names.indexOf('PrintDone'));
  await waitFor('Operational', async () => (await job(s)).state === 'Operational' || undefined);
  // events.md's finish order: the link announces Operational only after the print's end and its statistics.
  const finishOrder = await waitFor('PrinterStateChanged(OPERATIONAL)', () => {
    const ends = endOrder(rec.events);
    const from = ends.lastIndexOf('PrinterStateChanged:FINISHING');
    return ends.indexOf('PrinterStateChanged:OPERATIONAL', from) > from ? ends.slice(from) : undefined;
  });
  assert.deepEqual(finishOrder, ['PrinterStateChanged:FINISHING', 'ChartMarked', 'PrintDone', 'MetadataStatisticsUpdated', 'PrinterStateChanged:OPERATIONAL']);
  const after = await job(s);
  assert.equal(after.progress.completion, 100);
  assert.equal(after.progress.printTimeLeft, 0);
  assert.equal(after.progress.printTimeLeftOrigin, null, 'progress 1: nothing left, no origin');
  // estimatedPrintTime is the statistical total: the average of earlier prints once there is one, not the analysis.
  const statistical = await waitFor('averagePrintTime', async () => { const j = await job(s); return j.job.averagePrintTime !== null ? j : undefined; });
  assert.equal(statistical.job.estimatedPrintTime, statistical.job.averagePrintTime);
  assert.equal(statistical.job.averagePrintTime, done.time);
  assert.notEqual(statistical.job.estimatedPrintTime, analysed.job.estimatedPrintTime);
  assert.equal(after.progress.filepos, Buffer.byteLength(smallGcode(60, true)));
  await waitFor('statistics', async () => ((await (await s.api('/api/files/local/small.gcode')).json()) as Json).prints || undefined);
  const entry = await (await s.api('/api/files/local/small.gcode')).json() as Json;
  assert.equal(entry.prints.success, 1);
  assert.equal(entry.prints.failure, 0);
  assert.equal(entry.prints.last.success, true);
  assert.equal(typeof entry.statistics.lastPrintTime._default, 'number');
  const history = JSON.parse(await readFile(join(s.baseDir, 'data', 'print-history.json'), 'utf8')) as Json[];
  assert.equal(history.length, 1);
  assert.equal(history[0].result, 'success');
  assert.equal(history[0].path, 'small.gcode');
  assert.ok(history[0].end >= history[0].start);
  // Replacing the selected file re-selects it with the new content.
  const selectedBefore = rec.names().filter((n) => n === 'FileSelected').length;
  assert.equal((await uploadFile(s, 'small.gcode', 'G28\n')).status, 201);
  await waitFor('re-selected', () => rec.names().filter((n) => n === 'FileSelected').length > selectedBefore || undefined);
  assert.equal((await job(s)).job.file.size, 4);
  // Deleting the selected (idle) file deselects it.
  assert.equal((await s.api('/api/files/local/small.gcode', { method: 'DELETE' })).status, 204);
  assert.ok(rec.names().includes('FileDeselected'));
  assert.equal((await job(s)).job.file.name, null);
  // Upload with print=true starts at once when the printer is ready.
  const again = await (await uploadFile(s, 'small2.gcode', smallGcode(10), [{ name: 'print', value: 'true' }])).json() as Json;
  assert.equal(again.effectivePrint, true);
  await waitFor('second PrintDone', () => rec.events.filter((e) => e.name === 'PrintDone').length === 2 || undefined, 30_000);
});

/** The job and link events in order, states as `PrinterStateChanged:<id>` (what events.md's orders list). */
function endOrder(events: Array<{ name: string; payload: Json }>): string[] {
  return events.filter((e) => /^(Print(?!er)|ChartMarked$|MetadataStatisticsUpdated$|PrinterStateChanged$)/.test(e.name))
    .map((e) => (e.name === 'PrinterStateChanged' ? `${e.name}:${e.payload.state_id}` : e.name));
}

test('a real slicer file: pause → resume → restart → cancel with the transition table, scripts and guards', { skip: needs('shared-data') }, async (t) => {
  const s = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.1, busyInterval: 0.2 } } });
  const rec = recorder(s);
  const up = await uploadFile(s, 'corpus.gcode', await readFile(CORPUS));
  assert.equal(up.status, 201);
  assert.equal((await s.api('/api/files/local/corpus.gcode', { method: 'POST', json: { command: 'select' } })).status, 204);
  assert.equal(await jobCommand(s, 'start'), 204);
  await waitFor('printing past the start', async () => ((await job(s)).progress.filepos ?? 0) > 4000 || undefined, 60_000);

  // printing: start 409, restart 409, resume no effect.
  assert.equal(await jobCommand(s, 'start'), 409);
  assert.equal(await jobCommand(s, 'restart'), 409);
  assert.equal(await jobCommand(s, 'pause', 'resume'), 204);
  assert.equal((await job(s)).state, 'Printing');
  // The file being printed is guarded.
  assert.equal((await uploadFile(s, 'corpus.gcode', 'G28\n')).status, 409);
  assert.equal((await s.api('/api/files/local/corpus.gcode', { method: 'DELETE' })).status, 409);
  assert.equal((await s.api('/api/files/local/corpus.gcode', { method: 'POST', json: { command: 'move', destination: 'x.gcode' } })).status, 409);
  assert.equal((await s.api('/api/files/local/corpus.gcode', { method: 'POST', json: { command: 'select' } })).status, 409);
  // select/print with an upload are dropped (not an error) while printing.
  const busyUpload = await (await uploadFile(s, 'other.gcode', 'G28\n', [{ name: 'select', value: 'true' }, { name: 'print', value: 'true' }])).json() as Json;
  assert.deepEqual([busyUpload.effectiveSelect, busyUpload.effectivePrint], [false, false]);
  const uploadEvent = rec.events.filter((e) => e.name === 'Upload').at(-1)!.payload;
  assert.deepEqual(uploadEvent, { name: 'other.gcode', path: 'other.gcode', target: 'local', select: true, print: true,
    effective_select: false, effective_print: false });

  assert.equal(await jobCommand(s, 'pause', 'pause'), 204);
  await waitFor('Paused', async () => (await job(s)).state === 'Paused' || undefined, 30_000);
  const paused = rec.events.find((e) => e.name === 'PrintPaused')!.payload;
  assert.equal(paused.path, 'corpus.gcode');
  // The job payload's `user` is who performed the action: the API caller who paused, as for PrintStarted.
  const started = rec.events.find((e) => e.name === 'PrintStarted')!.payload;
  assert.ok(started.user, 'PrintStarted names its user');
  assert.equal(paused.user, started.user, 'PrintPaused names who paused');
  assert.deepEqual(Object.keys(paused.position).sort(), ['e', 'f', 't', 'x', 'y', 'z']);
  const posAtPause = (await job(s)).progress.filepos;
  assert.equal(await jobCommand(s, 'pause', 'pause'), 204, 'pause while paused: no effect');
  assert.equal((await job(s)).state, 'Paused');
  assert.equal(await jobCommand(s, 'start'), 409);

  assert.equal(await jobCommand(s, 'pause', 'resume'), 204);
  await waitFor('Printing again', async () => (await job(s)).state === 'Printing' || undefined, 30_000);
  assert.ok(rec.names().includes('PrintResumed'));
  await waitFor('progress after resume', async () => ((await job(s)).progress.filepos ?? 0) > posAtPause || undefined, 30_000);

  assert.equal(await jobCommand(s, 'pause'), 204, 'toggle pauses');
  await waitFor('Paused (toggle)', async () => (await job(s)).state === 'Paused' || undefined, 30_000);
  assert.equal(await jobCommand(s, 'restart'), 204);
  await waitFor('restarted', () => rec.events.filter((e) => e.name === 'PrintStarted').length === 2 || undefined, 30_000);
  assert.ok(rec.names().includes('PrintCancelled'));
  await waitFor('Printing after restart', async () => (await job(s)).state === 'Printing' || undefined, 30_000);

  const mid = await job(s);
  assert.equal(mid.job.file.name, 'corpus.gcode');
  assert.equal(typeof mid.progress.completion, 'number');
  assert.equal(typeof mid.progress.printTime, 'number');

  assert.equal(await jobCommand(s, 'cancel'), 204);
  await waitFor('cancelled', () => rec.events.filter((e) => e.name === 'PrintCancelled').length === 2 || undefined, 30_000);
  await waitFor('Operational', async () => (await job(s)).state === 'Operational' || undefined, 30_000);
  await waitFor('PrintFailed', () => rec.events.filter((e) => e.name === 'PrintFailed').length === 2 || undefined, 10_000);
  // events.md's cancel order: the file's statistics are updated before PrintFailed, and the link says Operational last.
  const cancelOrder = await waitFor('PrinterStateChanged(OPERATIONAL)', () => {
    const ends = endOrder(rec.events);
    const from = ends.lastIndexOf('PrintCancelling');
    return ends.indexOf('PrinterStateChanged:OPERATIONAL', from) > from ? ends.slice(from) : undefined;
  });
  assert.deepEqual(cancelOrder, ['PrintCancelling', 'PrinterStateChanged:CANCELLING', 'PrintCancelled', 'ChartMarked',
    'MetadataStatisticsUpdated', 'PrintFailed', 'PrinterStateChanged:OPERATIONAL']);
  const names = rec.names().filter((n) => /^(Print(?!er)|ChartMarked$|MetadataStatisticsUpdated$)/.test(n));
  const lastCancel = names.lastIndexOf('PrintCancelled');
  assert.deepEqual(names.slice(lastCancel + 1, lastCancel + 4), ['ChartMarked', 'MetadataStatisticsUpdated', 'PrintFailed']);
  // After a restart the cancelled job's PrintFailed came before the new PrintStarted.
  const firstCancel = names.indexOf('PrintCancelled');
  assert.deepEqual(names.slice(firstCancel + 1, firstCancel + 4), ['ChartMarked', 'MetadataStatisticsUpdated', 'PrintFailed']);
  assert.ok(names.indexOf('PrintFailed') < names.lastIndexOf('PrintStarted'));
  const failed = rec.events.filter((e) => e.name === 'PrintFailed').at(-1)!.payload;
  assert.equal(failed.reason, 'cancelled');
  // The same payload as PrintCancelled, position included (all null without serial.logPositionOnCancel).
  const cancelledEv = rec.events.filter((e) => e.name === 'PrintCancelled').at(-1)!.payload;
  assert.deepEqual(failed, cancelledEv);
  assert.deepEqual(failed.position, { x: null, y: null, z: null, e: null, t: null, f: null });
  // The default afterPrintCancelled script turned the heaters off.
  await waitFor('heaters off', () => s.printer.terminal().some((l) => /^Send: (N\d+ )?M140 S0/.test(l)) || undefined, 10_000);
  await waitFor('hotend off', () => s.printer.terminal().some((l) => /^Send: (N\d+ )?M104 T0 S0/.test(l)) || undefined, 10_000);
  assert.equal(await jobCommand(s, 'cancel'), 409, 'no active job any more');
  const entry = await waitFor('two failures recorded', async () => {
    const e = await (await s.api('/api/files/local/corpus.gcode')).json() as Json;
    return e.prints?.failure === 2 ? e : undefined;
  });
  assert.equal(entry.prints.last.success, false);
  assert.equal(entry.prints.last.printTime, undefined);
  assert.deepEqual(entry.statistics, { averagePrintTime: {}, lastPrintTime: {} });
});

test('paused: toggle resumes, no action resumes, cancel from paused ends the job', async (t) => {
  const s = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.02, busyInterval: 0.2 } } });
  const rec = recorder(s);
  assert.equal((await uploadFile(s, 'long.gcode', smallGcode(3000), [{ name: 'select', value: 'true' }])).status, 201);
  const analysis = await waitFor('analysis', async () => { const e = (await job(s)).job.estimatedPrintTime; return typeof e === 'number' ? e : undefined; }, 20_000);
  assert.equal(await jobCommand(s, 'start'), 204);
  const state = async () => (await job(s)).state as string;
  await waitFor('Printing', async () => (await state()) === 'Printing' || undefined, 20_000);
  // Mid-print the time left comes from the analysis, blended with the observed rate once some is done.
  const mid = await waitFor('progress', async () => { const j = await job(s); return (j.progress.filepos ?? 0) > 0 ? j : undefined; }, 20_000);
  assert.ok(mid.progress.completion > 0 && mid.progress.completion < 100);
  assert.equal(typeof mid.progress.printTimeLeft, 'number');
  assert.ok(mid.progress.printTimeLeft <= analysis + 1, `${mid.progress.printTimeLeft} s left of ${analysis}`);
  assert.ok(['analysis', 'mixed-analysis'].includes(mid.progress.printTimeLeftOrigin), mid.progress.printTimeLeftOrigin);
  for (const resumeWith of ['toggle', undefined]) {
    assert.equal(await jobCommand(s, 'pause', 'pause'), 204);
    await waitFor('Paused', async () => (await state()) === 'Paused' || undefined, 20_000);
    assert.equal(await jobCommand(s, 'pause', resumeWith), 204);
    await waitFor(`Printing after ${String(resumeWith)}`, async () => (await state()) === 'Printing' || undefined, 20_000);
  }
  assert.equal(rec.events.filter((e) => e.name === 'PrintResumed').length, 2);
  assert.equal(await jobCommand(s, 'pause', 'pause'), 204);
  await waitFor('Paused before cancel', async () => (await state()) === 'Paused' || undefined, 20_000);
  assert.equal(await jobCommand(s, 'cancel'), 204);
  await waitFor('PrintCancelled', () => rec.names().includes('PrintCancelled') || undefined, 20_000);
  await waitFor('Operational', async () => (await state()) === 'Operational' || undefined, 20_000);
  const cancelling = rec.events.find((e) => e.name === 'PrintCancelling')!.payload;
  assert.equal(cancelling.path, 'long.gcode');
  assert.ok(!rec.names().includes('PrintDone'));
  const after = await job(s);
  assert.equal(after.job.file.name, 'long.gcode', 'the file stays selected after a cancel');
  assert.ok(after.progress.completion < 100);
});

test('after a finished print GET /api/job still describes it; unselect clears it (204), 409 while printing', async (t) => {
  const s = await connectedServer(t);
  await s.access.users.addUser({ name: 'alice', password: 'alice-pw-123', groups: ['users'] });
  const key = await s.access.users.generateUserKey('alice');
  const rec = recorder(s);
  const gcode = smallGcode(30);
  // An illegal character in the name: the stored path loses it, the display name keeps it.
  const { body, contentType } = multipartBody([{ name: 'path', value: 'parts' }, { name: 'file', filename: 'Bracket: v2.gcode', value: gcode }]);
  const uploadedAt = Math.floor(Date.now() / 1000);
  const up = await s.api('/api/files/local', { method: 'POST', body, headers: { 'Content-Type': contentType }, key });
  assert.equal(up.status, 201);
  assert.equal(((await up.json()) as Json).files.local.path, 'parts/Bracket v2.gcode');
  const url = '/api/files/local/parts/Bracket%20v2.gcode';
  assert.equal((await s.api(url, { method: 'POST', json: { command: 'select' }, key })).status, 204);
  assert.equal((await s.api('/api/job', { method: 'POST', json: { command: 'start' }, key })).status, 204);
  const done = await waitFor('PrintDone', () => rec.events.find((e) => e.name === 'PrintDone')?.payload, 30_000);
  await waitFor('Operational', async () => (await job(s)).state === 'Operational' || undefined);

  const entry = await (await s.api(url)).json() as Json;
  assert.equal(entry.display, 'Bracket: v2.gcode');
  // The statistics are written just after PrintDone.
  const after = await waitFor('lastPrintTime', async () => { const j = await job(s); return j.job.lastPrintTime !== null ? j : undefined; });
  assert.deepEqual(after.job.file, {
    name: 'Bracket v2.gcode', path: 'parts/Bracket v2.gcode', display: 'Bracket: v2.gcode', origin: 'local', size: Buffer.byteLength(gcode), date: entry.date,
  });
  assert.ok(Number.isInteger(after.job.file.date) && Math.abs(after.job.file.date - uploadedAt) <= 2, `mtime in seconds: ${after.job.file.date}`);
  assert.equal(after.job.user, 'alice');
  assert.equal(typeof done.time, 'number');
  assert.equal(after.job.lastPrintTime, done.time);
  assert.equal(after.job.averagePrintTime, done.time);
  assert.equal(after.progress.completion, 100);

  // unselect: only the selected file (or `current`), then nothing is selected.
  const unselect = (path: string): Promise<Response> => s.api(`/api/files/local/${path}`, { method: 'POST', json: { command: 'unselect' }, key });
  const other = await unselect('other.gcode');
  assert.equal(other.status, 400);
  assert.equal(await other.text(), 'Only the currently selected file can be unselected');
  const seen = rec.names().length;
  const ok = await unselect('parts/Bracket%20v2.gcode');
  assert.equal(ok.status, 204);
  assert.equal(await ok.text(), '');
  // Not necessarily the last event: the print's statistics may still be landing (UpdatedFiles) on a loaded machine.
  assert.ok(rec.names().slice(seen).includes('FileDeselected'), `FileDeselected after unselect: ${rec.names().slice(seen).join(', ')}`);
  const cleared = await job(s);
  assert.deepEqual(cleared.job, { file: { name: null, path: null, display: null, origin: null, size: null, date: null }, estimatedPrintTime: null,
    averagePrintTime: null, lastPrintTime: null, filament: null, user: null });
  assert.equal(await jobCommand(s, 'start'), 409, 'nothing left to start');
  const none = await unselect('current');
  assert.equal(none.status, 409);
  assert.match(none.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal(await none.text(), 'Cannot unselect current file when there is no file selected');

  // While printing the selection stays.
  assert.equal((await uploadFile(s, 'long.gcode', smallGcode(3000), [{ name: 'print', value: 'true' }])).status, 201);
  await waitFor('Printing', async () => (await job(s)).state === 'Printing' || undefined, 20_000);
  for (const path of ['current', 'long.gcode']) {
    const busy = await unselect(path);
    assert.equal(busy.status, 409, path);
    assert.match(busy.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(await busy.text(), 'Printer is already printing, cannot unselect current file');
  }
  assert.equal((await job(s)).job.file.path, 'long.gcode');
  assert.equal(rec.names().filter((n) => n === 'FileDeselected').length, 1);
  assert.equal(await jobCommand(s, 'cancel'), 204);
  await waitFor('Operational after the cancel', async () => (await job(s)).state === 'Operational' || undefined, 20_000);
});

test('while a file in a folder prints: the folder cannot be deleted, no SD upload; a firmware error shows as GET /api/job error', async (t) => {
  const s = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.02, busyInterval: 0.2 } } });
  assert.equal((await uploadFile(s, 'long.gcode', smallGcode(3000), [{ name: 'path', value: 'batch' }, { name: 'print', value: 'true' }])).status, 201);
  await waitFor('Printing', async () => (await job(s)).state === 'Printing' || undefined, 20_000);
  assert.equal((await job(s)).job.file.path, 'batch/long.gcode');
  const folder = await s.api('/api/files/local/batch', { method: 'DELETE' });
  assert.equal(folder.status, 409);
  assert.deepEqual(await folder.json(), { error: 'Trying to delete a folder that contains a file that is currently in use' });
  const sd = await uploadFile(s, 'card.gcode', 'G28\n', [], 'sdcard');
  assert.equal(sd.status, 409);
  assert.deepEqual(await sd.json(), { error: 'Can not upload to SD card, printer is either not operational or already busy' });
  assert.equal((await job(s)).error, undefined, 'no error field while there is none');

  // A fatal firmware error (serial.disconnectOnErrors is on by default) ends the link; the job keeps the error text.
  assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { command: '!!DEBUG:send Error:Heater on fire' } })).status, 204);
  const failed = await waitFor('error state', async () => { const j = await job(s); return j.error ? j : undefined; }, 20_000);
  assert.match(failed.error, /Heater on fire/);
  assert.match(failed.state, /Error|Offline after error/);
  assert.equal((await s.api('/api/files/local/batch', { method: 'DELETE' })).status, 204, 'nothing prints any more');
});
