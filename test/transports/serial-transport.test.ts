// The real serialport path: framed lines to fakefw over a pty, resend replies, clean close, a vanished device (socat killed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { access, readdir, readlink, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { SerialTransport } from '../../src/transports/serial-transport.ts';
import { frameLine } from '../../src/gcode/line.ts';
import { startFakeFw } from './bench-tools.ts';
import { needs } from '../helpers/tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

/** Collects received lines; `next(n)` waits for n more. */
function collector(tr: SerialTransport) {
  const lines: string[] = [];
  let wake: (() => void) | null = null;
  tr.on('line', (l) => {
    lines.push(l);
    wake?.();
  });
  let mark = 0;
  return {
    lines,
    async untilOk(count = 1): Promise<string[]> {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const since = lines.slice(mark);
        let oks = 0;
        let end = -1;
        for (let i = 0; i < since.length; i++) {
          if (since[i].startsWith('ok') && ++oks === count) {
            end = i + 1;
            break;
          }
        }
        if (end !== -1) {
          mark += end;
          return since.slice(0, end);
        }
        if (Date.now() > deadline) throw new Error(`timed out, got ${JSON.stringify(since)}`);
        await new Promise<void>((r) => { wake = r; setTimeout(r, 50); });
      }
    },
  };
}

test('framed lines over a real pty to fakefw: oks, temperatures, a resend request, clean close', { skip: needs('cc', 'shared-data') }, async (t) => {
  const dir = await tempDir(t, 'gantry-serial-');
  const fw = await startFakeFw(dir);
  t.after(() => fw.stop().then(() => {}));
  const tr = new SerialTransport(fw.port, 250000, { parityWorkaround: 'never' });
  const closes: (Error | undefined)[] = [];
  tr.on('close', (e) => closes.push(e));
  await tr.open();
  const rx = collector(tr);

  await tr.write(frameLine(0, 'M110 N0'));
  assert.deepEqual(await rx.untilOk(), ['ok']);
  await tr.write('M105');
  assert.match((await rx.untilOk())[0], /^ok T:210\.00 \/210\.00 B:60\.00/);
  // Write many lines without waiting for oks: write() back-pressure keeps them in order.
  const writes: Promise<void>[] = [];
  for (let n = 1; n <= 200; n++) writes.push(tr.write(frameLine(n, `G1 X${n % 100} Y${(n * 7) % 100} E${n / 10}`)));
  await Promise.all(writes);
  const oks = await rx.untilOk(200);
  assert.equal(oks.filter((l) => l === 'ok').length, 200);
  await tr.write('N201 G1 X1*0');
  assert.deepEqual(await rx.untilOk(), ['Error:checksum mismatch, Last Line: 200', 'Resend: 201', 'ok']);
  await tr.write('M115');
  const m115 = await rx.untilOk();
  assert.match(m115[0], /^FIRMWARE_NAME:Marlin/);
  assert.ok(m115.includes('Cap:EMERGENCY_PARSER:1'));

  await tr.close();
  assert.deepEqual(closes, [undefined]);
  await assert.rejects(tr.write('M105'), /not open/);
  const summary = await fw.stop();
  assert.equal(summary.accepted, String(1 + 1 + 200 + 1), JSON.stringify(summary));
  assert.equal(summary.resends, '1');
});

test('a port can be reopened after a close (no fd left on the device), its baudrate changed while open, and a missing device fails cleanly', { skip: needs('cc', 'shared-data') }, async (t) => {
  const dir = await tempDir(t, 'gantry-serial-');
  const fw = await startFakeFw(dir);
  t.after(() => fw.stop().then(() => {}));
  const device = await realpath(fw.port);
  // Every number of this process that refers to the device (libuv reopens a pseudo-terminal under a second number).
  const openOnDevice = async (): Promise<number> => {
    const targets = await Promise.all((await readdir('/proc/self/fd')).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')));
    return targets.filter((p) => p === device).length;
  };
  for (let i = 0; i < 3; i++) {
    const tr = new SerialTransport(fw.port, 115200, { parityWorkaround: 'never' });
    await tr.open();
    assert.ok(await openOnDevice() > 0);
    const rx = collector(tr);
    await tr.write('M110 N0');
    assert.deepEqual(await rx.untilOk(), ['ok']);
    await tr.close();
    assert.equal(await openOnDevice(), 0, 'the device is left open after close');
  }
  // Baudrate detection changes the speed of an open port.
  const tr = new SerialTransport(fw.port, 115200, { parityWorkaround: 'never' });
  await tr.open();
  const rx = collector(tr);
  await tr.setBaudrate(250000);
  await tr.write('M110 N0');
  assert.deepEqual(await rx.untilOk(), ['ok']);
  await tr.close();
  const missing = new SerialTransport(join(dir, 'nope'), 115200, { parityWorkaround: 'never' });
  await assert.rejects(missing.open(), /No such file|ENOENT/);
});

test('a vanished device (socat killed) is reported as close with an error; the process survives', { skip: needs('socat') }, async (t) => {
  const dir = await tempDir(t, 'gantry-serial-');
  const a = join(dir, 'ttyA');
  const b = join(dir, 'ttyB');
  const socat = spawn('socat', ['-d', '-d', `pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], { stdio: 'ignore' });
  t.after(() => { if (socat.exitCode === null) socat.kill('SIGKILL'); });
  const deadline = Date.now() + 5000;
  for (;;) {
    if (await access(a).then(() => true, () => false) && await access(b).then(() => true, () => false)) break;
    if (Date.now() > deadline) throw new Error('socat did not create the pty pair');
    await new Promise((r) => setTimeout(r, 20));
  }
  const host = new SerialTransport(a, 115200, { parityWorkaround: 'never' });
  const device = new SerialTransport(b, 115200, { parityWorkaround: 'never', exclusive: false });
  await host.open();
  await device.open();
  const got = new Promise<string>((resolve) => device.on('line', resolve));
  await host.write('hello');
  assert.equal(await got, 'hello');

  const closed = new Promise<Error | undefined>((resolve) => host.on('close', resolve));
  device.on('close', () => {});
  socat.kill('SIGTERM');
  const err = await closed;
  assert.ok(err instanceof Error, 'close carries an error');
  assert.equal(host.isOpen, false);
  await assert.rejects(host.write('M105'));
  await host.close();
  await device.close();
});

test('serial.resetOnConnect: off clears HUPCL on the open port (DTR stays up on close, no reset on the next open); on sets it', async (t) => {
  const dir = await tempDir(t, 'gantry-serial-');
  const fw = await startFakeFw(dir);
  t.after(() => fw.stop().then(() => {}));
  // fakefw keeps its own end of the pty open, so the terminal settings outlive each close and can be read afterwards.
  const hupcl = async (): Promise<boolean> => {
    const out = await new Promise<string>((resolve, reject) => {
      const p = spawn('stty', ['-F', fw.port, '-a']);
      let text = '';
      p.stdout.on('data', (d: Buffer) => { text += d.toString(); });
      p.once('error', reject);
      p.once('exit', () => resolve(text));
    });
    const m = /(^|\s)(-?)hupcl\b/.exec(out);
    assert.ok(m, out);
    return m[2] === '';
  };
  for (const resetOnConnect of [true, false, true]) {
    const tr = new SerialTransport(fw.port, 115200, { parityWorkaround: 'never', exclusive: false, resetOnConnect });
    await tr.open();
    const rx = collector(tr);
    await tr.write('M110 N0');
    assert.deepEqual(await rx.untilOk(), ['ok']);
    await tr.close();
    assert.equal(await hupcl(), resetOnConnect, `resetOnConnect ${resetOnConnect}`);
  }
});
