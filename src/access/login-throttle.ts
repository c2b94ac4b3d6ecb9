// Brute-force protection for password logins: counts attempts per key (client address, user name) in several windows.
import type { Clock } from '../core/clock.ts';

/** 3 per minute, 5 per 10 minutes, 10 per hour — the limits browser users and scripts already know. */
const WINDOWS: ReadonlyArray<{ ms: number; limit: number }> = [
  { ms: 60_000, limit: 3 },
  { ms: 600_000, limit: 5 },
  { ms: 3_600_000, limit: 10 },
];

/** `expires` on the monotonic clock: a jump of the wall clock must not lift a block early nor keep it for an hour. */
interface Counter { count: number; expires: number }

/** One login attempt that was counted before its password is checked. */
export interface LoginAttempt {
  /** The password was right: the attempt no longer counts (successful logins never use up the limit). */
  succeeded(): void;
}

export class LoginThrottle {
  private failures = new Map<string, Counter[]>();

  constructor(private readonly clock: Clock) {}

  /** True when the key used up a window; then even correct credentials are refused until it expires. */
  blocked(key: string): boolean {
    const counters = this.live(key);
    const now = this.clock.monotonic();
    return counters !== undefined && counters.some((c, i) => c.expires > now && c.count >= WINDOWS[i].limit);
  }

  /** Seconds until a blocked address may try again (the latest of its used-up windows), 0 when it is not blocked. */
  retryAfter(address: string): number {
    const now = this.clock.monotonic();
    let until = now;
    for (const [i, c] of (this.live(address) ?? []).entries()) if (c.expires > now && c.count >= WINDOWS[i].limit) until = Math.max(until, c.expires);
    return Math.ceil((until - now) / 1000);
  }

  /**
   * Counts an attempt against every key at once, before the slow password check, so parallel attempts see each other:
   * undefined (and nothing counted) when any key is blocked. The attempt stays counted as a failure unless the caller
   * reports success. Checking and counting happen in one synchronous step, so no interleaving can slip past the limit.
   */
  begin(keys: readonly string[]): LoginAttempt | undefined {
    if (keys.some((k) => this.blocked(k))) return undefined;
    for (const k of keys) this.recordFailure(k);
    let open = true;
    return {
      succeeded: () => {
        if (!open) return;
        open = false;
        for (const k of keys) for (const c of this.failures.get(k) ?? []) c.count = Math.max(0, c.count - 1);
      },
    };
  }

  /**
   * Counts one failed attempt. Every failure pushes the window's end out again (elastic expiry), so an attacker that
   * keeps trying stays blocked.
   */
  recordFailure(key: string): void {
    const now = this.clock.monotonic();
    const counters = this.live(key) ?? WINDOWS.map(() => ({ count: 0, expires: 0 }));
    counters.forEach((c, i) => {
      if (c.expires <= now) c.count = 0;
      c.count++;
      c.expires = now + WINDOWS[i].ms;
    });
    this.failures.set(key, counters);
    if (this.failures.size > 10_000) this.prune();
  }

  private live(key: string): Counter[] | undefined {
    const counters = this.failures.get(key);
    if (!counters) return undefined;
    const now = this.clock.monotonic();
    if (counters.every((c) => c.expires <= now)) {
      this.failures.delete(key);
      return undefined;
    }
    return counters;
  }

  private prune(): void {
    for (const key of [...this.failures.keys()]) this.live(key);
  }
}
