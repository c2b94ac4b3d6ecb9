// The motion planner: a fixed number of slots; moves occupy one each and run one after another for their simulated time.
import type { Scheduler } from './scheduler.ts';

export class Planner {
  /** Durations (simulated ms) of queued moves; the head is executing. */
  private queue: number[] = [];
  private running = false;
  private slotWaiters: (() => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  /** Bumped by clear(): a move that finishes after a quick stop must not remove a newer one. */
  private epoch = 0;

  constructor(readonly slots: number, private readonly scheduler: Scheduler) {}

  get free(): number {
    return Math.max(0, this.slots - this.queue.length);
  }

  get isEmpty(): boolean {
    return this.queue.length === 0;
  }

  /** Resolves once the move has a slot (at once while the planner has room), as Marlin's ok does. */
  async add(durationMs: number): Promise<void> {
    while (this.queue.length >= this.slots && !this.scheduler.isStopped) {
      await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
    }
    if (this.scheduler.isStopped) return;
    this.queue.push(durationMs);
    if (!this.running) void this.run();
  }

  /** Resolves when every queued move has finished (M400, G28, SD print end). */
  drained(): Promise<void> {
    if (this.queue.length === 0 || this.scheduler.isStopped) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Quick stop (M410, kill): forget every queued move. */
  clear(): void {
    this.queue = [];
    this.epoch++;
    this.wake();
  }

  private async run(): Promise<void> {
    this.running = true;
    while (this.queue.length > 0 && !this.scheduler.isStopped) {
      const epoch = this.epoch;
      await this.scheduler.sleep(this.queue[0]);
      if (epoch === this.epoch) this.queue.shift();
      this.wake();
    }
    this.running = false;
    this.wake();
  }

  private wake(): void {
    const slot = this.slotWaiters;
    this.slotWaiters = [];
    for (const w of slot) w();
    if (this.queue.length === 0 || this.scheduler.isStopped) {
      const drain = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of drain) w();
    }
  }
}
