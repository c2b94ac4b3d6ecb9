// Who a Moonraker caller is (docs/reference/moonraker.md §1.5), on Gantry's users, keys and permissions: an access
// token (a JWT naming the Gantry session /access/login made, jwt.ts) from `Authorization: Bearer`, `X-Access-Token` or `?access_token=`;
// a oneshot token (`?token=`, 5 s, single use, bound to the address that asked for it); `X-Api-Key` (Gantry's global
// key, a user's key or an app key); a trusted client (moonraker.trustedClients, CIDR); otherwise nobody.
import { randomBytes } from 'node:crypto';
import type { AccessService } from '../access/access-service.ts';
import type { Identity } from '../access/identity.ts';
import { makeIdentity } from '../access/identity.ts';
import { inNetworks, networkList, normaliseAddress, type NetworkList } from '../access/network.ts';
import type { ConfigStore } from '../config/config-store.ts';
import type { Clock } from '../core/clock.ts';
import { TokenSigner } from './jwt.ts';

export const TRUSTED_USER = '_TRUSTED_USER_';
export const API_KEY_USER = '_API_KEY_USER_';
const ONESHOT_MS = 5000;
const MAX_ONESHOTS = 1000;
// Base32 as Moonraker's tokens (32 characters).
const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export interface Caller {
  identity: Identity;
  /** How it was identified (`access.get_user`'s source). */
  source: 'token' | 'oneshot' | 'api_key' | 'trusted' | 'none' | 'open';
  /** The Gantry session behind an access token. */
  sessionId?: string;
}

/** What a request or upgrade carries that can identify it. */
export interface Credentials {
  address: string;
  apiKey?: string;
  accessToken?: string;
  oneshot?: string;
}

export class MoonrakerAuth {
  private readonly oneshots = new Map<string, { caller: Caller; address: string; expires: number }>();
  private trustedKey = '';
  private trustedList: NetworkList = { subnets: [] };
  private readonly tokens = new TokenSigner();

  constructor(private readonly access: AccessService, private readonly config: ConfigStore, private readonly clock: Clock) {}

  /** Access control is off: every caller is a full admin (as for the OctoPrint API). */
  get open(): boolean {
    return !this.access.enabled;
  }

  resolve(c: Credentials): Caller {
    if (this.open) return { identity: this.access.anonymous(), source: 'open' };
    if (c.accessToken) {
      const claims = this.tokens.verify(c.accessToken, 'access', this.nowS());
      const id = claims ? this.access.identityForSession(claims.sid) : undefined;
      if (claims && id && id.name === claims.username) return { identity: id, source: 'token', sessionId: claims.sid };
    }
    if (c.oneshot) {
      const hit = this.takeOneshot(c.oneshot, c.address);
      if (hit) return hit;
    }
    if (c.apiKey) {
      const id = this.access.identityForApiKey(c.apiKey);
      if (id) return { identity: id, source: 'api_key' };
    }
    if (this.trusted(c.address)) return { identity: this.trustedIdentity(), source: 'trusted' };
    return { identity: this.access.anonymous(), source: 'none' };
  }

  private nowS(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  /** The access and refresh tokens of a login (access.login). */
  issue(username: string, sessionId: string): { token: string; refresh_token: string } {
    const now = this.nowS();
    return { token: this.tokens.sign(username, sessionId, 'access', now), refresh_token: this.tokens.sign(username, sessionId, 'refresh', now) };
  }

  /** A new access token for a refresh token whose session still lives (access.refresh_jwt); undefined otherwise. */
  refresh(refreshToken: string): { username: string; token: string } | undefined {
    const claims = this.tokens.verify(refreshToken, 'refresh', this.nowS());
    const id = claims ? this.access.identityForSession(claims.sid) : undefined;
    if (!claims || !id || id.name !== claims.username) return undefined;
    return { username: claims.username, token: this.tokens.sign(claims.username, claims.sid, 'access', this.nowS()) };
  }

  /** Whether a caller may use anything but the auth-free methods. */
  authenticated(c: Caller): boolean {
    return c.source !== 'none';
  }

  trusted(address: string): boolean {
    const cidrs = this.config.current.moonraker.trustedClients;
    const key = cidrs.join(',');
    if (key !== this.trustedKey) {
      this.trustedKey = key;
      this.trustedList = networkList(cidrs);
    }
    return inNetworks(normaliseAddress(address), this.trustedList);
  }

  /**
   * A trusted client acts with the permissions of Gantry's `users` group (print, control, files; not settings or
   * system commands): the README says so where it explains trusted clients.
   */
  private trustedIdentity(): Identity {
    return makeIdentity({ name: TRUSTED_USER, groups: ['users'], permissions: this.access.users.groupPermissions('users'), loginMechanism: 'none' });
  }

  /** A token for one request or websocket from the same address within 5 s (GET /access/oneshot_token). */
  oneshot(caller: Caller, address: string): string {
    const now = this.clock.monotonic();
    for (const [t, o] of this.oneshots) if (o.expires <= now) this.oneshots.delete(t);
    if (this.oneshots.size >= MAX_ONESHOTS) this.oneshots.delete(this.oneshots.keys().next().value!);
    const bytes = randomBytes(32);
    let token = '';
    for (const b of bytes) token += B32[b & 31];
    this.oneshots.set(token, { caller: { ...caller, source: 'oneshot' }, address: normaliseAddress(address), expires: now + ONESHOT_MS });
    return token;
  }

  private takeOneshot(token: string, address: string): Caller | undefined {
    const o = this.oneshots.get(token);
    if (!o) return undefined;
    this.oneshots.delete(token);
    if (o.expires <= this.clock.monotonic() || o.address !== normaliseAddress(address)) return undefined;
    return o.caller;
  }

  /** The name `access.get_user` reports. */
  static userName(c: Caller): string | null {
    if (c.source === 'trusted') return TRUSTED_USER;
    if (c.source === 'api_key' && c.identity.name === '_api') return API_KEY_USER;
    return c.identity.name ?? null;
  }
}
