// Writes framed lines to the transport: one write per turn on the streaming path, and the write-turn counter (epoch).
import type { LineTransport } from './line-transport.ts';

export interface WireEvents {
  /** Every line written, in wire form. */
  sent?(wire: string): void;
  /** A write failed (the transport without a streaming path reports it here). */
  failed(err: Error): void;
  /** After the writes of a turn are out: the sender prepares the next job line. */
  turnEnded(): void;
}

export class WireWriter {
  private transport: LineTransport | null = null;
  /**
   * Write turn: advanced after each turn that wrote something (a microtask, so after every line of the read that caused
   * the writes was handled). Replies handled in the turn a line was written in were read before it left.
   */
  epoch = 1;
  private epochQueued = false;
  private outbox = '';
  private turnQueued = false;

  constructor(private readonly events: WireEvents) {}

  get attached(): LineTransport | null { return this.transport; }

  attach(t: LineTransport | null): void {
    this.transport = t;
  }

  /** Drops lines collected for the end of the turn (the link was reset). */
  discard(): void {
    this.outbox = '';
  }

  write(wire: string): void {
    const t = this.transport;
    if (!t) return;
    if (!this.epochQueued) {
      this.epochQueued = true;
      queueMicrotask(this.nextEpoch);
    }
    if (t.send === undefined) {
      t.write(wire).then(undefined, this.writeError);
    } else if (!this.turnQueued) {
      // The first line of a turn leaves at once (ping-pong latency); more lines released in the same turn (several oks
      // in one read, send-ahead) are collected and leave together in one write at the end of the turn.
      this.turnQueued = true;
      queueMicrotask(this.endTurn);
      t.send(wire + '\n');
    } else {
      this.outbox += wire + '\n';
    }
    this.events.sent?.(wire);
  }

  flush(): void {
    const text = this.outbox;
    if (text === '') return;
    this.outbox = '';
    this.transport?.send?.(text);
  }

  private readonly nextEpoch = (): void => {
    this.epochQueued = false;
    this.epoch++;
  };

  private readonly writeError = (err: unknown): void => this.events.failed(err instanceof Error ? err : new Error(String(err)));

  private readonly endTurn = (): void => {
    this.turnQueued = false;
    this.flush();
    this.events.turnEnded();
  };
}
