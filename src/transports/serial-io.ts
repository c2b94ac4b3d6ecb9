// Byte I/O on an open serial port: the port's fd under a libuv TTY stream (epoll, no thread-pool hop per read and write,
// about 3× the ping-pong rate of serialport's own stream). libuv writes to a serial tty blocking, which is harmless
// here: the engine never has more than a receive buffer's worth (≤ a few hundred bytes) unacknowledged.
import { close } from 'node:fs';
import tty from 'node:tty';
import type { BindingPortInterface } from '@serialport/bindings-cpp';

export interface SerialIo {
  /**
   * Starts delivering bytes: `onData` gets a reused buffer and the number of bytes read into it (valid only during the
   * call). `onEnd` is called once when the device stops (error: it vanished).
   */
  start(onData: (buf: Buffer, length: number) => void, onEnd: (err?: Error) => void): void;
  write(buf: Buffer): Promise<void>;
  /** Writes without a completion callback; a failure ends the stream with the error (see `start`). */
  send(text: string, encoding: 'latin1' | 'utf8'): void;
  /** Releases the fd (the binding must not close it again). */
  close(): Promise<void>;
}

type Port = BindingPortInterface & { fd: number | null; poller?: { destroy(): void; stop(): void } };

class TtyIo implements SerialIo {
  private ended = false;
  private sock: tty.ReadStream | null = null;
  /** Reads land here and go straight to the callback (`onread`): no stream buffering or 'data' events per chunk. */
  private readonly readBuffer = Buffer.allocUnsafe(64 * 1024);

  constructor(private readonly fd: number, private readonly port: Port) {}

  start(onData: (buf: Buffer, length: number) => void, onEnd: (err?: Error) => void): void {
    const end = (err?: Error) => {
      if (this.ended) return;
      this.ended = true;
      onEnd(err);
    };
    // Straight from the reused buffer (no view object per read): the line splitter copies what it keeps.
    const onread = { buffer: this.readBuffer, callback: (n: number, buf: Buffer) => { onData(buf, n); } };
    const sock = new (tty.ReadStream as unknown as new (fd: number, opts: object) => tty.ReadStream)(this.fd, { onread });
    this.sock = sock;
    // A pulled USB device or a closed pty master reads as EIO (error) or EOF (end).
    sock.on('error', (err) => end(err));
    sock.on('end', () => end(new Error('the device closed the connection')));
    sock.on('close', () => end(new Error('the device closed the connection')));
    sock.resume();
  }

  write(buf: Buffer): Promise<void> {
    const sock = this.sock;
    if (!sock) return Promise.reject(new Error('serial port is not started'));
    return new Promise((resolve, reject) => {
      sock.write(buf, (err) => (err ? reject(err) : resolve()));
    });
  }

  send(text: string, encoding: 'latin1' | 'utf8'): void {
    this.sock?.write(text, encoding);
  }

  async close(): Promise<void> {
    this.ended = true;
    const sock = this.sock;
    const handleFd = (sock as unknown as { _handle?: { fd?: number } } | null)?._handle?.fd;
    if (sock && !sock.destroyed) {
      await new Promise<void>((resolve) => {
        sock.once('close', () => resolve());
        sock.destroy();
      });
    }
    // libuv closed its handle's fd. On a pseudo-terminal it had reopened the device under a new number (and moved the
    // port's number onto the new file), so the port's own number is still open; never started, it is open as well.
    // Closed here, not through the binding, whose poller was already destroyed (destroying it twice crashes).
    if (!sock || handleFd !== this.fd) await new Promise<void>((resolve) => close(this.fd, () => resolve()));
    this.port.fd = null;
  }
}

/** Takes over the fd of a freshly opened binding port (the binding only opens terminal devices). */
export function serialIoFor(port: BindingPortInterface): SerialIo {
  const p = port as Port;
  if (p.fd === null || !tty.isatty(p.fd)) throw new Error('not a terminal device');
  // The binding's own poller would watch the same fd; the TTY stream replaces it.
  p.poller?.stop();
  p.poller?.destroy();
  return new TtyIo(p.fd, p);
}
