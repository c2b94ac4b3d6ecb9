// Remember-me tokens: `<user>|<expiry>|<signature>`, signed with the server secret and the user's password hash, so a
// password change (or a new secret) silently invalidates every remembered browser.
import { createHmac } from 'node:crypto';
import { safeEqual } from './keys.ts';

export const REMEMBER_DAYS = 90;

function sign(secret: string, passwordHash: string, user: string, expires: number): string {
  return createHmac('sha256', `${secret}\0${passwordHash}`).update(`${user}|${expires}`).digest('base64url');
}

export function makeRememberToken(secret: string, user: { name: string; passwordHash: string }, now: number): { token: string; expires: number } {
  const expires = Math.floor(now / 1000) + REMEMBER_DAYS * 86_400;
  return { token: `${user.name}|${expires}|${sign(secret, user.passwordHash, user.name, expires)}`, expires };
}

/** The user name the token vouches for, or undefined when it is malformed, expired or no longer matches. */
export function checkRememberToken(
  secret: string,
  token: string,
  lookup: (name: string) => { name: string; passwordHash: string } | undefined,
  now: number,
): string | undefined {
  const parts = token.split('|');
  if (parts.length !== 3) return undefined;
  const [name, exp, sig] = parts;
  const expires = Number(exp);
  if (!Number.isInteger(expires) || expires * 1000 <= now) return undefined;
  const user = lookup(name);
  if (!user) return undefined;
  return safeEqual(sign(secret, user.passwordHash, name, expires), sig) ? name : undefined;
}
