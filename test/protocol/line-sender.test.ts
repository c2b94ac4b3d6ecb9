// The sender on its own (no engine, no replies parsed): queue and markers, numbering and checksums, the ok window
// (ping-pong and send-ahead), the resend cursor, the owner's line rules, and its snapshot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LineSender, type JobFeed, type SenderHost } from '../../src/protocol/line-sender.ts';
import type { LineRules } from '../../src/protocol/line-rules.ts';
import { DEFAULT_ENGINE_SETTINGS, type EngineSettings } from '../../src/protocol/settings.ts';
import { frameLine } from '../../src/gcode/line.ts';
import { FakeTimers, ScriptedTransport, flush } from './scripted.ts';

function makeSender(over: Partial<EngineSettings> = {}, host: Partial<SenderHost> = {}) {
  const settings = { ...DEFAULT_ENGINE_SETTINGS, ...over };
  const written: string[] = [];
  const commands: string[] = [];
  const failures: string[] = [];
  const sender = new LineSender(() => settings, new FakeTimers(), {
    commandWritten: (cmd) => commands.push(cmd), suppressed: () => {}, mayWrite: () => true, linkFailed: () => {},
    fail: (text) => failures.push(text), currentTool: () => 0, firmwareKnown: () => true, ...host,
  });
  const transport = new ScriptedTransport();
  sender.wire.attach(transport);
  const take = async (): Promise<string[]> => {
    await flush();
    const out = transport.unread();
    transport.readIndex = transport.written.length;
    written.push(...out);
    return out;
  };
  /** An ok for the oldest line, read in a later turn than its write (as from the wire). */
  const ok = async (line = 'ok'): Promise<void> => {
    await flush();
    sender.acks.ok(line, sender.wire.epoch);
  };
  return { sender, take, ok, commands, failures };
}

function feedOf(lines: string[]): JobFeed {
  let i = 0;
  return { next: () => (i < lines.length ? lines[i++] : null), hostCommand: () => {}, pausingCommand: () => {} };
}

test('idle commands go one per ok, unnumbered once the firmware is known; a marker runs after the last ok', async () => {
  const { sender, take, ok, commands } = makeSender();
  let marked = false;
  sender.enqueue('M105');
  sender.enqueue('G28');
  sender.marker(() => { marked = true; });
  assert.deepEqual(await take(), ['M105']);
  assert.equal(sender.snapshot().queued, 2);
  await ok();
  assert.deepEqual(await take(), ['G28']);
  assert.equal(marked, false);
  await ok();
  assert.equal(marked, true);
  assert.deepEqual(commands, ['M105', 'G28']);
  assert.equal(sender.snapshot().linesInFlight, 0);
});

test('job lines are numbered with checksums; ping-pong keeps one in flight, send-ahead fills the byte budget', async () => {
  const pp = makeSender();
  pp.sender.jobActive = true;
  pp.sender.setFeed(feedOf(['G1 X1', 'G1 X2', 'G1 X3']));
  assert.deepEqual(await pp.take(), [frameLine(1, 'G1 X1')]);
  assert.equal(pp.sender.snapshot().flowControl, 'ping-pong');
  await pp.ok();
  assert.deepEqual(await pp.take(), [frameLine(2, 'G1 X2')]);

  const sa = makeSender({ rxBufferSize: 30 });
  sa.sender.jobActive = true;
  sa.sender.setFeed(feedOf(['G1 X1', 'G1 X2', 'G1 X3', 'G1 X4']));
  const first = await sa.take();
  // Each framed line is 12 bytes with its newline: two fit in 30, a third does not.
  assert.deepEqual(first, [frameLine(1, 'G1 X1'), frameLine(2, 'G1 X2')]);
  assert.equal(sa.sender.snapshot().flowControl, 'send-ahead');
  assert.equal(sa.sender.snapshot().bytesInFlight, 24);
  await sa.ok();
  assert.deepEqual(await sa.take(), [frameLine(3, 'G1 X3')]);
});

test('an ok read in the turn its line was written in is stray: dropped, not a credit', async () => {
  const { sender, take } = makeSender();
  sender.enqueue('M105');
  sender.enqueue('M114');
  sender.acks.ok('ok', sender.wire.epoch);
  assert.equal(sender.snapshot().strayOks, 1);
  assert.deepEqual(await take(), ['M105']);
});

test('a resend request rewinds the cursor to the line asked for and holds until its ok', async () => {
  const { sender, take, ok } = makeSender({ supportResendsWithoutOk: false, swallowOkAfterResend: true });
  sender.jobActive = true;
  sender.setFeed(feedOf(['G1 X1', 'G1 X2', 'G1 X3']));
  await take();
  await ok();
  await take();
  sender.acks.resend('Resend: 1', sender.next, true);
  const snap = sender.snapshot();
  assert.equal(snap.holding, true);
  assert.equal(snap.resendCursor, 1);
  assert.equal(snap.resendEnd, 2);
  assert.deepEqual(await take(), []);
  await ok();
  assert.deepEqual(await take(), [frameLine(1, 'G1 X1')]);
  await ok();
  assert.deepEqual(await take(), [frameLine(2, 'G1 X2')]);
  await ok();
  assert.deepEqual(await take(), [frameLine(3, 'G1 X3')]);
  assert.equal(sender.snapshot().resendRequests, 1);
});

test('a resend of a line no longer kept fails the job', async () => {
  const { sender, take, failures } = makeSender();
  sender.jobActive = true;
  sender.setFeed(feedOf(['G1 X1']));
  await take();
  sender.acks.resend('Resend: 0', 5, true);
  assert.match(failures[0], /no sufficient history/);
});

test('line rules: rewrites at send time, expansions when queued (never expanded again), moves reported', async () => {
  const moves: string[] = [];
  const rules: LineRules = {
    rewriteCodes: new Set(['M104']), rewrite: (cmd) => cmd.replace('S200', 'S205'),
    expandCodes: new Set(['T']), expand: (cmd, _code, ctx) => (ctx.plannedTool === 0 ? ['M117 before', cmd, 'T9'] : null),
    moveSent: (cmd) => moves.push(cmd),
  };
  const { sender, take, ok } = makeSender();
  sender.setRules(rules);
  sender.enqueue('T1');
  sender.enqueue('M104 S200');
  sender.enqueue('G1 Z2');
  const out: string[] = [];
  for (let i = 0; i < 6; i++) {
    out.push(...await take());
    await ok();
  }
  assert.deepEqual(out, ['M117 before', 'T1', 'T9', 'M104 S205', 'G1 Z2']);
  assert.deepEqual(moves, ['G1 Z2']);
});

test('clear forgets queue, window and numbering', async () => {
  const { sender, take } = makeSender();
  sender.jobActive = true;
  sender.setFeed(feedOf(['G1 X1', 'G1 X2']));
  await take();
  sender.enqueue('M105');
  sender.setFeed(null);
  sender.clear();
  const s = sender.snapshot();
  assert.deepEqual([s.linesInFlight, s.queued, s.nextNumber, s.staged], [0, 0, 1, false]);
});

test('a `once` command is not queued again while the same command waits unsent; once written, it may be asked for again', async () => {
  const { sender, take, ok, commands } = makeSender();
  sender.enqueue('G4 S1');
  for (let i = 0; i < 5; i++) sender.enqueue('M20', { once: true });
  sender.enqueue('M21', { once: true });
  assert.deepEqual(await take(), ['G4 S1']);
  assert.equal(sender.snapshot().queued, 2, 'one M20 and the M21 wait');
  await ok();
  assert.deepEqual(await take(), ['M20']);
  // In flight, not waiting: a new request is a new listing.
  sender.enqueue('M20', { once: true });
  assert.equal(sender.snapshot().queued, 2);
  // Without `once`, a command queues as often as asked.
  sender.enqueue('M20');
  assert.equal(sender.snapshot().queued, 3);
  for (let i = 0; i < 3; i++) { await ok(); await take(); }
  assert.deepEqual(commands, ['G4 S1', 'M20', 'M21', 'M20', 'M20']);
});
