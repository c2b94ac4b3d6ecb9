// Clock interface so time-dependent services (timeouts, key validity, estimation) can be tested without sleeping.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Monotonic milliseconds, for measuring durations. */
  monotonic(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
};
