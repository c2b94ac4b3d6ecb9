// The printer link in its own thread (serial.linkThread: worker), over a pty to fakefw: the thread keeps printing
// while the main thread is blocked (its prefetched lines), a stop ends the thread, and a thread that dies leaves an
// honest error state and a server that can connect again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { fileLineSource } from '../../../src/printer/job/file-line-source.ts';
import { TERMINAL_RECEIVED, type FromLinkThread } from '../../../src/printer/link/link-messages.ts';
import type { WorkerLink } from '../../../src/printer/link/worker-link.ts';
import { printerOnFakeFw } from '../../transports/fakefw-printer.ts';
import { needs } from '../../helpers/tools.ts';
import { waitFor } from '../../helpers/wait.ts';

async function rig(t: { after(fn: () => Promise<void>): void }, fwArgs: string[] = []) {
  const rigged = await printerOnFakeFw(t, { fwArgs, linkThread: 'worker' });
  const { printer, fw } = rigged;
  const link = (): WorkerLink => (printer as unknown as { link: { current: WorkerLink } }).link.current;
  const connect = async (): Promise<Worker> => {
    await printer.connect({ port: fw.port, baudrate: 250000 });
    await waitFor('Operational', () => printer.state().text === 'Operational' || undefined);
    const thread = link().thread;
    assert.ok(thread, 'the link runs in a thread');
    return thread;
  };
  return { ...rigged, link, connect };
}

async function jobFile(dir: string, lines: number): Promise<string> {
  const path = join(dir, 'job.gcode');
  const out: string[] = [];
  for (let i = 1; i <= lines; i++) out.push(`G1 X${i % 200} Y${(i * 3) % 200} E${(i / 100).toFixed(2)} ; move ${i}`);
  await writeFile(path, out.join('\n') + '\n');
  return path;
}

test('the link thread keeps printing while the main thread is blocked for 200 ms or more: lines acknowledged meanwhile', { skip: needs('cc', 'shared-data') }, async (t) => {
  const { dir, fw, printer, connect } = await rig(t, ['-d', '200']);
  const thread = await connect();
  const batches: FromLinkThread[] = [];
  thread.on('message', (m: FromLinkThread) => batches.push(m));
  const total = 30_000;
  const stream = printer.streamJob(fileLineSource(await jobFile(dir, total)), { finished: () => {} });
  await waitFor('printing well under way', () => stream.filepos > 100_000 || undefined, 30_000);

  // The rate with the main thread free, just before: a loaded machine is slow, not wrong (the busy loop below takes
  // a core from it, and on a shared 2-core machine the thread may get a small share of the other: a tenth of that rate
  // is asked. With the link on the main thread, or without the prefetch, hardly a line moves: 0-6 measured in 200 ms).
  // At least 20 lines tell the two apart, so on a machine that slow the block lasts long enough for a tenth of the
  // rate to make 20 (CI once measured 241 lines/s: 200 ms would have asked for 42 % of it); the thread's prefetch,
  // 750 lines and more, lasts longer than the longest block.
  const ref0 = batches.at(-1)!;
  await new Promise((r) => setTimeout(r, 300));
  const ref1 = batches.at(-1)!;
  const perMs = (ref1.mirror.resends.transmitted - ref0.mirror.resends.transmitted) / Math.max(1, ref1.at - ref0.at);
  const blockMs = Math.min(2_000, Math.max(200, Math.ceil(20 / Math.max(perMs * 0.1, 1e-3))));
  const expected = Math.max(20, Math.floor(perMs * blockMs * 0.1));
  const from = Date.now();
  while (Date.now() - from < blockMs) { /* the main thread does nothing else: no HTTP, no push, no feed refill */ }
  const to = Date.now();
  await new Promise((r) => setImmediate(r));
  await waitFor('the thread reporting after the block', () => batches.some((b) => b.at > to) || undefined);

  // What the thread reported while the main thread could not listen: sent during the block, delivered after it.
  const inside = batches.filter((b) => b.at >= from && b.at <= to);
  const oks = inside.flatMap((b) => b.events).flatMap((e) => (e[0] === 'terminal' ? e[1].split('\n') : []))
    .filter((l) => l.startsWith(`${TERMINAL_RECEIVED}ok`)).length;
  const before = batches.filter((b) => b.at < from).at(-1)?.mirror.resends.transmitted ?? 0;
  const during = (inside.at(-1)?.mirror.resends.transmitted ?? before) - before;
  const what = `during the ${blockMs} ms block (free: ${Math.round(perMs * 1000)} lines/s, so at least ${expected} expected)`;
  assert.ok(oks >= expected, `only ${oks} oks were handled ${what}`);
  assert.ok(during >= expected, `only ${during} lines were written ${what}`);

  await stream.cancel();
  assert.equal(await stream.done, 'cancelled');
  const summary = await fw.stop();
  assert.equal(summary.other_err, '0', JSON.stringify(summary));
});

test('stopping the server ends the link thread', { skip: needs('cc', 'shared-data') }, async (t) => {
  const { connect, stop, printer } = await rig(t);
  const thread = await connect();
  const exited = once(thread, 'exit');
  await stop();
  await exited;
  assert.equal(printer.state().flags.closedOrError, true);
});

test('a link thread that dies mid-print: the job ends with an error, the printer shows it, and a new connect works', { skip: needs('cc', 'shared-data') }, async (t) => {
  const { dir, printer, link, connect } = await rig(t, ['-d', '200']);
  const thread = await connect();
  let outcome: string | null = null;
  const stream = printer.streamJob(fileLineSource(await jobFile(dir, 30_000)), { finished: (o) => { outcome = o; } });
  await waitFor('printing', () => stream.filepos > 10_000 || undefined, 30_000);
  await thread.terminate();
  assert.equal(await stream.done, 'error');
  assert.equal(outcome, 'error');
  const state = printer.state();
  assert.equal(state.id, 'CLOSED_WITH_ERROR');
  assert.match(state.error, /printer link thread stopped/);
  assert.equal(printer.isPrinting(), false);

  const again = await connect();
  assert.notEqual(again, thread);
  assert.ok(link().isOperational());
  printer.commands(['M105']);
  await waitFor('a temperature reading over the new thread', () => printer.temperatures().tool0?.actual === 210 || undefined);
});

test('a stop while a connect is still preparing leaves no link thread behind', { skip: needs('cc', 'shared-data') }, async (t) => {
  const threads: Worker[] = [];
  const { fw, printer, stop } = await printerOnFakeFw(t, { linkThread: 'worker', threads });
  const exited = new Set<Worker>();
  const connecting = printer.connect({ port: fw.port, baudrate: 250000 });
  await stop();
  await connecting;
  for (const w of threads) w.once('exit', () => exited.add(w));
  // A thread that was started anyway must end on its own (a live one would keep the process from exiting).
  await waitFor('every link thread ended', () => threads.every((w) => exited.has(w) || w.threadId === -1) || undefined, 3000);
  assert.notEqual(printer.state().text, 'Operational');
  // And a connect after the stop opens nothing.
  await printer.connect({ port: fw.port, baudrate: 250000 });
  assert.equal(threads.filter((w) => w.threadId !== -1 && !exited.has(w)).length, 0);
});
