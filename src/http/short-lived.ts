// A value read from devices or the disk (serial ports, script files) shared by the requests of a short while: many
// polling clients cost one scan per window instead of one each. Concurrent callers share one load; failures are not kept.
/** How long a serial port scan or a read of the scripts folder serves later requests. */
export const SCAN_REUSE_MS = 1000;

export interface ShortLived<T> {
  get(): Promise<T>;
  /** Forgets the value (after a change that must show at once, e.g. a settings save). */
  clear(): void;
}

export function shortLived<T>(load: () => Promise<T> | T, ttlMs: number): ShortLived<T> {
  let value: Promise<T> | undefined;
  let until = 0;
  return {
    get() {
      const now = performance.now();
      if (value && now < until) return value;
      until = now + ttlMs;
      const p = Promise.resolve().then(load);
      value = p;
      p.catch(() => { if (value === p) value = undefined; });
      return p;
    },
    clear() {
      value = undefined;
    },
  };
}
