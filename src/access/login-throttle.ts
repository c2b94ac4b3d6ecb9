// Brute-force protection for password logins: counts failed attempts per client address in several windows.
import type { Clock } from '../core/clock.ts';

/** 3 per minute, 5 per 10 minutes, 10 per hour — the limits browser users and scripts already know. */
const WINDOWS: ReadonlyArray<{ ms: number; limit: number }> = [
  { ms: 60_000, limit: 3 },
  { ms: 600_000, limit: 5 },
  { ms: 3_600_000, limit: 10 },
];

interface Counter { count: number; expires: number }

export class LoginThrottle {
  private failures = new Map<string, Counter[]>();

  constructor(private readonly clock: Clock) {}

  /** True when the address used up a window; then even correct credentials are refused until it expires. */
  blocked(address: string): boolean {
    const counters = this.live(address);
    const now = this.clock.now();
    return counters !== undefined && counters.some((c, i) => c.expires > now && c.count >= WINDOWS[i].limit);
  }

  /** Seconds until a blocked address may try again (the latest of its used-up windows), 0 when it is not blocked. */
  retryAfter(address: string): number {
    const now = this.clock.now();
    let until = now;
    for (const [i, c] of (this.live(address) ?? []).entries()) if (c.expires > now && c.count >= WINDOWS[i].limit) until = Math.max(until, c.expires);
    return Math.ceil((until - now) / 1000);
  }

  /**
   * Counts one failed attempt. Every failure pushes the window's end out again (elastic expiry), so an attacker that
   * keeps trying stays blocked.
   */
  recordFailure(address: string): void {
    const now = this.clock.now();
    const counters = this.live(address) ?? WINDOWS.map(() => ({ count: 0, expires: 0 }));
    counters.forEach((c, i) => {
      if (c.expires <= now) c.count = 0;
      c.count++;
      c.expires = now + WINDOWS[i].ms;
    });
    this.failures.set(address, counters);
    if (this.failures.size > 10_000) this.prune();
  }

  private live(address: string): Counter[] | undefined {
    const counters = this.failures.get(address);
    if (!counters) return undefined;
    const now = this.clock.now();
    if (counters.every((c) => c.expires <= now)) {
      this.failures.delete(address);
      return undefined;
    }
    return counters;
  }

  private prune(): void {
    for (const address of [...this.failures.keys()]) this.live(address);
  }
}
