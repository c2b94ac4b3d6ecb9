// Login sessions: id → user, with idle expiry. Kept in memory (a restart logs browsers out; remember-me logs them back in).
import { generateSessionId } from './keys.ts';
import type { LoginMechanism } from './identity.ts';
import type { Clock } from '../core/clock.ts';
import { Listeners } from '../core/listeners.ts';

export interface Session {
  id: string;
  user: string;
  mechanism: LoginMechanism;
  /** On the monotonic clock (ms), like lastSeen: a jump of the wall clock neither ends sessions nor keeps them. */
  created: number;
  lastSeen: number;
}

/**
 * Sessions one user may hold. Every passive login (API-key clients such as FDM Monster log in again on each reconnect)
 * makes one that would otherwise live for the whole validity period; beyond this the least recently used one ends.
 */
export const MAX_SESSIONS_PER_USER = 100;

/** Why a session ended (the push channel turns it into `reauthRequired`). */
export type SessionEndReason = 'logout' | 'stale' | 'removed' | 'modified';

export class SessionStore {
  private sessions = new Map<string, Session>();
  /** Session ids by user, so the per-user cap costs O(sessions of that user), not O(all sessions). */
  private byUser = new Map<string, Set<string>>();
  private readonly endListeners = new Listeners<[Session, SessionEndReason]>();

  constructor(private readonly clock: Clock, private readonly validityMs: () => number) {}

  onEnd(fn: (s: Session, reason: SessionEndReason) => void): () => void {
    return this.endListeners.add(fn);
  }

  create(user: string, mechanism: LoginMechanism): Session {
    this.prune();
    const now = this.clock.monotonic();
    const s: Session = { id: generateSessionId(), user, mechanism, created: now, lastSeen: now };
    const mine = this.byUser.get(user) ?? new Set<string>();
    while (mine.size >= MAX_SESSIONS_PER_USER) {
      let oldest: Session | undefined;
      for (const id of mine) {
        const other = this.sessions.get(id);
        if (other && (!oldest || other.lastSeen < oldest.lastSeen)) oldest = other;
      }
      if (!oldest) break;
      this.end(oldest, 'stale');
    }
    this.sessions.set(s.id, s);
    mine.add(s.id);
    this.byUser.set(user, mine);
    return s;
  }

  /** Live sessions (expired ones linger until the next login prunes them). */
  get size(): number {
    return this.sessions.size;
  }

  /** The live session, touched (its idle timer restarts); undefined when unknown or expired. */
  get(id: string): Session | undefined {
    const s = this.sessions.get(id);
    if (!s) return undefined;
    const now = this.clock.monotonic();
    if (now - s.lastSeen > this.validityMs()) {
      this.end(s, 'stale');
      return undefined;
    }
    s.lastSeen = now;
    return s;
  }

  delete(id: string, reason: SessionEndReason = 'logout'): void {
    const s = this.sessions.get(id);
    if (s) this.end(s, reason);
  }

  deleteForUser(user: string, reason: SessionEndReason = 'removed'): void {
    for (const s of [...this.sessions.values()]) if (s.user === user) this.end(s, reason);
  }

  /** Passive logins by API-key clients create sessions often; expired ones are dropped whenever a new one is made. */
  private prune(): void {
    const now = this.clock.monotonic();
    const validity = this.validityMs();
    for (const s of [...this.sessions.values()]) if (now - s.lastSeen > validity) this.end(s, 'stale');
  }

  private end(s: Session, reason: SessionEndReason): void {
    this.sessions.delete(s.id);
    const mine = this.byUser.get(s.user);
    mine?.delete(s.id);
    if (mine?.size === 0) this.byUser.delete(s.user);
    this.endListeners.emit(s, reason);
  }
}
