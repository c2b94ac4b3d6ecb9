// LineTransport to the built-in virtual printer: lines in go to the simulator, its replies come back on the next turn of the event loop.
import type { LineTransport, LineTransportEvents } from '../protocol/line-transport.ts';
import type { VirtualPrinter } from '../virtual-printer/virtual-printer.ts';
import { TransportEvents } from './transport-events.ts';

export class LoopbackTransport implements LineTransport {
  readonly name: string;
  private printer: VirtualPrinter | null = null;
  private readonly events = new TransportEvents();
  private pending: string[] = [];
  private flushScheduled = false;

  /** `create` powers up a fresh simulated printer on every open, like a board reset by opening its port. */
  constructor(private readonly create: () => VirtualPrinter, name = 'VIRTUAL') {
    this.name = name;
  }

  on<E extends keyof LineTransportEvents>(event: E, fn: LineTransportEvents[E]): void {
    this.events.on(event, fn);
  }

  off<E extends keyof LineTransportEvents>(event: E, fn: LineTransportEvents[E]): void {
    this.events.off(event, fn);
  }

  /** The simulator behind the port (tests inspect and steer it). */
  get firmware(): VirtualPrinter | null {
    return this.printer;
  }

  async open(): Promise<void> {
    if (this.printer) throw new Error('VIRTUAL is already open');
    const printer = this.create();
    this.printer = printer;
    this.events.opened();
    printer.onOutput((line) => this.deliver(line));
    printer.onDisconnect((err) => {
      this.printer = null;
      this.pending = [];
      this.events.emitClose(err);
    });
    printer.boot();
  }

  /** Replies are batched and delivered on setImmediate: never inside the engine's own write call. */
  private deliver(line: string): void {
    this.pending.push(line);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      const lines = this.pending;
      this.pending = [];
      for (const l of lines) {
        if (!this.printer) return;
        this.events.emitLine(l);
      }
    });
  }

  write(line: string): Promise<void> {
    const printer = this.printer;
    if (!printer) return Promise.reject(new Error('VIRTUAL is not open'));
    printer.receive(line);
    return Promise.resolve();
  }

  async setBaudrate(): Promise<void> {}

  async close(): Promise<void> {
    const printer = this.printer;
    this.printer = null;
    this.pending = [];
    printer?.stop();
    this.events.emitClose();
  }
}
