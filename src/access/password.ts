// Password hashing with scrypt (memory-hard, in Node's crypto, runs off the event loop in the thread pool).
import { scrypt, randomBytes, timingSafeEqual } from 'node:crypto';
import { isImportedHash, verifyImportedHash } from './imported-hash.ts';

const N = 1 << 15, R = 8, P = 1, KEYLEN = 32;
const MAXMEM = 256 * N * R;

function derive(password: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEYLEN, { N: n, r, p, maxmem: Math.max(MAXMEM, 256 * n * r) }, (err, key) =>
      err ? reject(err) : resolve(key));
  });
}

/** Returns `scrypt$N$r$p$salt$hash` (base64 parts). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, N, R, P);
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** Whether a stored hash is Gantry's own; anything else (an imported OctoPrint hash) is replaced at the next login. */
export const isOwnHash = (stored: string): boolean => stored.startsWith('scrypt$');

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (isImportedHash(stored)) return verifyImportedHash(password, stored);
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [n, r, p] = parts.slice(1, 4).map(Number);
  const salt = Buffer.from(parts[4], 'base64');
  const expected = Buffer.from(parts[5], 'base64');
  if (!Number.isInteger(n) || !Number.isInteger(r) || !Number.isInteger(p) || expected.length !== KEYLEN) return false;
  const key = await derive(password, salt, n, r, p);
  return timingSafeEqual(key, expected);
}
