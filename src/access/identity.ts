// Identity: who is calling and what they may do, resolved once per request (HTTP) or per auth message (push).
import { PERMISSIONS } from './permissions.ts';

export type LoginMechanism = 'http' | 'apikey' | 'remember_me' | 'autologin' | 'session' | 'appkey' | 'app_session' | 'basic_auth' | 'remote_user' | 'none';

export interface Identity {
  /** User id; undefined for guests. The global API key acts as user `_api`. */
  readonly name: string | undefined;
  readonly isAnonymous: boolean;
  readonly groups: readonly string[];
  /** Effective permission keys (ADMIN expands to all). */
  readonly permissions: ReadonlySet<string>;
  readonly loginMechanism: LoginMechanism;
  /** Session id of a browser login, or of a passive login with an API key. */
  readonly sessionId?: string;
  has(permission: string): boolean;
}

export function makeIdentity(opts: {
  name: string | undefined;
  groups: readonly string[];
  permissions: Iterable<string>;
  loginMechanism: LoginMechanism;
  sessionId?: string;
}): Identity {
  const perms = new Set(opts.permissions);
  if (perms.has('ADMIN')) for (const p of PERMISSIONS) perms.add(p.key);
  return {
    name: opts.name,
    isAnonymous: opts.name === undefined,
    groups: opts.groups,
    permissions: perms,
    loginMechanism: opts.loginMechanism,
    sessionId: opts.sessionId,
    has: (permission: string) => perms.has(permission),
  };
}

/** Used when access control is switched off: every caller is a full admin. */
export const fullAdminIdentity = (): Identity =>
  makeIdentity({ name: 'admin', groups: ['admins', 'users'], permissions: ['ADMIN'], loginMechanism: 'none' });
