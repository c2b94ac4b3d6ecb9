// App session keys (deprecated handshake): a short-lived temporary key that an app unlocks by signing
// `appid:appversion:key` with its RSA private key; the verified key then acts like the global API key until it expires.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { Clock } from '../core/clock.ts';
import { DomainError, ErrorCodes, forbidden, invalid } from '../core/errors.ts';
import { SecretProbe, generateApiKey } from './keys.ts';

export interface AppEntry { pubkey: string; enabled?: boolean }

export interface AppSessionTimeouts {
  /** How long a temporary key waits for its signature. */
  unverifiedMs: number;
  /** How long a verified key works. */
  verifiedMs: number;
  /** Unverified keys one client address may hold at once (an app needs one per handshake). */
  maxPendingPerClient: number;
  /** Unverified keys held at once in all. */
  maxPending: number;
}

/**
 * `client` is the address that asked for an unverified key. `expires` is on the monotonic clock, so a jump of the wall
 * clock (NTP setting a board's time after boot) neither ends a key early nor keeps it; `validUntil` is what the app
 * is told, in milliseconds since the epoch.
 */
interface KeyState { key: string; verified: boolean; validUntil: number; expires: number; client?: string }

export class AppSessionKeys {
  private keys = new Map<string, KeyState>();
  private readonly timeouts: AppSessionTimeouts;

  constructor(private readonly apps: () => Readonly<Record<string, AppEntry>>, private readonly clock: Clock,
    timeouts: Partial<AppSessionTimeouts> = {}) {
    this.timeouts = { unverifiedMs: 60_000, verifiedMs: 2 * 3_600_000, maxPendingPerClient: 10, maxPending: 1_000, ...timeouts };
  }

  /**
   * A new unverified key for `client`; `validUntil` in milliseconds since the epoch. Anyone may ask, so what is held is
   * bounded: with no app configured nothing can ever be verified and nothing is kept; otherwise a client gets at most
   * `maxPendingPerClient` and everyone together `maxPending` outstanding keys (429 beyond, until some expire or are used).
   */
  createTemporary(client = ''): { key: string; validUntil: number } {
    this.prune();
    const s: KeyState = { key: generateApiKey(), verified: false, validUntil: this.clock.now() + this.timeouts.unverifiedMs,
      expires: this.clock.monotonic() + this.timeouts.unverifiedMs, client };
    if (!Object.values(this.apps()).some((a) => a.enabled !== false)) return { key: s.key, validUntil: s.validUntil };
    let pending = 0, mine = 0;
    for (const k of this.keys.values()) {
      if (k.verified) continue;
      pending++;
      if (k.client === client) mine++;
    }
    if (mine >= this.timeouts.maxPendingPerClient || pending >= this.timeouts.maxPending) {
      throw new DomainError(ErrorCodes.TOO_MANY_REQUESTS, 'Too many unverified app session keys outstanding, try again later');
    }
    this.keys.set(s.key, s);
    return { key: s.key, validUntil: s.validUntil };
  }

  /** Unverified keys held now. */
  pendingCount(): number {
    this.prune();
    return [...this.keys.values()].filter((k) => !k.verified).length;
  }

  /**
   * Unlocks a temporary key when `signature` (base64 RSA-SHA1 over `appid:appversion:key`) verifies with the public key
   * configured for `appid:appversion`. Any failure consumes the temporary key, so a wrong guess unlocks nothing later.
   */
  verify(appId: string, appVersion: string, key: string, signature: string): { key: string; validUntil: number } {
    this.prune();
    const s = this.keys.get(key);
    if (!s || s.verified) throw forbidden('Unknown or expired key');
    this.keys.delete(key);
    const app = this.apps()[`${appId}:${appVersion}`];
    if (!app || app.enabled === false) throw forbidden('Unknown or disabled app');
    let pub: KeyObject;
    try {
      pub = publicKeyOf(app.pubkey);
    } catch {
      throw forbidden('Invalid public key configured for this app');
    }
    const sig = Buffer.from(signature, 'base64');
    if (sig.length === 0) throw invalid('Invalid signature');
    let ok: boolean;
    try {
      ok = verify('sha1', Buffer.from(`${appId}:${appVersion}:${key}`, 'utf8'), pub, sig);
    } catch {
      ok = false;
    }
    if (!ok) throw forbidden('Invalid signature');
    const verified: KeyState = { key, verified: true, validUntil: this.clock.now() + this.timeouts.verifiedMs,
      expires: this.clock.monotonic() + this.timeouts.verifiedMs };
    this.keys.set(key, verified);
    return { key, validUntil: verified.validUntil };
  }

  /** True when `key` is a verified, unexpired app session key. */
  isValid(key: string | SecretProbe): boolean {
    const probe = typeof key === 'string' ? new SecretProbe(key) : key;
    const now = this.clock.monotonic();
    let hit = false;
    for (const s of this.keys.values()) if (s.verified && s.expires > now && probe.matches(s.key)) hit = true;
    return hit;
  }

  private prune(): void {
    const now = this.clock.monotonic();
    for (const [k, s] of this.keys) if (s.expires <= now) this.keys.delete(k);
  }
}

/** Accepts the configured key as SubjectPublicKeyInfo or PKCS#1, with or without PEM armour. */
function publicKeyOf(configured: string): KeyObject {
  const body = configured.replace(/-----(BEGIN|END)[^-]*-----/g, '').replace(/\s+/g, '');
  const der = Buffer.from(body, 'base64');
  try {
    return createPublicKey({ key: der, format: 'der', type: 'spki' });
  } catch {
    return createPublicKey({ key: der, format: 'der', type: 'pkcs1' });
  }
}
