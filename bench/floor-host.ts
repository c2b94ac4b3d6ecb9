// Measuring instrument, not product code: the least a Node.js ping-pong host can do, to tell how much of the gap to
// idealhost is Gantry's and how much is the runtime's. Like idealhost: strip comments, number and checksum, one line
// per ok (no resends: run it without -c). Two ways to wait for the ok:
//   loop      the event loop (epoll, a libuv TTY stream), as Gantry does;
//   blocking  a plain blocking read()/write() loop, as a dedicated I/O thread could (it blocks this whole thread).
// Usage: tsx bench/floor-host.ts loop|blocking DEVICE FILE
import { closeSync, constants, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import tty from 'node:tty';
import { frameLine, stripComment } from '../src/gcode/line.ts';

const [mode, device, file] = process.argv.slice(2);
const lines = readFileSync(file, 'latin1').split('\n').map(stripComment).filter((l) => l !== '');
const fd = openSync(device, constants.O_RDWR | constants.O_NOCTTY);
const buf = Buffer.allocUnsafe(64 * 1024);
let next = 0;
let tail = '';

/** The text to write after the oks in `chunk`, or null when the file is done. */
function onBytes(n: number): string | null | undefined {
  const text = tail + buf.toString('latin1', 0, n);
  const parts = text.split('\n');
  tail = parts.pop() ?? '';
  let out: string | undefined;
  for (const p of parts) {
    if (!p.startsWith('ok')) continue;
    if (next >= lines.length) return null;
    out = `${frameLine(next + 1, lines[next])}\n`;
    next++;
  }
  return out;
}

writeSync(fd, `${frameLine(0, 'M110 N0')}\n`);
if (mode === 'blocking') {
  for (;;) {
    const out = onBytes(readSync(fd, buf, 0, buf.length, null));
    if (out === null) break;
    if (out !== undefined) writeSync(fd, out, null, 'latin1');
  }
  closeSync(fd);
} else {
  const TtyStream = tty.ReadStream as unknown as new (fd: number, opts: object) => tty.ReadStream;
  const sock: tty.ReadStream = new TtyStream(fd, {
    onread: {
      buffer: buf,
      callback: (n: number) => {
        const out = onBytes(n);
        if (out === null) sock.destroy();
        else if (out !== undefined) sock.write(out, 'latin1');
      },
    },
  });
  sock.resume();
}
