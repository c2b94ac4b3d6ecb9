// Key generation and constant-time comparison for API keys, session ids and app tokens.
import { randomBytes, timingSafeEqual, createHash } from 'node:crypto';

/** 32 upper-case hex characters, OctoPrint's API key format. */
export const generateApiKey = (): string => randomBytes(16).toString('hex').toUpperCase();

/** Session ids: upper-case hex of 16 random bytes. */
export const generateSessionId = (): string => randomBytes(16).toString('hex').toUpperCase();

/** Compares two secrets without leaking where they differ (hashing first equalises lengths). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
