// beforeToolChange/afterToolChange on a two-extruder virtual printer, read back from the serial log: around a T sent
// through the API and around a T line of a print, only for a real change, with settings and scripts-folder changes live.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { waitFor } from '../helpers.ts';
import { job, jobCommand, recorder, uploadFile } from '../job/helpers.ts';

async function dualServer(t: TestContext, gcode: Record<string, string>) {
  const s = await startTestServer(t, { settings: {
    devel: { virtualPrinter: { throttle: 0.001, busyInterval: 0.2, numExtruders: 2 } }, scripts: { gcode },
  } });
  const profile = await s.api('/api/printerprofiles', { method: 'POST', json: { profile: {
    id: 'dual', name: 'Dual', extruder: { count: 2, offsets: [[0, 0], [20, 0]] },
  } } });
  assert.equal(profile.status, 200);
  // The whole serial log from here on, independent of the terminal buffer's size.
  const log: string[] = [];
  t.after(s.printer.subscribe({ log: (lines) => { log.push(...lines); } }));
  const r = await s.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL', baudrate: 115200, printerProfile: 'dual' } });
  assert.equal(r.status, 204);
  await waitFor('Operational', () => s.printer.isOperational() || undefined);
  await waitFor('firmware info', () => s.printer.firmwareName() !== '' || undefined);
  // `Send: N12 G1 X10*34` → `G1 X10`: what the firmware was asked to run, without polls.
  const sent = (): string[] => log.filter((l) => l.startsWith('Send: '))
    .map((l) => l.slice(6).replace(/^N\d+ /, '').replace(/\*\d+$/, '')).filter((l) => !/^M105\b/.test(l));
  return { s, sent };
}

/** The log arrives in batches: a sent marker tells where what follows begins. */
async function mark(s: TestServer, sent: () => string[], label: string): Promise<number> {
  await command(s, '/api/printer/command', { command: `M117 mark ${label}` });
  await waitFor(`mark ${label}`, () => sent().includes(`M117 mark ${label}`) || undefined, 5000);
  return sent().indexOf(`M117 mark ${label}`) + 1;
}

/** What was sent from `from` on, once `last` has gone out. */
async function sentUntil(sent: () => string[], from: number, last: string): Promise<string[]> {
  await waitFor(`Send: ${last}`, () => sent().slice(from).includes(last) || undefined, 5000);
  const lines = sent().slice(from);
  return lines.slice(0, lines.indexOf(last) + 1);
}

async function command(s: TestServer, path: string, json: unknown): Promise<void> {
  const r = await s.api(path, { method: 'POST', json });
  assert.equal(r.status, 204, `${path} ${JSON.stringify(json)}: ${await r.text()}`);
}

test('a T from the API gets the scripts around it, only when it changes the tool; a settings change applies at once', async (t) => {
  const { s, sent } = await dualServer(t, {
    beforeToolChange: 'M117 before {{ tool.old }}>{{ tool.new }}',
    afterToolChange: "M117 after {{ tool.old }}>{{ tool.new }}\n{% snippet 'tools' %}",
    'snippets/tools': 'M117 of {{ printer_profile.extruder.count }}',
  });
  const rec = recorder(s);

  let from = await mark(s, sent, 'select');
  await command(s, '/api/printer/tool', { command: 'select', tool: 'tool1' });
  assert.deepEqual(await sentUntil(sent, from, 'M117 of 2'), ['M117 before 0>1', 'T1', 'M117 after 0>1', 'M117 of 2']);

  // Already the current tool: the command goes out alone.
  from = await mark(s, sent, 'same');
  await command(s, '/api/printer/command', { commands: ['T1', 'M117 marker'] });
  assert.deepEqual(await sentUntil(sent, from, 'M117 marker'), ['T1', 'M117 marker']);

  const changed = await s.api('/api/settings', { method: 'POST', json: { scripts: { gcode: { beforeToolChange: 'M117 changed to {{ tool.new }}' } } } });
  assert.equal(changed.status, 200);
  from = await mark(s, sent, 'changed');
  await command(s, '/api/printer/command', { command: 'T0' });
  assert.deepEqual(await sentUntil(sent, from, 'M117 of 2'), ['M117 changed to 0', 'T0', 'M117 after 1>0', 'M117 of 2']);

  // ToolChange is announced for every T sent, the unchanged one included; the scripts only for changes.
  await waitFor('ToolChange events', () => rec.events.filter((e) => e.name === 'ToolChange').length === 3 || undefined, 5000);
  assert.deepEqual(rec.events.filter((e) => e.name === 'ToolChange').map((e) => e.payload), [{ old: 0, new: 1 }, { old: 1, new: 1 }, { old: 1, new: 0 }]);
  assert.deepEqual(rec.events.filter((e) => e.name === 'GcodeScriptBeforeToolChangeRunning').map((e) => e.payload),
    [{ tool: { old: 0, new: 1 } }, { tool: { old: 1, new: 0 } }]);
});

test('a print\'s T lines get the scripts (a scripts-folder file is read at job start); progress ends at the file size', async (t) => {
  const { s, sent } = await dualServer(t, { beforeToolChange: 'M117 before {{ tool.old }}>{{ tool.new }}' });
  // Written after the connect: the job start reloads the scripts.
  await writeFile(join(s.paths.scripts, 'afterToolChange'), 'M117 file after {{ tool.new }}\n');
  const rec = recorder(s);
  const gcode = ['G28', 'G1 X10 F3000', 'T1', 'G1 X20', 'T1 ; again', 'G1 X30', 'T0', 'G1 X40', ''].join('\n');
  assert.equal((await uploadFile(s, 'tools.gcode', gcode, [{ name: 'select', value: 'true' }])).status, 201);
  const from = await mark(s, sent, 'job');
  assert.equal(await jobCommand(s, 'start'), 204);
  await waitFor('PrintDone', () => rec.names().includes('PrintDone') || undefined, 15_000);
  const lines = await sentUntil(sent, from, 'G1 X40');
  assert.deepEqual(lines.slice(lines.indexOf('G28')), [
    'G28', 'G1 X10 F3000', 'M117 before 0>1', 'T1', 'M117 file after 1', 'G1 X20', 'T1', 'G1 X30',
    'M117 before 1>0', 'T0', 'M117 file after 0', 'G1 X40',
  ]);
  const progress = (await job(s)).progress;
  assert.equal(progress.filepos, Buffer.byteLength(gcode));
  assert.equal(progress.completion, 100);
  assert.deepEqual(rec.events.filter((e) => e.name === 'ToolChange').map((e) => e.payload), [{ old: 0, new: 1 }, { old: 1, new: 1 }, { old: 1, new: 0 }]);
});
