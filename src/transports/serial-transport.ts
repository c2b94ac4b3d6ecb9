// LineTransport over a real serial port (the `serialport` package's binding): open options, line framing, write
// back-pressure, disconnects.
import type { BindingPortInterface } from '@serialport/bindings-cpp';
import { spawn } from 'node:child_process';
import { access, realpath } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import type { LineTransport, LineTransportEvents } from '../protocol/line-transport.ts';
import { LineSplitter } from './line-splitter.ts';
import { TransportEvents } from './transport-events.ts';
import { serialIoFor, type SerialIo } from './serial-io.ts';
import { ReplySpin } from './reply-spin.ts';

export interface SerialTransportOptions {
  /** Lock the port against other openers (TIOCEXCL). */
  exclusive?: boolean;
  /** Ask the driver for low latency (FTDI/CH340 otherwise batch bytes for up to 16 ms). */
  lowLatency?: boolean;
  /** `serial.encoding`: `ascii` replaces anything else with `?`; `latin_1`/`utf-8` pass it through. */
  encoding?: string;
  /** Seconds to wait for the port to open. */
  openTimeout?: number;
  /** Open with odd parity once and reopen with none first (some CH340 driver states need it). */
  parityWorkaround?: 'detect' | 'always' | 'never';
  /** `serial.replySpinMicros`: how long to keep reading after a ping-pong send instead of sleeping (0: never). */
  replySpinMicros?: number;
  /**
   * `serial.resetOnConnect`: let opening the port reset the board. Off (the default), DTR is left alone where the OS
   * allows: HUPCL cleared, so it is not dropped on close (Linux and macOS keep it raised, and reopening makes no edge
   * for an auto-reset circuit), and not enabled at open (Windows). On, DTR drops on close and rises at the next open.
   */
  resetOnConnect?: boolean;
}

type WireEncoding = 'ascii' | 'latin1' | 'utf8';

function wireEncoding(name: string | undefined): WireEncoding {
  const n = (name ?? 'ascii').toLowerCase().replace(/[-_]/g, '');
  if (n === 'latin1' || n === 'iso88591') return 'latin1';
  if (n === 'utf8') return 'utf8';
  return 'ascii';
}

// eslint-disable-next-line no-control-regex
const HAS_NON_ASCII = /[^\x00-\x7f]/;
// eslint-disable-next-line no-control-regex
const ALL_NON_ASCII = /[^\x00-\x7f]/g;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  if (!(ms > 0)) return p;
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms / 1000} s`)), ms);
    timer.unref();
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

async function needsParityWorkaround(path: string, mode: SerialTransportOptions['parityWorkaround']): Promise<boolean> {
  if (mode === 'always') return true;
  if (mode === 'never') return false;
  // OctoPrint applies it on Debian-like systems only; pseudo-terminals never need it.
  const debian = await access('/etc/debian_version').then(() => true, () => false);
  if (!debian) return false;
  const real = await realpath(path).catch(() => path);
  return !real.startsWith('/dev/pts/');
}

/**
 * Clears HUPCL on the open port (`stty -hupcl` on it as standard input: the same open file, so no second open, no DTR
 * edge and no clash with the exclusive lock), so closing it leaves DTR raised. Best effort; Windows has no termios
 * (its binding disables DTR at open instead).
 */
async function keepDtrOnClose(port: BindingPortInterface): Promise<void> {
  const fd = (port as { fd?: number | null }).fd;
  if (process.platform === 'win32' || typeof fd !== 'number') return;
  await new Promise<void>((resolve) => {
    const child = spawn('stty', ['-hupcl'], { stdio: [fd, 'ignore', 'ignore'] });
    child.once('error', () => resolve());
    child.once('exit', () => resolve());
  });
}

export class SerialTransport implements LineTransport {
  private port: BindingPortInterface | null = null;
  private io: SerialIo | null = null;
  private readonly events = new TransportEvents();
  private readonly splitter: LineSplitter;
  private readonly encoding: WireEncoding;
  private closing = false;
  readonly replySpin: ReplySpin;

  constructor(readonly name: string, private baudrate: number, private readonly opts: SerialTransportOptions = {}) {
    this.encoding = wireEncoding(opts.encoding);
    // One CPU: the spin would take it from everything else (and from the firmware on a pseudo-terminal).
    this.replySpin = new ReplySpin({ maxMs: availableParallelism() > 1 ? (opts.replySpinMicros ?? 0) / 1000 : 0 });
    this.splitter = new LineSplitter((line) => this.events.emitLine(line));
  }

  on<E extends keyof LineTransportEvents>(event: E, fn: LineTransportEvents[E]): void {
    this.events.on(event, fn);
  }

  off<E extends keyof LineTransportEvents>(event: E, fn: LineTransportEvents[E]): void {
    this.events.off(event, fn);
  }

  get isOpen(): boolean {
    return this.io !== null && !this.closing;
  }

  async open(): Promise<void> {
    if (this.io) throw new Error(`${this.name} is already open`);
    const timeoutMs = (this.opts.openTimeout ?? 10) * 1000;
    if (await needsParityWorkaround(this.name, this.opts.parityWorkaround ?? 'detect')) {
      const probe = await withTimeout(this.openBinding('odd'), timeoutMs, `opening ${this.name}`);
      await probe.close().catch(() => {});
    }
    const opening = this.openBinding('none');
    const port = await withTimeout(opening, timeoutMs, `opening ${this.name}`).catch((err: unknown) => {
      // An open that completes after the timeout must not leave the device locked.
      opening.then((late) => late.close(), () => {}).catch(() => {});
      throw err;
    });
    if (this.opts.lowLatency) await port.set({ lowLatency: true } as never).catch(() => {});
    // The binding only ever sets HUPCL, and a fresh device starts with it set, so it is cleared here.
    if (!this.opts.resetOnConnect) await keepDtrOnClose(port);
    this.port = port;
    this.closing = false;
    this.events.opened();
    this.splitter.reset();
    let io: SerialIo;
    try {
      io = serialIoFor(port);
    } catch (err) {
      await port.close().catch(() => {});
      throw err;
    }
    this.io = io;
    io.start((buf, length) => {
      this.replySpin.replied();
      this.splitter.push(buf, length);
    }, (err) => {
      if (this.closing || this.io !== io) return;
      this.replySpin.stop();
      this.io = null;
      this.port = null;
      void io.close();
      this.events.emitClose(err ?? new Error(`${this.name} was closed unexpectedly`));
    });
  }

  private async openBinding(parity: 'none' | 'odd'): Promise<BindingPortInterface> {
    // serialport (its native binding and a dozen parser modules) loads with the first real port, not at start.
    const { SerialPort } = await import('serialport');
    return SerialPort.binding.open({
      path: this.name,
      baudRate: this.baudrate,
      lock: this.opts.exclusive ?? true,
      parity,
      // Dropping DTR on close makes the next open raise it again: the edge that resets boards with an auto-reset circuit.
      hupcl: this.opts.resetOnConnect === true,
    });
  }

  write(line: string): Promise<void> {
    const io = this.io;
    if (!io || this.closing) return Promise.reject(new Error(`${this.name} is not open`));
    // Resolves once the bytes are handed to the OS: that is the back-pressure signal.
    return io.write(Buffer.from(this.onWire(line + '\n'), this.encoding === 'utf8' ? 'utf8' : 'latin1'));
  }

  send(text: string): void {
    const io = this.io;
    if (!io || this.closing) return;
    io.send(this.onWire(text), this.encoding === 'utf8' ? 'utf8' : 'latin1');
  }

  awaitingReply(): void {
    if (this.io && !this.closing) this.replySpin.awaiting();
  }

  private onWire(text: string): string {
    return this.encoding === 'ascii' && HAS_NON_ASCII.test(text) ? text.replace(ALL_NON_ASCII, '?') : text;
  }

  async setBaudrate(baudrate: number): Promise<void> {
    this.baudrate = baudrate;
    if (!this.port) return;
    await this.port.update({ baudRate: baudrate });
    this.splitter.reset();
  }

  async close(): Promise<void> {
    const io = this.io;
    if (!io || this.closing) {
      this.events.emitClose();
      return;
    }
    this.closing = true;
    this.replySpin.stop();
    await io.close();
    this.io = null;
    this.port = null;
    this.closing = false;
    this.events.emitClose();
  }
}
