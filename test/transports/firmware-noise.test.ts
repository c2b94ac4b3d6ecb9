// A noisy firmware on a real pseudo-terminal (socat pair, serialport on both ends): binary junk lines, junk glued in
// front of oks, bursts of stray oks and waits, and a reboot (`start`) mid-print. Every line of a print reaches the
// firmware once and in order, the bytes waiting in its receive buffer never exceed it, nothing waits for a timeout; a
// reboot fails the print honestly and the link carries on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { SerialTransport } from '../../src/transports/serial-transport.ts';
import { ProtocolEngine } from '../../src/protocol/engine.ts';
import { JobStreamer, type JobOutcome } from '../../src/printer/job/job-stream.ts';
import { JobLifecycle } from '../../src/printer/job/job-lifecycle.ts';
import { DEFAULT_ENGINE_SETTINGS } from '../../src/protocol/settings.ts';
import { frameLine } from '../../src/gcode/line.ts';
import { batches } from '../protocol/scripted.ts';
import { needs } from '../helpers/tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const RX_BUFFER = 256;

/** Bytes no firmware reply is made of (no newline, no carriage return, no printable ASCII). */
function junk(seed: number, length: number): string {
  let s = '';
  let x = seed * 2654435761 >>> 0;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    const pool = (x >>> 16) % 3;
    const b = pool === 0 ? (x >>> 8) % 9 : pool === 1 ? 0x0e + ((x >>> 8) % 18) : 0x7f + ((x >>> 8) % 129);
    s += String.fromCharCode(b);
  }
  return s;
}

/**
 * Marlin-like: checks line numbers and checksums (error + Resend + ok otherwise), answers each line after the previous
 * one in its own turn (so lines a host writes too early pile up in its receive buffer, which is measured), and misbehaves
 * on a schedule counted in accepted G1 lines.
 */
class NoisyFirmware {
  readonly moves: string[] = [];
  maxHeldBytes = 0;
  duplicates = 0;
  resetAtMove = 0;
  private held: string[] = [];
  private heldBytes = 0;
  private lastN = 0;
  private scheduled = false;

  constructor(private readonly dev: SerialTransport) {
    dev.on('line', (l) => {
      this.held.push(l);
      this.heldBytes += Buffer.byteLength(l, 'latin1') + 1;
      this.maxHeldBytes = Math.max(this.maxHeldBytes, this.heldBytes);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.held.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const line = this.held.shift()!;
      this.heldBytes -= Buffer.byteLength(line, 'latin1') + 1;
      const out = this.handle(line);
      if (out) this.dev.send(out);
      this.schedule();
    });
  }

  private handle(line: string): string {
    const m = /^N(\d+) (.*)\*\d+$/.exec(line);
    let cmd = line.trim();
    if (m) {
      const n = Number(m[1]);
      cmd = m[2];
      if (frameLine(n, cmd) !== line) return `Error:checksum mismatch, Last Line: ${this.lastN}\nResend: ${this.lastN + 1}\nok\n`;
      if (cmd.startsWith('M110')) this.lastN = Number(/N(\d+)/.exec(cmd.slice(4))?.[1] ?? n);
      else if (n <= this.lastN) {
        this.duplicates++;
        return '';
      } else if (n !== this.lastN + 1) {
        return `Error:Line Number is not Last Line Number+1, Last Line: ${this.lastN}\nResend: ${this.lastN + 1}\nok\n`;
      } else this.lastN = n;
    }
    if (cmd.startsWith('M115')) return 'FIRMWARE_NAME:Marlin 2.1.2 (noisy pty) SOURCE_CODE_URL:x PROTOCOL_VERSION:1.0 MACHINE_TYPE:pty EXTRUDER_COUNT:1\nok\n';
    let ok = cmd.startsWith('M105') ? 'ok T:21.0 /0.0 B:21.0 /0.0 @:0 B@:0' : 'ok';
    if (!cmd.startsWith('G1 ')) return `${ok}\n`;
    this.moves.push(cmd);
    const k = this.moves.length;
    if (k === this.resetAtMove) {
      // Rebooted: what was received is gone, the greeting comes after some garbage, the line is never answered.
      this.held = [];
      this.heldBytes = 0;
      this.lastN = 0;
      return `${junk(k, 12)}\nstart\necho:Marlin 2.1.2\n`;
    }
    let before = '';
    let after = '';
    if (k % 11 === 0) before += `${junk(k, 24)}\n`; // a junk line of its own
    if (k % 13 === 0) ok = `${junk(k + 1, 3)}${ok}`; // junk glued in front of the ok
    if (k % 29 === 0) ok = `\u0000\u00ff\u00fe${ok}`;
    if (k % 23 === 0) after += 'ok\n'.repeat(20); // stray oks in the same read
    if (k % 31 === 0) after += 'wait\n'.repeat(5);
    return `${before}${ok}\n${after}`;
  }
}

async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('noisy firmware on a pty: junk, stray oks and waits, noise before ok, then a reboot mid-print', { skip: needs('socat') }, async (t) => {
  const dir = await tempDir(t, 'gantry-noise-');
  const a = join(dir, 'ttyHOST');
  const b = join(dir, 'ttyFW');
  const socat = spawn('socat', [`pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], { stdio: 'ignore' });
  t.after(() => { if (socat.exitCode === null) socat.kill('SIGTERM'); });
  const deadline = Date.now() + 5000;
  while (!(await access(a).then(() => true, () => false)) || !(await access(b).then(() => true, () => false))) {
    if (Date.now() > deadline) throw new Error('socat did not create the pty pair');
    await new Promise((r) => setTimeout(r, 20));
  }
  const device = new SerialTransport(b, 115200, { parityWorkaround: 'never', exclusive: false, encoding: 'latin_1' });
  await device.open();
  t.after(() => device.close());
  const fw = new NoisyFirmware(device);

  const messages: string[] = [];
  const resets: number[] = [];
  let job: JobStreamer | null = null;
  const engine = new ProtocolEngine({
    message: (text) => messages.push(text),
    printerReset: () => { resets.push(Date.now()); job?.abort('The printer was reset'); },
  }, {
    // Low timeouts: a lost ok would show up as a timeout message within the test's few seconds.
    timeout: { ...DEFAULT_ENGINE_SETTINGS.timeout, communication: 3, temperature: 2 },
  });
  const host = new SerialTransport(a, 115200, { parityWorkaround: 'never' });
  await engine.connect({ transport: host, port: a, baudrate: 115200 });
  t.after(() => engine.disconnect());
  await until('Operational and idle', () => engine.state === 'OPERATIONAL' && engine.firmwareInfoReceived && engine.linesInFlight === 0);

  const run = (file: string[]): Promise<JobOutcome> => new Promise<JobOutcome>((resolve) => {
    job = new JobStreamer(engine, batches(file, 32), { finished: (o) => resolve(o) }, {}, { lifecycle: new JobLifecycle(() => {}, () => engine.isOperational()) });
    job.start();
  });

  // A print through all the noise: every move once, in order, no timeout, the receive buffer never overrun.
  const file = Array.from({ length: 400 }, (_, i) => `G1 X${(i % 200) + 1} Y${(i * 7) % 200} F3000`);
  const started = Date.now();
  assert.equal(await run(file), 'done');
  const took = Date.now() - started;
  assert.ok(fw.maxHeldBytes <= RX_BUFFER, `the firmware held ${fw.maxHeldBytes} bytes unanswered (buffer ${RX_BUFFER})`);
  await until('the firmware done with the last line', () => fw.moves.length >= file.length, 2000).catch(() => {});
  assert.deepEqual(fw.moves, file);
  assert.equal(fw.duplicates, 0);
  assert.deepEqual(messages.filter((m) => /timeout/i.test(m)), [], 'no communication timeout');
  assert.ok(engine.strayOks > 0, 'the stray oks were seen and dropped');
  assert.ok(took < 10_000, `the print took ${took} ms`);

  // The firmware reboots at its 40th move: the print fails, nothing after that move reaches the firmware, and the link
  // resynchronises by itself.
  fw.moves.length = 0;
  fw.resetAtMove = 40;
  assert.equal(await run(file), 'error');
  assert.equal(resets.length, 1);
  await until('the link idle again', () => engine.state === 'OPERATIONAL' && engine.linesInFlight === 0);
  assert.deepEqual(fw.moves, file.slice(0, 40));
  fw.resetAtMove = 0;
  assert.equal(await run(file.slice(0, 30)), 'done', 'a print after the reboot runs');
  assert.deepEqual(fw.moves, [...file.slice(0, 40), ...file.slice(0, 30)]);
  assert.equal(fw.duplicates, 0);
  assert.deepEqual(messages.filter((m) => /timeout/i.test(m)), [], 'no communication timeout');
});
