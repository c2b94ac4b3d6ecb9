// Listener bookkeeping shared by the line transports: typed on/off and a close that is reported exactly once.
import type { LineTransportEvents } from '../protocol/line-transport.ts';

export class TransportEvents {
  private lineListeners: LineTransportEvents['line'][] = [];
  private closeListeners: LineTransportEvents['close'][] = [];
  private closed = false;

  on<E extends keyof LineTransportEvents>(event: E, fn: LineTransportEvents[E]): void {
    if (event === 'line') this.lineListeners = [...this.lineListeners, fn as LineTransportEvents['line']];
    else this.closeListeners = [...this.closeListeners, fn as LineTransportEvents['close']];
  }

  off<E extends keyof LineTransportEvents>(event: E, fn: LineTransportEvents[E]): void {
    if (event === 'line') this.lineListeners = this.lineListeners.filter((l) => l !== fn);
    else this.closeListeners = this.closeListeners.filter((l) => l !== fn);
  }

  /** Arms the close report again (a transport object is reopened). */
  opened(): void {
    this.closed = false;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  emitLine(line: string): void {
    const ls = this.lineListeners;
    for (let i = 0; i < ls.length; i++) ls[i](line);
  }

  emitClose(error?: Error): void {
    if (this.closed) return;
    this.closed = true;
    for (const l of this.closeListeners) l(error);
  }
}
