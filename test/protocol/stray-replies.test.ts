// Replies the firmware did not owe: stray oks and waits, an ok behind line noise, a late ok after a communication
// timeout. The window must stay what it is configured to be, and no line may be lost, doubled or left waiting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { batches, flush, makeRig, runTranscript, type Rig, newJob } from './scripted.ts';

const TEMP_OK = 'ok T:210.0 /210.0 B:60.0 /60.0 @:64 B@:30';

function startJob(rig: Rig, count: number): string[] {
  const file = Array.from({ length: count }, (_, i) => `G1 X${i + 1} Y${(i * 7) % 100}`);
  rig.job = newJob(rig, batches(file, 16), { finished: (o) => { rig.outcome = o; } });
  rig.job.start();
  return file;
}

/**
 * A firmware that answers the lines it has received in order, one per read (or all it holds in one read with
 * `together`); `extra` adds replies to the same read as the answer to the line at that index. Returns the most lines and
 * bytes the firmware ever held unanswered and the job lines it received, in order.
 */
async function serve(rig: Rig, extra: (index: number) => string[] = () => [], together = false): Promise<{ maxHeld: number; maxBytes: number; received: string[] }> {
  const held: string[] = [];
  const received: string[] = [];
  let maxHeld = 0;
  let maxBytes = 0;
  let index = 0;
  for (let turn = 0; turn < 5000; turn++) {
    await flush();
    for (let l = rig.transport.take(); l !== undefined; l = rig.transport.take()) held.push(l);
    maxHeld = Math.max(maxHeld, held.length);
    maxBytes = Math.max(maxBytes, held.reduce((n, l) => n + l.length + 1, 0));
    if (held.length === 0) {
      if (rig.outcome !== undefined) return { maxHeld, maxBytes, received };
      throw new Error(`nothing in flight and no outcome after ${received.length} lines`);
    }
    for (const line of held.splice(0, together ? held.length : 1)) {
      const m = /^N\d+ (G1 .*)\*\d+$/.exec(line);
      if (m) received.push(m[1]);
      rig.transport.reply(line.includes('M105') ? TEMP_OK : 'ok');
      for (const r of extra(index++)) rig.transport.reply(r);
    }
  }
  throw new Error('the job did not end');
}

async function readyRig(settings: Parameters<typeof makeRig>[0] = {}, streaming = false): Promise<Rig> {
  const rig = makeRig(settings, {}, streaming);
  await runTranscript(rig, '! ready Marlin');
  return rig;
}

for (const streaming of [false, true]) {
  const via = streaming ? ' (streaming transport)' : '';

  test(`ping-pong: 128 stray oks in one read let no extra line out; the print completes, every line once, in order${via}`, async () => {
    const rig = await readyRig({}, streaming);
    const file = startJob(rig, 40);
    const { maxHeld, received } = await serve(rig, (i) => (i === 5 || i === 20 ? Array<string>(128).fill('ok') : []));
    assert.equal(maxHeld, 1, 'ping-pong: never more than one line waiting in the firmware');
    assert.deepEqual(received, file);
    assert.equal(rig.outcome, 'done');
    assert.ok(rig.engine.strayOks >= 254, String(rig.engine.strayOks));
  });

  // With several plain oks owed, a stray one cannot be told from a real one (only ADVANCED_OK's N can); what can be
  // told is an ok beyond everything the firmware had received when it replied.
  test(`send-ahead: stray oks and waits beyond what was in flight never push the bytes in flight past the receive buffer${via}`, async () => {
    const rig = await readyRig({ rxBufferSize: 64 }, streaming);
    const file = startJob(rig, 60);
    const { maxBytes, received } = await serve(rig, (i) => (i % 9 === 4 ? ['ok', 'wait', 'ok', 'wait', 'ok'] : []), true);
    assert.deepEqual(received, file);
    assert.equal(rig.outcome, 'done');
    assert.ok(maxBytes <= 64, `bytes in flight ${maxBytes} > 64`);
  });
}

test('ping-pong: a burst of `wait` lets no extra line out', async () => {
  const rig = await readyRig();
  const file = startJob(rig, 30);
  const { maxHeld, received } = await serve(rig, (i) => (i === 3 ? Array<string>(50).fill('wait') : []));
  assert.equal(maxHeld, 1);
  assert.deepEqual(received, file);
});

test('an ok behind line noise ("\\0\\xff\\xfeok") is an ok: the next line goes out at once, no timeout needed', async () => {
  const rig = await readyRig();
  await runTranscript(rig, `
! job G1 X1|G1 X2|G1 X3
> N0 M110 N0*125
< ok
> N1 G1 X1*?
< \u0000\u00ff\u00feok
> N2 G1 X2*?
< \u0007\u0080ok\u0000\r
> N3 G1 X3*?
# Noise alone is no reply.
< \u00ff\u00fe\u0000
! nothing-sent
< ok
> N4 M400*?
< ok
! outcome done
`);
});

test('printable noise glued in front of an ok (`5Qok`) is an ok; a word ending in ok or a field is not', async () => {
  const rig = await readyRig();
  await runTranscript(rig, `
! job G1 X1|G1 X2|G1 X3
> N0 M110 N0*125
< ok
> N1 G1 X1*?
< 5Qok
> N2 G1 X2*?
< look
< echo:ok
! nothing-sent
< #ok T:20.0 /0.0
> N3 G1 X3*?
< ok
> N4 M400*?
< ok
! outcome done
`);
});

test('a communication timeout whose ok was only late leaves no extra line in flight for the rest of the print', async () => {
  const rig = await readyRig();
  const file = startJob(rig, 30);
  await runTranscript(rig, `
> N0 M110 N0*125
< ok
> N1 G1 X1 Y0*?
# The firmware is slow with this line: the host asks with an M105 outside the window...
! advance 31000
> N2 M105*?
# ...the late ok of line 1 comes, then the M105's answer: only now does the next line go.
< ok
! nothing-sent
< ${TEMP_OK}
> N3 G1 X2 Y7*?
`);
  rig.transport.readIndex--; // serve() answers N3 as well
  const { maxHeld, received } = await serve(rig);
  assert.equal(maxHeld, 1, 'one line in flight after the timeout, as before it');
  assert.deepEqual(received, file.slice(1));
  assert.equal(rig.outcome, 'done');
});

test('a communication timeout whose ok was lost: the probe answers for it; an unanswered probe is given up on the next timeout', async () => {
  const rig = await readyRig();
  startJob(rig, 3);
  await runTranscript(rig, `
> N0 M110 N0*125
< ok
> N1 G1 X1 Y0*?
! advance 31000
> N2 M105*?
! advance 31000
> N3 M105*?
< ${TEMP_OK}
> N4 G1 X2 Y7*?
< ok
> N5 G1 X3 Y14*?
< ok
> N6 M400*?
< ok
! outcome done
`);
});

test('send-ahead: the probe after a timeout fits in the receive buffer with what is in flight', async () => {
  const rig = await readyRig({ rxBufferSize: 64 });
  const file = startJob(rig, 20);
  await flush();
  assert.equal(rig.transport.take(), 'N0 M110 N0*125');
  rig.transport.reply('ok');
  await flush();
  const before = rig.transport.unread();
  const inFlight = (): number => rig.engine.snapshot().bytesInFlight;
  assert.ok(before.length >= 3 && inFlight() > 64 - 10, `window filled: ${inFlight()} bytes`);
  rig.timers.advance(31_000);
  await flush();
  const probe = rig.transport.unread().slice(before.length);
  assert.deepEqual(probe.map((l) => l.replace(/^N\d+ |\*\d+$/g, '')), ['M105']);
  assert.ok(inFlight() <= 64, `${inFlight()} bytes in flight after the probe`);
  const { received } = await serve(rig, () => [], true);
  assert.deepEqual(received, file);
  assert.equal(rig.outcome, 'done');
});
