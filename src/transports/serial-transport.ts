// LineTransport over a real serial port (the `serialport` package): open options, line framing, write back-pressure, disconnects.
import { SerialPort } from 'serialport';
import { access, realpath } from 'node:fs/promises';
import type { LineTransport, LineTransportEvents } from '../protocol/line-transport.ts';
import { LineSplitter } from './line-splitter.ts';
import { TransportEvents } from './transport-events.ts';

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

export class SerialTransport implements LineTransport {
  private port: SerialPort | null = null;
  private readonly events = new TransportEvents();
  private readonly splitter: LineSplitter;
  private readonly encoding: WireEncoding;
  private closing = false;

  constructor(readonly name: string, private baudrate: number, private readonly opts: SerialTransportOptions = {}) {
    this.encoding = wireEncoding(opts.encoding);
    this.splitter = new LineSplitter((line) => this.events.emitLine(line));
  }

  on<E extends keyof LineTransportEvents>(event: E, fn: LineTransportEvents[E]): void {
    this.events.on(event, fn);
  }

  off<E extends keyof LineTransportEvents>(event: E, fn: LineTransportEvents[E]): void {
    this.events.off(event, fn);
  }

  get isOpen(): boolean {
    return this.port?.isOpen === true && !this.closing;
  }

  async open(): Promise<void> {
    if (this.port) throw new Error(`${this.name} is already open`);
    const timeoutMs = (this.opts.openTimeout ?? 10) * 1000;
    if (await needsParityWorkaround(this.name, this.opts.parityWorkaround ?? 'detect')) {
      const probe = this.create('odd');
      await withTimeout(new Promise<void>((resolve, reject) => probe.open((e) => (e ? reject(e) : resolve()))), timeoutMs, `opening ${this.name}`);
      await new Promise<void>((resolve) => probe.close(() => resolve()));
    }
    const port = this.create('none');
    this.port = port;
    this.closing = false;
    this.events.opened();
    this.splitter.reset();
    port.on('data', (chunk: Buffer) => this.splitter.push(chunk));
    port.on('close', (err?: Error | null) => this.onPortClosed(err ?? undefined));
    // An 'error' without a close (a failed write, a close error) still means the link is unusable.
    port.on('error', (err: Error) => {
      if (this.closing) return;
      if (port.isOpen) port.close(() => {});
      this.onPortClosed(err);
    });
    try {
      await withTimeout(new Promise<void>((resolve, reject) => port.open((e) => (e ? reject(e) : resolve()))), timeoutMs, `opening ${this.name}`);
    } catch (err) {
      this.port = null;
      port.removeAllListeners();
      if (port.isOpen) port.close(() => {});
      throw err;
    }
    if (this.opts.lowLatency) {
      await new Promise<void>((resolve) => port.set({ lowLatency: true } as never, () => resolve()));
    }
  }

  private create(parity: 'none' | 'odd'): SerialPort {
    return new SerialPort({
      path: this.name,
      baudRate: this.baudrate,
      autoOpen: false,
      lock: this.opts.exclusive ?? true,
      parity,
      hupcl: false,
    });
  }

  private onPortClosed(err: Error | undefined): void {
    const requested = this.closing;
    this.port?.removeAllListeners('data');
    this.port = null;
    if (requested) return;
    this.events.emitClose(err ?? new Error(`${this.name} was closed unexpectedly`));
  }

  write(line: string): Promise<void> {
    const port = this.port;
    if (!port || this.closing) return Promise.reject(new Error(`${this.name} is not open`));
    let text = line;
    if (this.encoding === 'ascii' && HAS_NON_ASCII.test(text)) text = text.replace(ALL_NON_ASCII, '?');
    const buf = Buffer.from(text + '\n', this.encoding === 'utf8' ? 'utf8' : 'latin1');
    return new Promise<void>((resolve, reject) => {
      // The callback fires once the binding handed the bytes to the OS: that is the back-pressure signal.
      port.write(buf, (err) => (err ? reject(err) : resolve()));
    });
  }

  async setBaudrate(baudrate: number): Promise<void> {
    this.baudrate = baudrate;
    const port = this.port;
    if (!port) return;
    await new Promise<void>((resolve, reject) => port.update({ baudRate: baudrate }, (e) => (e ? reject(e) : resolve())));
    this.splitter.reset();
  }

  async close(): Promise<void> {
    const port = this.port;
    if (!port || this.closing) {
      this.events.emitClose();
      return;
    }
    this.closing = true;
    await new Promise<void>((resolve) => {
      if (!port.isOpen) return resolve();
      port.close(() => resolve());
    });
    port.removeAllListeners();
    this.port = null;
    this.events.emitClose();
  }
}
