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

/**
 * The most an imported hash may cost to check. A hash states its own cost, and a crafted users.yaml claiming
 * m=1048576 made one anonymous failed login take 10 s and 1 GB. OctoPrint 1.9.3 writes Argon2id m=102400,t=2,p=8
 * (passlib), newer argon2-cffi m=65536,t=3,p=4, and passlib's PBKDF2-SHA256 29,000 rounds; the bounds allow about
 * twice the costliest of those. Salt and digest lengths are bounded too (a long PBKDF2 digest multiplies the work).
 */
export const IMPORTED_HASH_BOUNDS = {
  argon2: { maxMemoryKiB: 204_800, maxTime: 6, maxParallelism: 16 },
  pbkdf2: { maxRounds: 100_000 },
  maxSaltBytes: 64,
  maxDigestBytes: 64,
} as const;

const PHC_ARGON2 = /^\$argon2(id|i|d)\$(?:v=(\d+)\$)?m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/**
 * Why an imported hash is not checked (malformed, or costlier than IMPORTED_HASH_BOUNDS), or undefined when it may be.
 * Legacy SHA-512 costs one digest, whatever it holds; unknown forms are not this module's.
 */
export function importedHashProblem(stored: string): string | undefined {
  const b = IMPORTED_HASH_BOUNDS;
  if (stored.startsWith('$argon2')) {
    const m = PHC_ARGON2.exec(stored);
    if (!m) return 'malformed Argon2 hash';
    const [memory, time, parallelism] = [Number(m[3]), Number(m[4]), Number(m[5])];
    if (memory > b.argon2.maxMemoryKiB || time > b.argon2.maxTime || parallelism > b.argon2.maxParallelism || time < 1 || parallelism < 1) {
      return `Argon2 cost m=${m[3]},t=${m[4]},p=${m[5]} is beyond the bound m≤${b.argon2.maxMemoryKiB},t≤${b.argon2.maxTime},p≤${b.argon2.maxParallelism}`;
    }
    if (Buffer.from(m[6], 'base64').length > b.maxSaltBytes || Buffer.from(m[7], 'base64').length > b.maxDigestBytes) {
      return `Argon2 salt or digest longer than ${b.maxDigestBytes} bytes`;
    }
    return undefined;
  }
  if (stored.startsWith('$pbkdf2-sha256$')) {
    const [, , roundsText, salt, hash] = stored.split('$');
    if (!/^\d{1,12}$/.test(roundsText ?? '') || !salt || !hash) return 'malformed PBKDF2-SHA256 hash';
    const rounds = Number(roundsText);
    if (rounds < 1 || rounds > b.pbkdf2.maxRounds) return `PBKDF2 rounds ${rounds} beyond the bound of ${b.pbkdf2.maxRounds}`;
    if (ab64(salt).length > b.maxSaltBytes || ab64(hash).length > b.maxDigestBytes) return `PBKDF2 salt or digest longer than ${b.maxDigestBytes} bytes`;
    return undefined;
  }
  return undefined;
}

export async function verifyImportedHash(password: string, stored: string): Promise<boolean> {
  // Checked again at every login, not only at import: users.yaml may have been edited since.
  if (importedHashProblem(stored) !== undefined) return false;
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
    if (!Number.isInteger(rounds) || !salt || expected.length === 0) return false;
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
