// Password hashes carried over from OctoPrint (Argon2id, passlib PBKDF2-SHA256, pre-1.4 salted SHA-512): verification
// only. A user who logs in with one gets Gantry's own hash (password.ts) in its place.
import { createHash, pbkdf2, timingSafeEqual } from 'node:crypto';

/** Prefix under which a legacy SHA-512 hash is stored together with its salt (OctoPrint kept the salt in config.yaml). */
export const LEGACY_SHA512_PREFIX = 'octoprint-sha512$';

/** The stored form of an OctoPrint legacy hash: salt (base64url, it may hold any character) and hex digest together. */
export function legacySha512Hash(salt: string, hexDigest: string): string {
  return `${LEGACY_SHA512_PREFIX}${Buffer.from(salt, 'utf8').toString('base64url')}$${hexDigest.toLowerCase()}`;
}

/** Whether a stored hash is one of OctoPrint's forms this module can check. */
export function isImportedHash(stored: string): boolean {
  return stored.startsWith('$argon2id$') || stored.startsWith('$argon2i$') || stored.startsWith('$argon2d$')
    || stored.startsWith('$pbkdf2-sha256$') || stored.startsWith(LEGACY_SHA512_PREFIX);
}

/** passlib's "adapted base64": `.` for `+`, no padding. */
const ab64 = (s: string): Buffer => Buffer.from(s.replace(/\./g, '+'), 'base64');

function pbkdf2Async(password: string, salt: Buffer, rounds: number, keylen: number): Promise<Buffer> {
  return new Promise((resolve, reject) => pbkdf2(password, salt, rounds, keylen, 'sha256', (err, key) => (err ? reject(err) : resolve(key))));
}

const equalBytes = (a: Buffer, b: Buffer): boolean => a.length === b.length && a.length > 0 && timingSafeEqual(a, b);

export async function verifyImportedHash(password: string, stored: string): Promise<boolean> {
  if (stored.startsWith('$argon2')) {
    try {
      // The native argon2 module loads with the first imported Argon2 hash checked, not with every server start.
      const { verify } = await import('@node-rs/argon2');
      return await verify(stored, password);
    } catch {
      return false; // a malformed PHC string verifies nothing
    }
  }
  if (stored.startsWith('$pbkdf2-sha256$')) {
    const [, , roundsText, salt, hash] = stored.split('$');
    const rounds = Number(roundsText);
    const expected = ab64(hash ?? '');
    if (!Number.isInteger(rounds) || rounds < 1 || rounds > 10_000_000 || !salt || expected.length === 0) return false;
    return equalBytes(await pbkdf2Async(password, ab64(salt), rounds, expected.length), expected);
  }
  if (stored.startsWith(LEGACY_SHA512_PREFIX)) {
    const [saltText, hex] = stored.slice(LEGACY_SHA512_PREFIX.length).split('$');
    if (saltText === undefined || !hex || !/^[0-9a-f]{128}$/.test(hex)) return false;
    const salt = Buffer.from(saltText, 'base64url').toString('utf8');
    const digest = createHash('sha512').update(password + salt, 'utf8').digest();
    return equalBytes(digest, Buffer.from(hex, 'hex'));
  }
  return false;
}
