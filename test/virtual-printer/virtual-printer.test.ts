// Virtual printer: lines in → replies out (checksums and resends, queue and oks, heating, SD card, faults, kill).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { VirtualPrinter, HANDLERS } from '../../src/virtual-printer/virtual-printer.ts';
import type { VirtualPrinterOptions } from '../../src/virtual-printer/options.ts';
import { FolderSdStorage } from '../../src/virtual-printer/sd-card.ts';
import { Scheduler } from '../../src/virtual-printer/scheduler.ts';
import { frameLine } from '../../src/gcode/line.ts';
import { tempDir } from '../helpers/temp-dir.ts';

interface Rig {
  fw: VirtualPrinter;
  out: string[];
  send(...lines: string[]): void;
  /** Waits until `n` oks (counting from the last take) arrived; returns the lines since the last take. */
  take(oks?: number): Promise<string[]>;
  /** Waits until a line since the last take matches (without moving the mark); resolves to it. */
  until(match: (line: string) => boolean): Promise<string>;
}

function rig(t: { after(fn: () => void): void }, opts: Partial<VirtualPrinterOptions> = {}, storage?: FolderSdStorage): Rig {
  const fw = new VirtualPrinter({ timeScale: 0, busyInterval: 0, bootLines: [], ...opts }, storage);
  const out: string[] = [];
  let waiter: (() => void) | null = null;
  fw.onOutput((l) => {
    out.push(l);
    waiter?.();
  });
  t.after(() => fw.stop());
  let mark = 0;
  /** Waits (on output, re-checking every 20 ms) until `done` says the lines since the mark are enough. */
  async function wait<T>(done: (since: string[]) => T | undefined): Promise<T> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const since = out.slice(mark);
      const v = done(since);
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out; got ${JSON.stringify(since)}`);
      await new Promise<void>((resolve) => {
        waiter = resolve;
        setTimeout(resolve, 20);
      });
    }
  }
  return {
    fw,
    out,
    send: (...lines) => { for (const l of lines) fw.receive(l); },
    take: (oks = 1) => wait((since) => {
      if (since.filter((l) => l.startsWith('ok')).length < oks) return undefined;
      mark = out.length;
      return since;
    }),
    until: (match) => wait((since) => since.find(match)),
  };
}

test('every G-code handler has a one-line description', () => {
  for (const [code, h] of Object.entries(HANDLERS)) {
    assert.ok(h.description && !h.description.includes('\n'), code);
  }
  for (const code of ['G0', 'G1', 'G28', 'M104', 'M109', 'M140', 'M190', 'M141', 'M191', 'M105', 'M155', 'M115', 'M114', 'M400',
    'M220', 'M221', 'T', 'M112', 'M20', 'M21', 'M22', 'M23', 'M24', 'M25', 'M26', 'M27', 'M28', 'M29', 'M30']) {
    assert.ok(HANDLERS[code], `missing ${code}`);
  }
});

test('numbered lines with good checksums get ok; bad checksum and wrong number ask for a resend', async (t) => {
  const r = rig(t);
  r.send(frameLine(0, 'M110 N0'));
  assert.deepEqual(await r.take(), ['ok']);
  r.send(frameLine(1, 'G1 X1'));
  assert.deepEqual(await r.take(), ['ok']);
  r.send('N2 G1 X2*99');
  assert.deepEqual(await r.take(), ['Error:checksum mismatch, Last Line: 1', 'Resend: 2', 'ok']);
  r.send(frameLine(3, 'G1 X3'));
  assert.deepEqual(await r.take(), ['Error:Line Number is not Last Line Number+1, Last Line: 1', 'Resend: 2', 'ok']);
  r.send(frameLine(2, 'G1 X2'), frameLine(3, 'G1 X3'));
  assert.deepEqual(await r.take(2), ['ok', 'ok']);
  r.send('N4 G1 X4');
  assert.deepEqual(await r.take(), ['Error:No Checksum with line number, Last Line: 3', 'Resend: 4', 'ok']);
  r.send('G1 X5*12');
  assert.deepEqual(await r.take(), ['Error:No Line Number with checksum, Last Line: 3', 'Resend: 4', 'ok']);
  r.send('G1 X6 ; plain lines need no number');
  assert.deepEqual(await r.take(), ['ok']);
});

test('fault injection corrupts every Nth numbered line and loses every Nth ok', async (t) => {
  const r = rig(t, { corruptEveryN: 3 });
  r.send(frameLine(1, 'G1 X1'), frameLine(2, 'G1 X2'));
  assert.deepEqual(await r.take(2), ['ok', 'ok']);
  r.send(frameLine(3, 'G1 X3'));
  assert.deepEqual(await r.take(), ['Error:checksum mismatch, Last Line: 2', 'Resend: 3', 'ok']);
  const d = rig(t, { dropOkEveryN: 2 });
  d.send('M400', 'M400', 'M400');
  assert.deepEqual(await d.take(2), ['ok', 'ok']);
  assert.equal(d.out.length, 2);
});

test('ADVANCED_OK reports line, planner and queue room', async (t) => {
  const r = rig(t, { advancedOk: true, commandBuffer: 8, bufsize: 4 });
  r.send(frameLine(1, 'G28'));
  const [ok] = await r.take();
  assert.match(ok, /^ok N1 P8 B\d$/);
});

test('M105 temperatures, M104/M109 heating curve, M140/M190, chamber, tools', async (t) => {
  const r = rig(t, { numExtruders: 2, hasChamber: true });
  r.send('M105');
  assert.deepEqual(await r.take(), ['ok T:21.30 /0.00 T0:21.30 /0.00 T1:21.30 /0.00 B:21.30 /0.00 C:21.30 /0.00 @:0 B@:0']);
  r.send('M109 S210', 'M190 S60', 'M191 S40', 'M104 T1 S180', 'M105');
  const lines = await r.take(5);
  assert.match(lines.at(-1) ?? '', /^ok T:210\.00 \/210\.00 T0:210\.00 \/210\.00 T1:\S+ \/180\.00 B:60\.00 \/60\.00 C:40\.00 \/40\.00/);
  r.send('T1');
  assert.deepEqual(await r.take(), ['echo:Active Extruder: 1', 'ok']);
  r.send('T5');
  assert.deepEqual(await r.take(), ['echo:T5 Invalid extruder', 'ok']);
});

test('a heating wait reports temperatures while it lasts and M108 ends it early', async (t) => {
  const r = rig(t, { timeScale: 0.5 });
  r.send('M109 S200');
  // The first once-a-second report of the wait (it has no ok: the wait is still on).
  await r.until((l) => /^T:\d+\.\d\d \/200\.00/.test(l));
  r.send('M108');
  const lines = await r.take();
  assert.ok(lines.some((l) => /^T:\d+\.\d\d \/200\.00/.test(l)), JSON.stringify(lines));
  assert.equal(lines.at(-1), 'ok');
  r.fw.thermal.update();
  assert.ok(r.fw.thermal.tools[0].actual > 21.3 && r.fw.thermal.tools[0].actual < 200, 'heats gradually');
});

test('M155 auto-reports temperatures until S0', async (t) => {
  // The report interval runs on mocked time: seconds pass at once, and "no report after S0" holds for a long while.
  t.mock.timers.enable({ apis: ['setInterval'] });
  const r = rig(t);
  r.send('M155 S1');
  await r.take();
  t.mock.timers.tick(999);
  assert.equal(r.out.filter((l) => /^ ?T:/.test(l)).length, 0, 'not before the second is up');
  t.mock.timers.tick(2001);
  assert.equal(r.out.filter((l) => /^ ?T:/.test(l)).length, 3, JSON.stringify(r.out));
  r.send('M155 S0');
  await r.take();
  const count = r.out.length;
  t.mock.timers.tick(60_000);
  assert.equal(r.out.length, count);
});

test('M115 names the firmware and lists capabilities before its ok; M114 reports the position', async (t) => {
  const r = rig(t);
  r.send('M115');
  const lines = await r.take();
  assert.match(lines[0], /^FIRMWARE_NAME:Marlin/);
  for (const cap of ['AUTOREPORT_TEMP:1', 'AUTOREPORT_SD_STATUS:1', 'EMERGENCY_PARSER:1']) assert.ok(lines.includes(`Cap:${cap}`), cap);
  assert.equal(lines.at(-1), 'ok');
  r.send('G28', 'G1 X10 Y20 Z5 F6000', 'G91', 'G1 X5 E2', 'M114');
  const pos = await r.take(5);
  assert.match(pos.at(-2) ?? '', /^X:15\.00 Y:20\.00 Z:5\.00 E:2\.00 Count/);
});

test('moves take simulated time: the planner fills, then oks come at the rate of motion; M400 waits for it', async (t) => {
  const r = rig(t, { timeScale: 1, commandBuffer: 2, bufsize: 1 });
  const started = Date.now();
  // Three 60 mm moves at 6000 mm/min: 600 ms each; the third must wait for the first to finish.
  r.send('G1 X60 F6000', 'G1 X120', 'G1 X180');
  await r.take(2);
  const twoOks = Date.now() - started;
  await r.take(1);
  assert.ok(Date.now() - started >= 500, `third ok waited for a planner slot (${Date.now() - started} ms)`);
  assert.ok(twoOks < 500, `first two oks are immediate (${twoOks} ms)`);
  r.send('M400');
  await r.take();
  assert.ok(r.fw.planner.isEmpty);
});

test('busy: processing keep-alives during a long command', async (t) => {
  const r = rig(t, { timeScale: 1, busyInterval: 0.2 });
  r.send('G4 P700');
  const lines = await r.take();
  assert.ok(lines.filter((l) => l === 'echo:busy: processing').length >= 2, JSON.stringify(lines));
});

test('SD card: upload with M28/M29, list, select, print to completion, status, delete (folder storage)', async (t) => {
  const dir = await tempDir(t, 'gantry-vsd-');
  await writeFile(join(dir, 'Existing File.gcode'), 'G1 X1\n');
  const r = rig(t, {}, new FolderSdStorage(dir));
  r.send(frameLine(1, 'M28 test.gco'), frameLine(2, 'G28 ; home'), frameLine(3, 'G1 X10 F3000'), frameLine(4, 'M29'));
  const up = await r.take(4);
  assert.deepEqual(up, ['Writing to file: test.gco', 'ok', 'ok', 'ok', 'Done saving file.', 'ok']);
  assert.equal(await readFile(join(dir, 'test.gco'), 'utf8'), 'G28\nG1 X10 F3000\n');
  r.send('M20 L');
  assert.deepEqual(await r.take(), ['Begin file list', 'EXISTI~1.GCO 6 Existing File.gcode', 'TEST.GCO 17 test.gco', 'End file list', 'ok']);
  r.send('M23 nope.gco');
  assert.deepEqual(await r.take(), ['open failed, File: nope.gco.', 'ok']);
  r.send('M23 /TEST.GCO');
  assert.deepEqual(await r.take(), ['File opened: TEST.GCO Size: 17', 'File selected', 'ok']);
  r.send('M27');
  assert.deepEqual(await r.take(), ['Not SD printing', 'ok']);
  r.send('M24');
  await r.take();
  const deadline = Date.now() + 3000;
  while (!r.out.includes('Done printing file') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(r.out.includes('Done printing file'));
  assert.equal(r.fw.state.pos.x, 10);
  r.send('M27');
  assert.deepEqual((await r.take()).slice(-2), ['Not SD printing', 'ok']);
  r.send('M30 test.gco');
  assert.deepEqual(await r.take(), ['File deleted:test.gco', 'ok']);
  r.send('M22', 'M20');
  assert.deepEqual(await r.take(2), ['echo:SD card released', 'ok', 'echo:No SD card', 'ok']);
});

test('SD print can be paused, its progress reported and auto-reported with M27 S', async (t) => {
  const r = rig(t, { timeScale: 1, rxBuffer: 1 << 20 });
  r.send('M28 slow.g', ...Array.from({ length: 50 }, (_, i) => `G1 X${(i % 2) * 10} F6000`), 'M29');
  await r.take(52);
  r.send('M23 slow.g', 'M24', 'M27 S1');
  await r.take(3);
  // The once-a-second auto-report (no ok of its own).
  await r.until((l) => /^SD printing byte \d+\/\d+$/.test(l));
  r.send('M25');
  await r.take();
  // The reader stops after the move it is in: polled (no output says so).
  const deadline = Date.now() + 5000;
  while (r.fw.state.sdJob?.running && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  const job = r.fw.state.sdJob;
  assert.ok(job && !job.running && job.pos > 0 && job.pos < job.size);
  r.send('M27 S0', 'M27');
  const status = await r.take(2);
  assert.match(status[1], new RegExp(`^SD printing byte ${job.pos}/${job.size}$`));
});

test('M25 straight followed by M24 (before the reader stopped) keeps the SD print going to the end', async (t) => {
  const r = rig(t, { timeScale: 0.05, rxBuffer: 1 << 20 });
  r.send('M28 quick.g', ...Array.from({ length: 20 }, (_, i) => `G1 X${(i % 2) * 100} F3000`), 'M29');
  await r.take(22);
  r.send('M23 quick.g', 'M24');
  await r.take(2);
  r.send('M25', 'M24');
  await r.take(2);
  assert.ok(!r.out.includes('Done printing file'), 'the print is still running when paused and resumed');
  const deadline = Date.now() + 8000;
  while (!r.out.includes('Done printing file') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(r.out.includes('Done printing file'), 'the print must not stay paused after a resume');
});

test('M112 kills at once, even queued behind a long command; nothing answers afterwards', async (t) => {
  const r = rig(t, { timeScale: 1 });
  const sentAt = Date.now();
  r.send('G4 S5', 'M112');
  await r.until((l) => l === 'Error:Printer halted. kill() called!');
  assert.ok(Date.now() - sentAt < 2000, 'halted at once, not after the 5 s dwell');
  assert.ok(r.fw.isKilled);
  const n = r.out.length;
  r.send('M105');
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(r.out.length, n);
});

test('the disconnect fault reports an error once and stops all output', async (t) => {
  const r = rig(t, { disconnectAfterLines: 3 });
  const errors: Error[] = [];
  r.fw.onDisconnect((e) => errors.push(e));
  r.send('M105', 'M105');
  await r.take(2);
  r.send('M105', 'M105');
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(errors.length, 1);
  assert.equal(r.out.filter((l) => l.startsWith('ok')).length, 2);
  const dbg = rig(t);
  const e2: Error[] = [];
  dbg.fw.onDisconnect((e) => e2.push(e));
  dbg.send('!!DEBUG:disconnect');
  assert.equal(e2.length, 1);
});

test('unknown commands are echoed like Marlin and still acknowledged; M220/M221 set the factors', async (t) => {
  const r = rig(t);
  r.send('M9999 X', 'M220 S150', 'M221 S90', 'M220');
  const lines = await r.take(4);
  assert.deepEqual(lines, ['echo:Unknown command: "M9999 X"', 'ok', 'ok', 'ok', 'FR:150%', 'ok']);
  assert.equal(r.fw.state.flowFactor, 90);
});

test('absurd durations (G4 S1e308, an endless move) wait as long as a timer can, never a zero-length Infinity timer', () => {
  const s = new Scheduler(1);
  assert.equal(s.real(Infinity), 2_147_483_647);
  assert.equal(s.real(1e308 * 1000), 2_147_483_647);
  assert.equal(s.real(NaN), 0);
  assert.equal(s.real(-5), 0);
  assert.equal(new Scheduler(0.5).real(1000), 500);
});
