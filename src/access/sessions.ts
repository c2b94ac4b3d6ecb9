// Login sessions: id → user, with idle expiry. Kept in memory (a restart logs browsers out; remember-me logs them back in).
import { generateSessionId } from './keys.ts';
import type { LoginMechanism } from './identity.ts';
import type { Clock } from '../core/clock.ts';

export interface Session {
  id: string;
  user: string;
  mechanism: LoginMechanism;
  created: number;
  lastSeen: number;
}

/** Why a session ended (the push channel turns it into `reauthRequired`). */
export type SessionEndReason = 'logout' | 'stale' | 'removed' | 'modified';

export class SessionStore {
  private sessions = new Map<string, Session>();
  private endListeners: Array<(s: Session, reason: SessionEndReason) => void> = [];

  constructor(private readonly clock: Clock, private readonly validityMs: () => number) {}

  onEnd(fn: (s: Session, reason: SessionEndReason) => void): () => void {
    this.endListeners.push(fn);
    return () => { this.endListeners = this.endListeners.filter((l) => l !== fn); };
  }

  create(user: string, mechanism: LoginMechanism): Session {
    this.prune();
    const now = this.clock.now();
    const s: Session = { id: generateSessionId(), user, mechanism, created: now, lastSeen: now };
    this.sessions.set(s.id, s);
    return s;
  }

  /** The live session, touched (its idle timer restarts); undefined when unknown or expired. */
  get(id: string): Session | undefined {
    const s = this.sessions.get(id);
    if (!s) return undefined;
    const now = this.clock.now();
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
    const now = this.clock.now();
    const validity = this.validityMs();
    for (const s of [...this.sessions.values()]) if (now - s.lastSeen > validity) this.end(s, 'stale');
  }

  private end(s: Session, reason: SessionEndReason): void {
    this.sessions.delete(s.id);
    for (const l of this.endListeners) l(s, reason);
  }
}
