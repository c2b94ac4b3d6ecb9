// Simulated time: scaled, cancellable sleeps and real-time intervals; every timer is unref'd and dies with stop().

/** The longest delay setTimeout takes (2^31 − 1 ms); beyond it Node warns and fires after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;

export class Scheduler {
  private timers = new Set<NodeJS.Timeout>();
  private sleepers = new Set<() => void>();
  private stopped = false;

  /** `timeScale` multiplies simulated durations (0: everything instant). */
  constructor(readonly timeScale: number) {}

  /**
   * Real milliseconds for a simulated duration. A command with an absurd number (`G4 S1e308`, `G1 X1e308`) takes as
   * long as a timer can wait (≈ 24.8 days, cancelled by stop()), as the hardware would: no zero-length Infinity timer.
   */
  real(simMs: number): number {
    const ms = simMs * this.timeScale;
    return Number.isNaN(ms) ? 0 : Math.min(Math.max(0, ms), MAX_TIMER_MS);
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Waits a simulated duration; resolves early (never rejects) when the printer stops, callers check isStopped. */
  sleep(simMs: number): Promise<void> {
    const ms = this.real(simMs);
    if (this.stopped) return Promise.resolve();
    if (ms < 0.5) return new Promise((resolve) => setImmediate(resolve));
    return this.sleepReal(ms);
  }

  /** Waits real milliseconds (used for polling loops such as heater waits). */
  sleepReal(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.timers.delete(t);
        this.sleepers.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      t.unref();
      this.timers.add(t);
      this.sleepers.add(done);
    });
  }

  /** Repeats `fn` every `ms` real milliseconds until the returned cancel is called or the printer stops. */
  every(ms: number, fn: () => void): () => void {
    if (this.stopped) return () => {};
    const t = setInterval(fn, ms);
    t.unref();
    this.timers.add(t);
    return () => {
      clearInterval(t);
      this.timers.delete(t);
    };
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const wake of [...this.sleepers]) wake();
  }
}
