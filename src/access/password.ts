// Password hashing with scrypt (memory-hard, in Node's crypto, runs off the event loop in the thread pool).
import { scrypt, randomBytes, timingSafeEqual } from 'node:crypto';
import { isImportedHash, verifyImportedHash } from './imported-hash.ts';

const N = 1 << 15, R = 8, P = 1, KEYLEN = 32;
const MAXMEM = 256 * N * R;
/**
 * Work factor for a password Gantry drew itself (the first run's administrator: 96 random bits, printed once). Key
 * stretching buys time against guessing a password people chose; 2^96 guesses stay out of reach at any cost per guess,
 * and the full factor held every first start ≈ 100 ms (a 32 MB scrypt). The first login replaces the hash with one at
 * the full factor (`needsRehash`), as for any hash not made at the current parameters.
 */
const N_GENERATED = 1 << 10;
const CURRENT = `scrypt$${N}$${R}$${P}$`;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEYLEN, { N: n, r, p, maxmem: Math.max(MAXMEM, 256 * n * r) }, (err, key) =>
      err ? reject(err) : resolve(key));
  });
}

/** Returns `scrypt$N$r$p$salt$hash` (base64 parts); `generated`: a random password Gantry drew (see N_GENERATED). */
export async function hashPassword(password: string, opts: { generated?: boolean } = {}): Promise<string> {
  const n = opts.generated ? N_GENERATED : N;
  const salt = randomBytes(16);
  const key = await derive(password, salt, n, R, P);
  return `scrypt$${n}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** Whether a stored hash is Gantry's own scheme (an imported OctoPrint hash is not). */
export const isOwnHash = (stored: string): boolean => stored.startsWith('scrypt$');

/** Whether a stored hash should be replaced once its password is known: imported, or made at other parameters. */
export const needsRehash = (stored: string): boolean => !stored.startsWith(CURRENT);

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (isImportedHash(stored)) return verifyImportedHash(password, stored);
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = parts.slice(1, 4).map(Number);
  const salt = Buffer.from(parts[4], 'base64');
  const expected = Buffer.from(parts[5], 'base64');
  if (!Number.isInteger(n) || !Number.isInteger(r) || !Number.isInteger(p) || expected.length !== KEYLEN) return false;
  // The hash states its cost; users.yaml may come from a backup or an editor: never more than twice the current work.
  if (n < 2 || n > 2 * N || (n & (n - 1)) !== 0 || r < 1 || r > 2 * R || p < 1 || p > 2 * P) return false;
  const key = await derive(password, salt, n, r, p);
  return timingSafeEqual(key, expected);
}

/** The fewest characters a password chosen by a person may have (new users and changed passwords). */
export const MIN_PASSWORD_LENGTH = 8;

/** Why a new password is refused, or undefined; counted in characters, not bytes ("pässwört" is 8). */
export function passwordProblem(password: string): string | undefined {
  if ([...password.normalize('NFC')].length < MIN_PASSWORD_LENGTH) return `password must have at least ${MIN_PASSWORD_LENGTH} characters`;
  return undefined;
}
