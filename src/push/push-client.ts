// One push client: who it is, what it asked for (throttle, subscription), what it has not been sent yet, and the
// bounded-backlog rule that drops it when it stops reading.
import type { Identity } from '../access/identity.ts';
import type { PushConnection } from './transports.ts';
import type { StatusDelta } from './status-monitor.ts';
import { MAX_LINES_PER_TICK } from './status-monitor.ts';
import { EVERYTHING, type Subscription } from './subscription.ts';
import type { CurrentView, OutMessage } from './messages.ts';

export interface ClientLimits {
  /** Above this many unsent bytes, `current` updates are held back (and batched) instead of queued. */
  softBytes: number;
  /** Above this the client is dropped: it fell too far behind. */
  hardBytes: number;
  /** Held back (above softBytes) for this long: dropped as well. */
  stallMs: number;
  /** How long a client may stay above hardBytes (up to four times it) before it is dropped. */
  graceMs: number;
}

export const DEFAULT_LIMITS: ClientLimits = { softBytes: 256 * 1024, hardBytes: 4 * 1024 * 1024, stallMs: 60_000, graceMs: 2_000 };

/** Messages held for a client that has not authenticated yet (OctoPrint keeps 100). */
const MAX_BACKLOG = 100;
/** Deltas a throttled or held-back client may accumulate before they are folded into one. */
const MAX_PENDING = 16;

let nextId = 1;

export class PushClient {
  readonly id = nextId++;
  identity: Identity;
  /** A valid `auth` was received (and not revoked since). */
  authed = false;
  sessionId: string | undefined;
  /** Receives history, current and events (the user has STATUS). */
  registered = false;
  historySent = false;
  /** The first `current` after `history` is due even if nothing changed. */
  needsCurrent = false;
  throttle = 1;
  subscription: Subscription = EVERYTHING;
  lastCurrentAt = Number.NEGATIVE_INFINITY;
  closed = false;
  private backlog: Array<{ msg: OutMessage; permissions: readonly string[] }> = [];
  private pending: StatusDelta[] = [];
  /** State of the last `current` sent (or of `history`): a delta with another one is due whatever the throttle. */
  lastStateKey: string | undefined;
  private stateChanged = false;
  private heldSince: number | undefined;
  private overSince: number | undefined;

  constructor(
    readonly conn: PushConnection,
    identity: Identity,
    private readonly limits: ClientLimits,
    private readonly onOverflow: (c: PushClient, reason: string) => void,
  ) {
    this.identity = identity;
  }

  get remoteAddress(): string {
    return this.conn.remoteAddress;
  }

  get wantsState(): boolean {
    return this.subscription.state !== false;
  }

  view(): CurrentView {
    const s = this.subscription.state;
    return {
      terminal: this.identity.has('MONITOR_TERMINAL'),
      logs: s === false ? false : s.logs,
      messages: s === false ? false : s.messages,
    };
  }

  /** Writes one serialised message (never blocks; the backlog is judged before the next round, see keepingUp). */
  send(msg: OutMessage): void {
    if (this.closed) return;
    this.conn.send(msg);
  }

  /**
   * Whether the client still drains what it was sent: checked before each round of sending, so a healthy client that
   * just received a burst is not mistaken for a stalled one. A backlog over the hard limit drops the client.
   */
  keepingUp(now = performance.now()): boolean {
    if (this.closed) return false;
    const buffered = this.conn.bufferedBytes();
    if (buffered <= this.limits.hardBytes) {
      this.overSince = undefined;
      return true;
    }
    // A burst may push a healthy client over the limit for a moment; a grace period tells it from a stalled one,
    // and a ceiling of four times the limit bounds the memory meanwhile.
    this.overSince ??= now;
    if (buffered <= 4 * this.limits.hardBytes && now - this.overSince < this.limits.graceMs) return true;
    this.onOverflow(this, 'send backlog over limit');
    return false;
  }

  /**
   * A message the client may see only after authenticating: kept (bounded) until `auth` succeeds, together with the
   * permissions it needs, because the user who authenticates may still lack them.
   */
  hold(msg: OutMessage, permissions: readonly string[]): void {
    if (this.backlog.length < MAX_BACKLOG) this.backlog.push({ msg, permissions });
  }

  /** Sends what the now authenticated user may see, in order; the rest is dropped as it would have been if authed. */
  flushBacklog(): void {
    const b = this.backlog;
    this.backlog = [];
    for (const { msg, permissions } of b) {
      if (permissions.every((p) => this.identity.has(p))) this.send(msg);
    }
  }

  dropBacklog(): void {
    this.backlog = [];
  }

  addDelta(d: StatusDelta): void {
    const before = this.pending.length > 0 ? this.pending[this.pending.length - 1].stateKey : this.lastStateKey;
    if (before !== undefined && before !== d.stateKey) this.stateChanged = true;
    this.pending.push(d);
    if (this.pending.length > MAX_PENDING) this.pending = foldRuns(this.pending);
  }

  clearPending(): void {
    this.pending = [];
    this.stateChanged = false;
  }

  get hasPending(): boolean {
    return this.pending.length > 0;
  }

  /**
   * The deltas to send now, one group per `current` (each group shows one state, in order), or undefined when the
   * client must wait (throttle not yet elapsed, or its socket is still full). A state change is due at once, whatever
   * the throttle. A socket that stays full past stallMs gets the client dropped.
   */
  takeDue(now: number, baseIntervalMs: number): StatusDelta[][] | undefined {
    if (this.pending.length === 0) return undefined;
    // A little slack so a 500 ms timer does not skip every other tick through jitter.
    if (!this.stateChanged && now - this.lastCurrentAt < baseIntervalMs * this.throttle - 50) return undefined;
    if (this.conn.bufferedBytes() > this.limits.softBytes) {
      this.heldSince ??= now;
      if (now - this.heldSince > this.limits.stallMs) this.onOverflow(this, 'stalled');
      return undefined;
    }
    this.heldSince = undefined;
    const out = this.pending;
    this.pending = [];
    this.stateChanged = false;
    this.lastCurrentAt = now;
    this.needsCurrent = false;
    this.lastStateKey = out[out.length - 1].stateKey;
    if (out.length === 1) return [out];
    const groups: StatusDelta[][] = [];
    for (const d of out) {
      const last = groups[groups.length - 1];
      if (last !== undefined && last[0].stateKey === d.stateKey) last.push(d);
      else groups.push([d]);
    }
    return groups;
  }
}

/** Folds each run of deltas showing the same state; different states stay apart (each gets its own `current`). */
function foldRuns(ds: StatusDelta[]): StatusDelta[] {
  const out: StatusDelta[] = [];
  let start = 0;
  for (let i = 1; i <= ds.length; i++) {
    if (i < ds.length && ds[i].stateKey === ds[start].stateKey) continue;
    out.push(i - start === 1 ? ds[start] : foldDeltas(ds.slice(start, i)));
    start = i;
  }
  return out;
}

/** Many deltas → one: newest base, all points and lines (newest kept when over the cap). */
function foldDeltas(ds: StatusDelta[]): StatusDelta {
  const last = ds[ds.length - 1];
  const cap = (xs: string[]): string[] => (xs.length > MAX_LINES_PER_TICK ? xs.slice(-MAX_LINES_PER_TICK) : xs);
  return {
    base: last.base,
    stateKey: last.stateKey,
    temps: ds.flatMap((d) => d.temps).slice(-MAX_LINES_PER_TICK),
    logs: cap(ds.flatMap((d) => d.logs)),
    messages: cap(ds.flatMap((d) => d.messages)),
    serverTime: last.serverTime,
  };
}
