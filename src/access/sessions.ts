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

export class SessionStore {
  private sessions = new Map<string, Session>();

  constructor(private readonly clock: Clock, private readonly validityMs: () => number) {}

  create(user: string, mechanism: LoginMechanism): Session {
    const now = this.clock.now();
    const s: Session = { id: generateSessionId(), user, mechanism, created: now, lastSeen: now };
    this.sessions.set(s.id, s);
    return s;
  }

  get(id: string): Session | undefined {
    const s = this.sessions.get(id);
    if (!s) return undefined;
    const now = this.clock.now();
    if (now - s.lastSeen > this.validityMs()) {
      this.sessions.delete(id);
      return undefined;
    }
    s.lastSeen = now;
    return s;
  }

  delete(id: string): void {
    this.sessions.delete(id);
  }

  deleteForUser(user: string): void {
    for (const [id, s] of this.sessions) if (s.user === user) this.sessions.delete(id);
  }
}
