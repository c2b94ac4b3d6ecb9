// Push events in batches: serialised when they happen, written to every registered client that may see them at most
// every EVENT_BATCH_MS, in order, with OctoPrint's subscription and admin rules.
import type { PushClient } from './push-client.ts';
import { wantsName } from './subscription.ts';
import { ADMIN_ONLY_EVENTS, ADMIN_PAYLOAD_EVENTS, encode, eventPayload, type OutMessage } from './messages.ts';

/**
 * Events are fanned out in batches at most this often: a burst (Z changes while streaming fast) then costs one write
 * per client instead of one per event and client, and the printer link's own work is not interleaved with it. 100 ms
 * (a fifth of the `current` period) measured better than 25 ms for the link's throughput with 200 clients.
 */
const EVENT_BATCH_MS = 100;

/** `message`: not an event but a message that must keep its place among them (renderProgress after MovieRendering). */
interface QueuedEvent { name: string; full: OutMessage; redacted: OutMessage | undefined; message?: true }

export class EventFanout {
  private queue: QueuedEvent[] = [];
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(private readonly clients: Iterable<PushClient>) {}

  /** A pushed event; serialised now (the emitter may reuse its object), sent after the emitter's synchronous work. */
  event(name: string, payload: unknown): void {
    const full = encode('event', { type: name, payload: eventPayload(name, payload) });
    const redacted = ADMIN_PAYLOAD_EVENTS.has(name) ? encode('event', { type: name, payload: {} }) : undefined;
    this.enqueue({ name, full, redacted });
  }

  /** A message that keeps its place among the events (every registered client gets it). */
  message(name: string, text: OutMessage): void {
    this.enqueue({ name, full: text, redacted: undefined, message: true });
  }

  /** Sends what is queued now (at shutdown, so clients see `Shutdown`). */
  flushNow(): void {
    if (!this.flushTimer) return;
    clearTimeout(this.flushTimer);
    this.flush();
  }

  /** Drops what is queued. */
  stop(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
  }

  private enqueue(e: QueuedEvent): void {
    this.queue.push(e);
    this.flushTimer ??= setTimeout(() => this.flush(), EVENT_BATCH_MS);
  }

  private flush(): void {
    this.flushTimer = undefined;
    const queue = this.queue;
    this.queue = [];
    for (const c of this.clients) {
      if (!c.registered || !c.identity.has('STATUS') || !c.keepingUp()) continue;
      const admin = c.identity.has('ADMIN');
      const corked = queue.length > 1;
      if (corked) c.conn.cork();
      for (const e of queue) {
        if (c.closed) break;
        if (!e.message && (!wantsName(c.subscription.events, e.name) || (!admin && ADMIN_ONLY_EVENTS.has(e.name)))) continue;
        c.send(e.redacted && !admin ? e.redacted : e.full);
      }
      if (corked) c.conn.uncork();
    }
  }
}
