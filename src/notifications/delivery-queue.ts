// One target's queue: messages leave one at a time, at most `perMinute` in any minute, each tried again after a failure
// with a doubling delay, the oldest dropped when too many wait. A target that hangs or refuses holds up only itself.
import type { Clock } from '../core/clock.ts';

export interface QueueLimits {
  perMinute: number;
  queueSize: number;
  retries: number;
  /** ms before the first retry; doubles each time. */
  retryDelayMs: number;
}

export interface DeliveryOutcome<T> {
  item: T;
  ok: boolean;
  attempts: number;
  error?: string;
  /** Dropped unsent because the queue was full. */
  dropped?: boolean;
}

export class DeliveryQueue<T> {
  private readonly waiting: T[] = [];
  private readonly sentAt: number[] = [];
  private running = false;
  private stopped = false;
  private wake: (() => void) | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly deliver: (item: T) => Promise<void>,
    private readonly limits: () => QueueLimits,
    private readonly done: (outcome: DeliveryOutcome<T>) => void,
    private readonly clock: Clock,
  ) {}

  get length(): number { return this.waiting.length; }

  push(item: T): void {
    if (this.stopped) return;
    const { queueSize } = this.limits();
    while (this.waiting.length >= queueSize) {
      const old = this.waiting.shift() as T;
      this.done({ item: old, ok: false, attempts: 0, dropped: true, error: `dropped: more than ${queueSize} messages waited` });
    }
    this.waiting.push(item);
    if (!this.running) void this.drain();
  }

  /** Ends the waits; what is queued is reported as dropped, and a delivery in flight ends by its own timeout. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    for (const item of this.waiting.splice(0)) this.done({ item, ok: false, attempts: 0, dropped: true, error: 'dropped: the server stopped' });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, ms);
    }).then(() => { this.wake = null; this.timer = null; });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (!this.stopped && this.waiting.length > 0) {
        const { perMinute, retries, retryDelayMs } = this.limits();
        // The rate limit: wait until the oldest of the last `perMinute` sends is a minute old.
        const now = this.clock.now();
        while (this.sentAt.length > 0 && now - this.sentAt[0] >= 60_000) this.sentAt.shift();
        if (this.sentAt.length >= perMinute) {
          await this.sleep(60_000 - (now - this.sentAt[0]));
          continue;
        }
        const item = this.waiting.shift() as T;
        let attempts = 0;
        let error = '';
        for (;;) {
          attempts++;
          this.sentAt.push(this.clock.now());
          try {
            await this.deliver(item);
            this.done({ item, ok: true, attempts });
            break;
          } catch (e) {
            error = e instanceof Error ? e.message : String(e);
            if (attempts > retries || this.stopped) {
              this.done({ item, ok: false, attempts, error });
              break;
            }
            await this.sleep(retryDelayMs * 2 ** (attempts - 1));
          }
        }
      }
    } finally {
      this.running = false;
    }
  }
}
