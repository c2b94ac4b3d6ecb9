// The sdcard location on the virtual printer: upload (local copy + transfer with events), listing, print from SD with
// pause/resume, delete, a transfer cut off by the printer vanishing, and a card that refuses the file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer, waitFor } from '../helpers.ts';
import { uploadFile, jobCommand, job, recorder, smallGcode, type Json } from './helpers.ts';

test('SD card: upload transfers to the card, the listing shows it, it prints from SD, and it can be deleted', async (t) => {
  const s = await connectedServer(t, { serial: { timeout: { sdStatus: 0.2 }, terminalLogSize: 5000 }, devel: { virtualPrinter: { throttle: 0.02, busyInterval: 0.2 } } });
  await waitFor('SD ready', async () => ((await (await s.api('/api/printer/sd')).json()) as Json).ready === true || undefined);
  const rec = recorder(s);
  const up = await uploadFile(s, 'sdjob.gcode', smallGcode(200), [], 'sdcard');
  assert.equal(up.status, 201);
  const body = await up.json() as Json;
  assert.equal(body.done, false);
  assert.equal(body.files.local.path, 'sdjob.gcode');
  const remote = body.files.sdcard.name as string;
  assert.match(up.headers.get('location') ?? '', new RegExp(`/api/files/sdcard/${remote.replace('~', '~').replace('.', '\\.')}$`));
  await waitFor('TransferDone', () => rec.names().includes('TransferDone') || undefined, 30_000);
  const started = rec.events.find((e) => e.name === 'TransferStarted')!.payload;
  assert.deepEqual(started, { path: 'sdjob.gcode', local: 'sdjob.gcode', remote });
  const doneEv = rec.events.find((e) => e.name === 'TransferDone')!.payload;
  assert.deepEqual({ ...doneEv, time: 0 }, { path: 'sdjob.gcode', local: 'sdjob.gcode', remote, time: 0 });
  assert.equal(typeof doneEv.time, 'number');

  const listed = await waitFor('listed on the card', async () => {
    const l = await (await s.api('/api/files/sdcard?force=true')).json() as Json;
    return (l.files as Json[]).find((f) => f.name.toLowerCase() === remote.toLowerCase());
  }, 10_000);
  assert.equal(listed.origin, 'sdcard');
  assert.equal(listed.refs.download, undefined);
  const all = await (await s.api('/api/files')).json() as Json;
  assert.ok((all.files as Json[]).some((f) => f.origin === 'sdcard'));

  assert.equal((await s.api(`/api/files/sdcard/${listed.name}`, { method: 'POST', json: { command: 'select' } })).status, 204);
  assert.equal((await job(s)).job.file.origin, 'sdcard');
  assert.equal(await jobCommand(s, 'start'), 204);
  await waitFor('Printing from SD', async () => (await job(s)).state === 'Printing from SD' || undefined, 10_000);
  await waitFor('SD progress', async () => ((await job(s)).progress.filepos ?? 0) > 0 || undefined, 10_000).catch((err: Error) => {
    throw new Error(`${err.message}\n${s.printer.terminal().filter((l) => !/M27|SD printing|^Recv: ok$|T:/.test(l)).slice(-40).join('\n')}\n${JSON.stringify(rec.names())}`);
  });
  const flags = async () => ((await (await s.api('/api/printer')).json()) as Json).state;
  const printingState = await flags();
  assert.equal(printingState.text, 'Printing from SD');
  assert.equal(printingState.flags.printing, true, '/api/printer shows the SD print too');
  assert.equal((await s.api('/api/printer/printhead', { method: 'POST', json: { command: 'home', axes: ['x'] } })).status, 409);
  assert.equal(await jobCommand(s, 'pause', 'pause'), 204);
  // The pause asks the firmware where the head stopped (M25, M400, M114) and is Paused once it answered.
  await waitFor('Paused', async () => (await job(s)).state === 'Paused' || undefined, 15_000);
  const paused = rec.events.find((e) => e.name === 'PrintPaused')!.payload;
  assert.equal(paused.origin, 'sdcard');
  const reported = rec.events.filter((e) => e.name === 'PositionUpdate' && e.payload.reason === 'pause').at(-1)?.payload;
  assert.ok(reported, 'the M114 answer came in while Pausing');
  assert.deepEqual([paused.position.x, paused.position.y, paused.position.z], [reported.x, reported.y, reported.z]);
  assert.equal(typeof paused.position.x, 'number');
  assert.equal((await flags()).flags.paused, true);
  assert.equal((await s.api(`/api/files/sdcard/${listed.name}`, { method: 'DELETE' })).status, 409);
  assert.equal(await jobCommand(s, 'pause', 'resume'), 204);
  await waitFor('PrintDone (SD)', () => rec.names().includes('PrintDone') || undefined, 60_000).catch((err: Error) => {
    throw new Error(`${err.message}\n${s.printer.terminal().filter((l) => !/M27|SD printing|^Recv: ok$|T:/.test(l)).slice(-40).join('\n')}\n${JSON.stringify(rec.names().filter((n) => !/Position|ZChange|Home|Temperature/.test(n)))}`);
  });
  const done = rec.events.find((e) => e.name === 'PrintDone')!.payload;
  assert.equal(done.origin, 'sdcard');
  await waitFor('Operational again', async () => (await flags()).text === 'Operational' || undefined);

  assert.equal((await s.api(`/api/files/sdcard/${listed.name}`, { method: 'DELETE' })).status, 204);
  await waitFor('gone from the card', async () => {
    const l = await (await s.api('/api/files/sdcard?force=true')).json() as Json;
    return !(l.files as Json[]).some((f) => f.name === listed.name) || undefined;
  }, 10_000);
  assert.equal((await s.api('/api/files/sdcard/nothere.gco', { method: 'DELETE' })).status, 404);

  // Upload with print=true: the print starts from the card once the transfer is done.
  const printing = await uploadFile(s, 'sdprint.gcode', smallGcode(20), [{ name: 'print', value: 'true' }], 'sdcard');
  assert.equal(printing.status, 201);
  const p2 = await printing.json() as Json;
  assert.deepEqual([p2.done, p2.effectivePrint], [false, true]);
  await waitFor('second PrintDone (SD, after transfer)', () => rec.events.filter((e) => e.name === 'PrintDone').length === 2 || undefined, 20_000).catch((err: Error) => {
    throw new Error(`${err.message}\n${s.printer.terminal().slice(-25).join('\n')}\n${JSON.stringify(rec.names().filter((n) => !/Position|ZChange|Home|Temperature/.test(n)))}`);
  });
  const second = rec.events.filter((e) => e.name === 'PrintStarted').at(-1)!.payload;
  assert.equal(second.origin, 'sdcard');
  assert.equal(second.name, p2.files.sdcard.name);
});

test('SD card: a transfer cut off by the printer vanishing ends in TransferFailed, and the next upload may start', async (t) => {
  const s = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.02, busyInterval: 0.2 } } });
  await waitFor('SD ready', async () => ((await (await s.api('/api/printer/sd')).json()) as Json).ready === true || undefined);
  const rec = recorder(s);
  // Big enough that the transfer is still running when the printer goes.
  const up = await uploadFile(s, 'big.gcode', smallGcode(20_000), [{ name: 'print', value: 'true' }], 'sdcard');
  assert.equal(up.status, 201);
  const remote = ((await up.json()) as Json).files.sdcard.name as string;
  assert.ok(rec.names().includes('TransferStarted'));
  assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { command: '!!DEBUG:disconnect' } })).status, 204);
  const failed = await waitFor('TransferFailed', () => rec.events.find((e) => e.name === 'TransferFailed')?.payload, 20_000);
  assert.deepEqual({ ...failed, time: 0 }, { path: 'big.gcode', local: 'big.gcode', remote, time: 0 });
  assert.equal(typeof failed.time, 'number');
  assert.ok(!rec.names().includes('TransferDone'));
  assert.ok(!rec.names().includes('PrintStarted'), 'print=true does not start a print of a file that never arrived');
  // The local copy stays.
  assert.equal((await s.api('/api/files/local/big.gcode')).status, 200);

  // The failed transfer does not hold the card: after reconnecting, an upload goes through.
  assert.equal((await s.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL', baudrate: 115200 } })).status, 204);
  await waitFor('Operational again', async () => (await job(s)).state === 'Operational' || undefined, 10_000);
  await waitFor('SD ready again', async () => ((await (await s.api('/api/printer/sd')).json()) as Json).ready === true || undefined);
  assert.equal((await uploadFile(s, 'next.gcode', smallGcode(20), [], 'sdcard')).status, 201);
  const done = await waitFor('TransferDone', () => rec.events.find((e) => e.name === 'TransferDone')?.payload, 20_000);
  assert.equal(done.local, 'next.gcode');
  assert.equal(done.path, 'next.gcode');
});

test('SD card: a card that refuses the file ends the transfer in TransferFailed before a line of it reaches the printer', async (t) => {
  const s = await connectedServer(t, { serial: { terminalLogSize: 5000 }, devel: { virtualPrinter: { throttle: 0.02, busyInterval: 0.2 } } });
  await waitFor('SD ready', async () => ((await (await s.api('/api/printer/sd')).json()) as Json).ready === true || undefined);
  const rec = recorder(s);
  assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { command: '!!DEBUG:sd_write_protect' } })).status, 204);
  const up = await uploadFile(s, 'locked.gcode', 'G28\nG1 X77 Y66 F3000\nM84\n', [{ name: 'print', value: 'true' }], 'sdcard');
  assert.equal(up.status, 201);
  const remote = ((await up.json()) as Json).files.sdcard.name as string;
  const failed = await waitFor('TransferFailed', () => rec.events.find((e) => e.name === 'TransferFailed')?.payload, 20_000);
  assert.equal(failed.remote, remote);
  assert.ok(!rec.names().includes('TransferDone'));
  assert.ok(!rec.names().includes('PrintStarted'));
  await waitFor('Operational again', async () => (await job(s)).state === 'Operational' || undefined, 10_000);
  const terminal = s.printer.terminal();
  assert.ok(terminal.some((l) => /^Recv: open failed/.test(l)), 'the firmware did refuse the file');
  // Marlin would have executed the file's lines as commands: none of them may have been sent.
  assert.ok(!terminal.some((l) => l.startsWith('Send: ') && l.includes('X77')), 'no line of the file was sent');
  assert.equal((await s.api('/api/printer')).status, 200);

  // With the lock switch back, the same upload arrives on the card.
  assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { command: '!!DEBUG:sd_write_protect off' } })).status, 204);
  assert.equal((await uploadFile(s, 'unlocked.gcode', smallGcode(20), [], 'sdcard')).status, 201);
  const done = await waitFor('TransferDone', () => rec.events.find((e) => e.name === 'TransferDone')?.payload, 20_000).catch((err: Error) => {
    throw new Error(`${err.message}\n${s.printer.terminal().slice(-30).join('\n')}\n${JSON.stringify(rec.names().filter((n) => !/Position|ZChange|Home|Temperature/.test(n)))}`);
  });
  assert.equal(done.path, 'unlocked.gcode');
});

test('SD card: a write error in the middle of a transfer fails it and removes the partial file from the card', async (t) => {
  const s = await connectedServer(t, { serial: { terminalLogSize: 50_000 }, devel: { virtualPrinter: { throttle: 0.02, busyInterval: 0.2 } } });
  await waitFor('SD ready', async () => ((await (await s.api('/api/printer/sd')).json()) as Json).ready === true || undefined);
  const rec = recorder(s);
  const up = await uploadFile(s, 'full.gcode', smallGcode(20_000), [], 'sdcard');
  assert.equal(up.status, 201);
  const remote = ((await up.json()) as Json).files.sdcard.name as string;
  // What Marlin says when the card is full; it goes on acknowledging the lines it cannot write.
  assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { command: '!!DEBUG:send error writing to file' } })).status, 204);
  const failed = await waitFor('TransferFailed', () => rec.events.find((e) => e.name === 'TransferFailed')?.payload, 20_000).catch((err: Error) => {
    throw new Error(`${err.message}\n${s.printer.terminal().filter((l) => /DEBUG|error|M28|M29|M30/.test(l)).join('\n')}`);
  });
  assert.equal(failed.remote, remote);
  assert.ok(!rec.names().includes('TransferDone'));
  await waitFor('Operational again', async () => (await job(s)).state === 'Operational' || undefined, 10_000);
  await waitFor('the partial file is deleted', () => s.printer.terminal().some((l) => l.startsWith('Send: ') && l.includes(`M30 /${remote}`)) || undefined, 10_000);
  const listing = await (await s.api('/api/files/sdcard?force=true')).json() as Json;
  assert.ok(!(listing.files as Json[]).some((f) => f.name.toLowerCase() === remote.toLowerCase()));
});

test('SD card: an upload shows as "Sending file to SD" (not a print) and POST /api/job cancel stops it: M29, M30, TransferFailed', async (t) => {
  const s = await connectedServer(t, { serial: { terminalLogSize: 250_000 }, devel: { virtualPrinter: { throttle: 0.02, busyInterval: 0.2 } } });
  await waitFor('SD ready', async () => ((await (await s.api('/api/printer/sd')).json()) as Json).ready === true || undefined);
  const rec = recorder(s);
  // Card writes are not slowed by the throttle (it scales motion): 20,000 lines once went to the card before the checks
  // below were done, on a loaded machine; the terminal keeps every line sent until the cancel.
  const up = await uploadFile(s, 'long.gcode', smallGcode(100_000), [], 'sdcard');
  assert.equal(up.status, 201);
  const remote = ((await up.json()) as Json).files.sdcard.name as string;
  await waitFor('Sending file to SD', async () => ((await (await s.api('/api/printer')).json()) as Json).state.text === 'Sending file to SD' || undefined, 10_000);
  const printer = ((await (await s.api('/api/printer')).json()) as Json).state;
  // What the reference's flag table says of the PRINTING state, and not ready: a file is being streamed to the card.
  assert.deepEqual([printer.flags.operational, printer.flags.printing, printer.flags.ready, printer.flags.paused], [true, true, false, false]);
  const connection = ((await (await s.api('/api/connection')).json()) as Json).current;
  assert.equal(connection.state, 'Sending file to SD');
  const during = await job(s);
  assert.equal(during.state, 'Sending file to SD');
  assert.equal(during.job.file.name, null, 'the uploaded file is not a print job');
  assert.equal(during.progress.completion, null);
  assert.ok(!rec.names().some((n) => /^Print(?!er)/.test(n)), 'no Print* event for a transfer');
  // Nothing may be selected or started meanwhile.
  assert.equal(await jobCommand(s, 'start'), 409);
  assert.equal(await jobCommand(s, 'pause'), 409);
  // The local copy is being read: it may be neither deleted nor moved (files-api.md §6, §7).
  const del = await s.api('/api/files/local/long.gcode', { method: 'DELETE' });
  assert.equal(del.status, 409);
  assert.deepEqual(await del.json(), { error: 'Trying to delete a file that is currently in use' });
  assert.equal((await s.api('/api/files/local/long.gcode', { method: 'POST', json: { command: 'move', destination: 'moved.gcode' } })).status, 409);

  assert.equal(await jobCommand(s, 'cancel'), 204);
  const failed = await waitFor('TransferFailed', () => rec.events.find((e) => e.name === 'TransferFailed')?.payload, 20_000);
  assert.equal(failed.remote, remote);
  assert.ok(!rec.names().includes('TransferDone'));
  assert.ok(!rec.names().some((n) => /^Print(?!er)/.test(n)));
  await waitFor('Operational again', async () => (await job(s)).state === 'Operational' || undefined, 10_000);
  const states = rec.events.filter((e) => e.name === 'PrinterStateChanged').map((e) => `${e.payload.state_id}:${e.payload.state_string}`);
  assert.deepEqual(states, ['STARTING:Starting to send file to SD', 'PRINTING:Sending file to SD', 'CANCELLING:Cancelling', 'OPERATIONAL:Operational']);
  const sent = s.printer.terminal().filter((l) => l.startsWith('Send: ')).map((l) => l.replace(/^Send: (N\d+ )?/, '').replace(/\*\d+$/, ''));
  const m28 = sent.indexOf(`M28 /${remote}`);
  const m29 = sent.indexOf('M29');
  assert.ok(m28 >= 0 && m29 > m28, 'M28 then M29');
  assert.equal(sent[m29 + 1], `M30 /${remote}`, 'the partial file is deleted right after closing it');
  // M108 would be written into the file the card is taking.
  assert.ok(!sent.slice(m28, m29).includes('M108'));
  const listing = await (await s.api('/api/files/sdcard?force=true')).json() as Json;
  assert.ok(!(listing.files as Json[]).some((f) => f.name.toLowerCase() === remote.toLowerCase()));
  assert.equal(await jobCommand(s, 'cancel'), 409, 'nothing left to cancel');
  assert.equal((await s.api('/api/files/local/long.gcode', { method: 'DELETE' })).status, 204, 'free again once the transfer ended');

  // A transfer that completes goes from Sending straight to Operational (M29 closes it; no Finishing, no M400 in the file).
  const before = rec.events.length;
  assert.equal((await uploadFile(s, 'short.gcode', smallGcode(30), [], 'sdcard')).status, 201);
  await waitFor('TransferDone', () => rec.events.slice(before).some((e) => e.name === 'TransferDone') || undefined, 20_000);
  await waitFor('Operational after the transfer', async () => (await job(s)).state === 'Operational' || undefined, 10_000);
  const later = rec.events.slice(before).filter((e) => e.name === 'PrinterStateChanged').map((e) => e.payload.state_id);
  assert.deepEqual(later, ['STARTING', 'PRINTING', 'OPERATIONAL']);
  const sent2 = s.printer.terminal().filter((l) => l.startsWith('Send: ')).map((l) => l.replace(/^Send: (N\d+ )?/, '').replace(/\*\d+$/, ''));
  const open = sent2.findLastIndex((l) => l.startsWith('M28 '));
  const close = sent2.lastIndexOf('M29');
  assert.ok(open >= 0 && close > open);
  assert.ok(!sent2.slice(open, close).includes('M400'));
});

test('SD card: uploads get a fresh 8.3 name, or keep their own name once the firmware reports LFN_WRITE (found by either name)', async (t) => {
  const s = await connectedServer(t, { serial: { terminalLogSize: 5000 }, devel: { virtualPrinter: { throttle: 0.02, busyInterval: 0.2 } } });
  await waitFor('SD ready', async () => ((await (await s.api('/api/printer/sd')).json()) as Json).ready === true || undefined);
  const rec = recorder(s);
  const short = ((await (await uploadFile(s, 'first_part.gcode', smallGcode(10), [], 'sdcard')).json()) as Json).files.sdcard.name as string;
  assert.match(short, /^[A-Z0-9]{1,6}~\d+\.GCO$/);
  await waitFor('first TransferDone', () => rec.names().includes('TransferDone') || undefined, 20_000);

  // The virtual printer reports LFN_WRITE:0; this is the line a firmware that can write long names sends.
  assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { command: '!!DEBUG:send Cap:LFN_WRITE:1' } })).status, 204);
  await waitFor('capability seen', () => s.printer.terminal().includes('Recv: Cap:LFN_WRITE:1') || undefined);
  const up = await uploadFile(s, 'second_part.gcode', smallGcode(10), [{ name: 'select', value: 'true' }], 'sdcard');
  assert.equal(up.status, 201);
  const remote = ((await up.json()) as Json).files.sdcard.name as string;
  assert.equal(remote, 'second_part.gcode');
  // The terminal hears from the link thread in batches (a few ms behind the upload's answer).
  await waitFor('M28 with the long name', () => s.printer.terminal().some((l) => /^Send: (N\d+ )?M28 \/second_part\.gcode\*?/.test(l)) || undefined);
  await waitFor('second TransferDone', () => rec.names().filter((n) => n === 'TransferDone').length === 2 || undefined, 20_000);
  // The card lists it under its short name with the long one as display; the Location (long name) resolves, and select=true found it.
  // The card's own listing (M20 L, asked for after TransferDone) is what the entry is found in.
  const entry = await waitFor('listed by its long name', async () => {
    const r = await s.api(`/api/files/sdcard/${remote}`);
    return r.status === 200 ? await r.json() as Json : undefined;
  }, 10_000);
  assert.equal(entry.display, 'second_part.gcode');
  assert.notEqual(entry.name, 'second_part.gcode');
  const selected = await waitFor('selected after the transfer', async () => (await job(s)).job.file.origin === 'sdcard' ? (await job(s)).job.file : undefined, 10_000);
  assert.equal(selected.name, entry.name);
  assert.equal(selected.display, 'second_part.gcode');

  // serial.capabilities.lfn_write off: back to 8.3 names whatever the firmware says.
  assert.equal((await s.api('/api/settings', { method: 'POST', json: { serial: { capLfnWrite: false } } })).status, 200);
  const third = ((await (await uploadFile(s, 'third_part.gcode', smallGcode(10), [], 'sdcard')).json()) as Json).files.sdcard.name as string;
  assert.match(third, /^[A-Z0-9]{1,6}~\d+\.GCO$/);
});

test('SD card: an SD print runs the job scripts too — beforePrintStarted before M23/M24, afterPrintPaused, beforePrintResumed, afterPrintCancelled, and afterPrintDone while Finishing', async (t) => {
  const s = await connectedServer(t, { serial: { timeout: { sdStatus: 0.2 }, terminalLogSize: 5000 }, devel: { virtualPrinter: { throttle: 0.02, busyInterval: 0.2 } } });
  await waitFor('SD ready', async () => ((await (await s.api('/api/printer/sd')).json()) as Json).ready === true || undefined);
  assert.equal((await s.api('/api/settings', { method: 'POST', json: { scripts: { gcode: {
    beforePrintStarted: 'M117 before {{ event.origin }}', afterPrintDone: 'M117 done {{ event.origin }}',
    afterPrintPaused: 'M117 paused {{ event.origin }}', beforePrintResumed: 'M117 resumed {{ event.origin }}',
    afterPrintCancelled: 'M117 cancelled {{ event.origin }}',
  } } } })).status, 200);
  const log: string[] = [];
  t.after(s.printer.subscribe({ log: (lines) => { log.push(...lines); } }));
  const sent = (): string[] => log.filter((l) => l.startsWith('Send: ')).map((l) => l.slice(6).replace(/^N\d+ /, '').replace(/\*\d+$/, ''));
  const rec = recorder(s);
  const up = await uploadFile(s, 'scripted.gcode', smallGcode(400), [{ name: 'select', value: 'true' }], 'sdcard');
  assert.equal(up.status, 201);
  await waitFor('selected after the transfer', async () => (await job(s)).job.file.origin === 'sdcard' || undefined, 20_000);

  assert.equal(await jobCommand(s, 'start'), 204);
  await waitFor('Printing from SD', async () => (await job(s)).state === 'Printing from SD' || undefined, 10_000);
  // The serial log arrives in batches.
  await waitFor('beforePrintStarted sent', () => sent().includes('M24') || undefined, 10_000);
  const before = sent().indexOf('M117 before sdcard');
  assert.ok(before >= 0, 'beforePrintStarted was sent');
  assert.ok(before < sent().findIndex((l) => l.startsWith('M23 ')) && before < sent().indexOf('M24'), 'ahead of M23/M24');
  assert.equal(await jobCommand(s, 'pause', 'pause'), 204);
  await waitFor('afterPrintPaused', () => sent().includes('M117 paused sdcard') || undefined, 15_000);
  assert.equal(await jobCommand(s, 'pause', 'resume'), 204);
  await waitFor('beforePrintResumed', () => sent().includes('M117 resumed sdcard') || undefined, 15_000);
  const states: string[] = [];
  t.after(s.printer.subscribe({ state: (st) => { if (states.at(-1) !== st.text) states.push(st.text); } }));
  await waitFor('PrintDone', () => rec.names().includes('PrintDone') || undefined, 60_000);
  await waitFor('afterPrintDone in the log', () => sent().includes('M117 done sdcard') || undefined, 5_000);
  const done = sent().indexOf('M117 done sdcard');
  assert.ok(done > sent().lastIndexOf('M24'), 'afterPrintDone was sent after the print');
  assert.equal(sent()[done - 1], 'M400', 'after M400, as for a streamed job');
  assert.deepEqual(states.slice(-2), ['Finishing', 'Operational']);
  assert.ok(!sent().includes('M117 cancelled sdcard'));

  // A cancelled SD print gets afterPrintCancelled.
  assert.equal(await jobCommand(s, 'start'), 204);
  await waitFor('Printing from SD again', async () => (await job(s)).state === 'Printing from SD' || undefined, 10_000);
  assert.equal(await jobCommand(s, 'cancel'), 204);
  await waitFor('afterPrintCancelled', () => sent().includes('M117 cancelled sdcard') || undefined, 15_000);
  assert.equal(sent().filter((l) => l === 'M117 done sdcard').length, 1);
  assert.equal(sent().filter((l) => l === 'M117 before sdcard').length, 2);
});
