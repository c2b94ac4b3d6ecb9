// Job scripts as the virtual printer receives them: start/done around the file, pause data recorded and restored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer, waitFor } from '../helpers.ts';
import { uploadFile, jobCommand, job, recorder } from './helpers.ts';

/** A print that heats without waiting (so it streams fast) and moves over a known area at Z 0.3. */
function heatedPrint(moves: number): string {
  const lines = ['M117 file begins', 'M104 S205', 'M140 S60', 'G28', 'G90', 'M83'];
  for (let i = 0; i < moves; i++) lines.push(`G1 X${(i % 20) * 5 + 10} Y${Math.floor(i / 20) % 20 * 5 + 10} Z0.3 E0.5 F3000`);
  lines.push('M117 file ends', '');
  return lines.join('\n');
}

const NUM = '(-?\\d+(?:\\.\\d+)?)';

test('pause records the position and temperatures, resume restores them, and every job script reaches the printer', async (t) => {
  const s = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.02, busyInterval: 0.2 } } });
  const settings = await s.api('/api/settings', { method: 'POST', json: { scripts: { gcode: {
    beforePrintStarted: 'M117 starting {{ event.name }}',
    afterPrintDone: 'M117 done {{ event.name }}',
    afterPrintPaused: 'M117 paused at X{{ pause_position.x }} Y{{ pause_position.y }} Z{{ pause_position.z }}'
      + ' T{{ pause_temperature.tool0.actual }}/{{ pause_temperature.tool0.target }} B{{ pause_temperature.bed.target }}',
    beforePrintResumed: [
      'G1 X{{ pause_position.x }} Y{{ pause_position.y }} Z{{ pause_position.z }} F6000',
      'M104 S{{ pause_temperature.tool0.target }}',
      'M140 S{{ pause_temperature.bed.target }}',
      'M117 resumed from X{{ last_position.x }} Z{{ last_position.z }}',
    ].join('\n'),
  } } } });
  assert.equal(settings.status, 200);
  // The whole serial log from here on, independent of the terminal buffer's size.
  const log: string[] = [];
  t.after(s.printer.subscribe({ log: (lines) => { log.push(...lines); } }));
  // `Send: N12 G1 X10*34` → `Send: G1 X10`: what the firmware was asked to run.
  const serial = (): string[] => log.map((l) => (l.startsWith('Send: ') ? `Send: ${l.slice(6).replace(/^N\d+ /, '').replace(/\*\d+$/, '')}` : l));
  const at = (re: RegExp, from = 0): number => serial().findIndex((l, i) => i >= from && re.test(l));
  const rec = recorder(s);

  const gcode = heatedPrint(1500);
  assert.equal((await uploadFile(s, 'heated.gcode', gcode, [{ name: 'select', value: 'true' }])).status, 201);
  assert.equal(await jobCommand(s, 'start'), 204);
  await waitFor('a third printed', async () => ((await job(s)).progress.filepos ?? 0) > gcode.length / 3 || undefined, 60_000);

  assert.equal(await jobCommand(s, 'pause', 'pause'), 204);
  await waitFor('Paused', async () => (await job(s)).state === 'Paused' || undefined, 30_000);
  const pausedAt = await waitFor('afterPrintPaused sent', () => { const i = at(/^Send: M117 paused at /); return i >= 0 ? i : undefined; }, 10_000);
  await waitFor('afterPrintPaused run by the firmware', () => at(/^Recv: echo:paused at X/, pausedAt) >= 0 || undefined, 10_000);
  // The firmware's own answer to the pause's M114 is the truth the script data must match.
  const reports = serial().slice(0, pausedAt).filter((l) => /^Recv: X:/.test(l));
  const m114 = /^Recv: X:(\S+) Y:(\S+) Z:(\S+)/.exec(reports.at(-1) ?? '');
  assert.ok(m114, 'the pause asked the firmware for its position');
  const [fx, fy, fz] = [Number(m114[1]), Number(m114[2]), Number(m114[3])];
  assert.ok(fx >= 10 && fx <= 105 && fy >= 10 && fy <= 105, `a position inside the printed area: ${m114[0]}`);
  assert.equal(fz, 0.3);

  const pausedLine = serial()[pausedAt];
  const p = new RegExp(`^Send: M117 paused at X${NUM} Y${NUM} Z${NUM} T${NUM}/${NUM} B${NUM}$`).exec(pausedLine);
  assert.ok(p, `rendered with real values: ${pausedLine}`);
  assert.deepEqual([Number(p[1]), Number(p[2]), Number(p[3])], [fx, fy, fz]);
  assert.ok(Number(p[4]) > 21.3, `the hotend was heating from the 21.3 °C ambient: ${p[4]}`);
  assert.deepEqual([Number(p[5]), Number(p[6])], [205, 60]);
  const event = rec.events.find((e) => e.name === 'PrintPaused')!.payload;
  assert.deepEqual([event.position.x, event.position.y, event.position.z], [fx, fy, fz]);

  // While paused the head is parked and the heaters turned off, as a user would during a long pause.
  const park = await s.api('/api/printer/command', { method: 'POST', json: { commands: ['G1 X0 Y0 Z5 F4500', 'M104 S0', 'M140 S0', 'M114'] } });
  assert.equal(park.status, 204);
  await waitFor('parked', () => (s.printer.lastPosition().z === 5 && s.printer.temperatures().tool0?.target === 0) || undefined, 10_000);

  assert.equal(await jobCommand(s, 'pause', 'resume'), 204);
  const resumedAt = await waitFor('beforePrintResumed sent', () => { const i = at(/^Send: M117 resumed from /); return i >= 0 ? i : undefined; }, 10_000);
  const move = at(/^Send: G1 X\S+ Y\S+ Z\S+ F6000$/, pausedAt);
  assert.ok(move > pausedAt && move < resumedAt, 'the move back comes with the resume script');
  const back = new RegExp(`^Send: G1 X${NUM} Y${NUM} Z${NUM} F6000$`).exec(serial()[move]);
  assert.ok(back, serial()[move]);
  assert.deepEqual([Number(back[1]), Number(back[2]), Number(back[3])], [fx, fy, fz], 'back to where the pause stopped, not the parked position');
  const restored = serial().slice(move, resumedAt + 1).filter((l) => l.startsWith('Send: '));
  assert.deepEqual(restored.slice(1), ['Send: M104 S205', 'Send: M140 S60', 'Send: M117 resumed from X0 Z5']);
  // Nothing of the file went out while paused; it carries on after the resume script.
  assert.equal(at(/^Send: G1 .*E0\.5/, pausedAt), at(/^Send: G1 .*E0\.5/, resumedAt));
  await waitFor('PrintDone', () => rec.names().includes('PrintDone') || undefined, 60_000);
  await waitFor('afterPrintDone run by the firmware', () => at(/^Recv: echo:done heated\.gcode$/) >= 0 || undefined, 10_000);

  const started = at(/^Send: M117 starting heated\.gcode$/);
  assert.ok(started >= 0 && at(/^Recv: echo:starting heated\.gcode$/) > started, 'beforePrintStarted ran on the firmware');
  assert.ok(started < at(/^Send: M117 file begins$/), 'before the first line of the file');
  const done = at(/^Send: M117 done heated\.gcode$/);
  assert.ok(done > at(/^Send: M117 file ends$/), 'after the last line of the file');
  assert.equal(rec.names().filter((n) => n === 'GcodeScriptAfterPrintPausedRunning').length, 1);
  assert.equal(rec.names().filter((n) => n === 'GcodeScriptBeforePrintResumedRunning').length, 1);
});
