// End to end over the real serial path: printer service + protocol engine + serialport on a pty to fakefw (connect,
// temperature, jog, home; a streamed job under corruption every 50 lines arrives complete, once, in order).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JobLineBatch, JobOutcome } from '../../src/printer/types.ts';
import { printerOnFakeFw } from './fakefw-printer.ts';
import { needs } from '../helpers/tools.ts';

const rig = (t: { after(fn: () => Promise<void>): void }, fwArgs: string[] = [], serial: Record<string, unknown> = {}) =>
  printerOnFakeFw(t, { fwArgs, serial });

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('connect over a pty to fakefw, read temperatures, jog and home', { skip: needs('cc', 'shared-data') }, async (t) => {
  const { fw, printer, log } = await rig(t);
  await printer.connect({ port: fw.port, baudrate: 250000 });
  await until('Operational', () => printer.state().text === 'Operational');
  assert.equal(printer.connection().port, fw.port);
  printer.commands(['M105']);
  await until('a temperature reading', () => printer.temperatures().tool0?.actual === 210);
  assert.equal(printer.temperatures().bed?.target, 60);
  printer.jog({ x: 10, y: -5 });
  printer.home(['x', 'y', 'z']);
  await until('the home command on the wire', () => log.some((l) => /^Send: (N\d+ )?G28 X0 Y0 Z0\b/.test(l)));
  assert.ok(log.some((l) => /^Send: (N\d+ )?G1 X10 Y-5 F6000\b/.test(l)), log.join('\n'));
  // Every line sent got its ok: the command queue drains.
  await until('the queue to drain', () => log.filter((l) => l.startsWith('Recv: ok')).length >= log.filter((l) => l.startsWith('Send:')).length);
  await printer.disconnect();
  await until('Offline', () => printer.state().flags.closedOrError);
  const summary = await fw.stop();
  assert.equal(summary.other_err, '0');
});

test('a job streamed under corruption of every 50th line arrives complete: every line once, in order', { skip: needs('cc', 'shared-data') }, async (t) => {
  const { fw, printer } = await rig(t, ['-c', '50']);
  await printer.connect({ port: fw.port, baudrate: 250000 });
  await until('Operational', () => printer.state().text === 'Operational');
  const total = 600;
  async function* source(): AsyncGenerator<JobLineBatch> {
    const lines: string[] = [];
    const ends: number[] = [];
    for (let i = 1; i <= total; i++) {
      lines.push(`G1 X${i % 200} Y${(i * 3) % 200} E${(i / 100).toFixed(2)} ; move ${i}`);
      ends.push(i * 40);
    }
    yield { lines, ends };
  }
  const outcome = await new Promise<JobOutcome>((resolve) => {
    printer.streamJob(source(), { finished: (o) => resolve(o) });
  });
  assert.equal(outcome, 'done');
  await until('the printer back at Operational', () => printer.state().text === 'Operational');
  const summary = await fw.stop();
  // fakefw accepts a numbered line only as last+1, so `moves` counts each move exactly once, in order.
  assert.equal(summary.moves, String(total), JSON.stringify(summary));
  assert.ok(Number(summary.injected) >= total / 50 - 1, `corruption was injected (${summary.injected})`);
  assert.equal(summary.other_err, '0');
});
