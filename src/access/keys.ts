// Key generation and constant-time comparison for API keys, session ids and app tokens.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 32 upper-case hex characters, OctoPrint's API key format. */
export const generateApiKey = (): string => randomBytes(16).toString('hex').toUpperCase();

/** Session ids: upper-case hex of 16 random bytes. */
export const generateSessionId = (): string => randomBytes(16).toString('hex').toUpperCase();

// One-shot hash(): no Hash object per call (createHash().update().digest() cost three times as much).
const sha256 = (s: string): Buffer => hash('sha256', s, 'buffer');

/** Compares two secrets without leaking where they differ (hashing first equalises lengths). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b)) && a.length === b.length;
}

/**
 * Digests of stored secrets (the global key, user and app keys), keyed by the stored value — never by what a caller
 * sent — so an API-key lookup hashes the caller's key once instead of both sides of every comparison (two hashes
 * per key and request were a tenth of a cheap route's time). Bounded: keys come and go.
 */
const storedDigests = new Map<string, Buffer>();
const STORED_DIGESTS_MAX = 256;

/** A secret a caller sent, hashed once, compared in constant time against any number of stored secrets. */
export class SecretProbe {
  private readonly digest: Buffer;

  constructor(readonly value: string) {
    this.digest = sha256(value);
  }

  matches(stored: string): boolean {
    let d = storedDigests.get(stored);
    if (d === undefined) {
      if (storedDigests.size >= STORED_DIGESTS_MAX) storedDigests.clear();
      d = sha256(stored);
      storedDigests.set(stored, d);
    }
    return timingSafeEqual(d, this.digest);
  }
}
