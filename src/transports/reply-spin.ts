// Keeping the event loop awake for a moment after a line is sent in ping-pong, so the firmware's quick ok is read
// without the loop having gone to sleep: waking an idle CPU costs more per line than the line's own work.

export interface ReplySpinOptions {
  /** Longest spin after a send, in ms; 0 turns spinning off. */
  maxMs: number;
  now?: () => number;
}

/**
 * Learns how fast replies come (a moving average of send-to-reply time) and spins only when a reply is expected
 * within the window: a firmware that answers in milliseconds (a real printer over a UART) is never spun for, so the
 * CPU is spent only where it buys the latency back.
 */
export class ReplySpin {
  private readonly maxMs: number;
  private readonly now: () => number;
  private typicalMs = Number.POSITIVE_INFINITY;
  private sentAt = 0;
  private until = 0;
  private active = false;
  /** Sends that were spun for (for tests and the benchmark). */
  spins = 0;

  constructor(opts: ReplySpinOptions) {
    this.maxMs = Math.max(0, opts.maxMs);
    this.now = opts.now ?? (() => performance.now());
  }

  get spinning(): boolean {
    return this.active;
  }

  /** The average send-to-reply time seen so far (Infinity before the first reply). */
  get typicalReplyMs(): number {
    return this.typicalMs;
  }

  /** A line went out and nothing more can go until the firmware replies. */
  awaiting(): void {
    const now = this.now();
    this.sentAt = now;
    // Twice the usual reply time covers most replies; beyond the window spinning only burns CPU.
    const window = this.typicalMs * 2;
    if (this.maxMs === 0 || !(window <= this.maxMs)) return;
    this.until = now + window;
    this.spins++;
    if (!this.active) {
      this.active = true;
      setImmediate(this.tick);
    }
  }

  /** Bytes arrived from the firmware. */
  replied(): void {
    if (this.sentAt !== 0) {
      const ms = this.now() - this.sentAt;
      this.typicalMs = this.typicalMs === Number.POSITIVE_INFINITY ? ms : this.typicalMs * 0.9 + ms * 0.1;
      this.sentAt = 0;
    }
    this.until = 0;
  }

  stop(): void {
    this.until = 0;
    this.sentAt = 0;
  }

  // A pending immediate makes libuv poll for I/O without blocking, so the loop turns over instead of sleeping.
  private readonly tick = (): void => {
    if (this.until > this.now()) setImmediate(this.tick);
    else this.active = false;
  };
}
