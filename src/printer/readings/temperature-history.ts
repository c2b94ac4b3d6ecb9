// Temperature history ring buffer for the graph and `?history=true`: one point per report, cut off after N minutes.
import type { TemperatureHistoryEntry } from '../types.ts';

export class TemperatureHistory {
  private readonly entries: Array<TemperatureHistoryEntry | undefined>;
  private head = 0;
  private size = 0;

  /** `cutoffMinutes` of history at up to `maxPerSecond` points per second. */
  constructor(private readonly cutoffMinutes: number, maxPerSecond = 1) {
    this.entries = new Array(Math.max(1, Math.ceil(cutoffMinutes * 60 * maxPerSecond)));
  }

  add(entry: TemperatureHistoryEntry): void {
    const cap = this.entries.length;
    const newest = this.size > 0 ? this.entries[(this.head + this.size - 1) % cap] : undefined;
    // Reports faster than the resolution replace the newest point instead of pushing older ones out.
    if (newest && entry.time <= newest.time) {
      this.entries[(this.head + this.size - 1) % cap] = entry;
      return;
    }
    if (this.size < cap) {
      this.entries[(this.head + this.size) % cap] = entry;
      this.size++;
    } else {
      this.entries[this.head] = entry;
      this.head = (this.head + 1) % cap;
    }
  }

  /** Oldest first; `limit` keeps only the most recent n; points older than the cutoff are left out. */
  list(limit?: number, nowSeconds = Date.now() / 1000): TemperatureHistoryEntry[] {
    const cap = this.entries.length;
    const out: TemperatureHistoryEntry[] = [];
    const oldest = nowSeconds - this.cutoffMinutes * 60;
    for (let k = 0; k < this.size; k++) {
      const e = this.entries[(this.head + k) % cap]!;
      if (e.time >= oldest) out.push(e);
    }
    return limit !== undefined && limit >= 0 && out.length > limit ? out.slice(out.length - limit) : out;
  }

  clear(): void {
    this.entries.fill(undefined);
    this.head = this.size = 0;
  }
}
