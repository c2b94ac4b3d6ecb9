// Test helper: the wall clock jumping (NTP setting a board's time after boot, a corrected hand-set clock), in this thread.
import type { TestContext } from 'node:test';

/** Date.now() moved by `ms` from now on, in this thread only; put back when the test ends. */
export function jumpClock(t: TestContext, ms: number): void {
  const real = Date.now;
  const shifted = () => real() + ms;
  Date.now = shifted;
  t.after(() => { if (Date.now === shifted) Date.now = real; });
}

export const HOUR_MS = 3_600_000;
