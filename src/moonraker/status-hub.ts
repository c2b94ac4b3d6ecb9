// Subscriptions of printer objects (printer.objects.subscribe) and their per-field change notifications: one snapshot
// and one diff per tick (≤ 4 Hz), shared by every subscriber; each gets the changed fields it subscribed to.
import type { Status } from './printer-objects.ts';

export type Wanted = Record<string, string[] | null>;

export interface Subscriber {
  wanted: Wanted | null;
  send(status: Status, eventtime: number): void;
}

/** Per field, its JSON (so arrays and objects compare by value). */
type Seen = Map<string, Map<string, string>>;

export class StatusHub {
  private readonly subscribers = new Set<Subscriber>();
  private last: Seen = new Map();

  add(s: Subscriber): void { this.subscribers.add(s); }
  remove(s: Subscriber): void { this.subscribers.delete(s); }
  get active(): boolean {
    for (const s of this.subscribers) if (s.wanted) return true;
    return false;
  }

  /** One tick: the fields that changed since the last tick, to each subscriber that wants them. */
  tick(status: Status, eventtime: number): void {
    const changed: Status = {};
    const seen: Seen = new Map();
    for (const [name, obj] of Object.entries(status)) {
      const before = this.last.get(name);
      const now = new Map<string, string>();
      seen.set(name, now);
      for (const [field, value] of Object.entries(obj)) {
        const json = JSON.stringify(value) ?? 'null';
        now.set(field, json);
        if (before?.get(field) !== json) (changed[name] ??= {})[field] = value;
      }
    }
    this.last = seen;
    if (Object.keys(changed).length === 0) return;
    for (const s of this.subscribers) {
      if (!s.wanted) continue;
      const out: Status = {};
      let any = false;
      for (const [name, fields] of Object.entries(s.wanted)) {
        const c = changed[name];
        if (!c) continue;
        if (fields === null) {
          out[name] = c;
          any = true;
          continue;
        }
        for (const f of fields) {
          if (Object.hasOwn(c, f)) {
            (out[name] ??= {})[f] = c[f];
            any = true;
          }
        }
      }
      if (any) s.send(out, eventtime);
    }
  }
}
