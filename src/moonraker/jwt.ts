// Moonraker's login tokens as JSON Web Tokens (HS256, RFC 7519): an access token (1 h) and a refresh token (90 days),
// both naming the Gantry session that /access/login made, so a logout or an ended session ends both. The key is
// made at start and kept in memory: a restart ends every session anyway (access/sessions.ts), and the clients log in
// again (Fluidd's refresh fails, then it shows its login).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export type TokenType = 'access' | 'refresh';

export interface TokenClaims {
  iss: string;
  aud: string;
  iat: number;
  exp: number;
  username: string;
  token_type: TokenType;
  /** The Gantry session behind the token. */
  sid: string;
}

export const ACCESS_TOKEN_S = 3600;
export const REFRESH_TOKEN_S = 90 * 24 * 3600;
const ISSUER = 'gantry';
const AUDIENCE = 'Moonraker';
/** Longer than any token this signs: anything bigger is not ours and is not parsed. */
const MAX_TOKEN_CHARS = 2048;

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');

export class TokenSigner {
  private readonly key = randomBytes(32);

  sign(username: string, sid: string, type: TokenType, nowS: number): string {
    const header = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
    const claims: TokenClaims = { iss: ISSUER, aud: AUDIENCE, iat: nowS, exp: nowS + (type === 'access' ? ACCESS_TOKEN_S : REFRESH_TOKEN_S), username, token_type: type, sid };
    const body = b64url(JSON.stringify(claims));
    return `${header}.${body}.${this.mac(`${header}.${body}`)}`;
  }

  /** The claims of a token this signer made, of that type and not expired; undefined for anything else. */
  verify(token: string, type: TokenType, nowS: number): TokenClaims | undefined {
    if (token.length > MAX_TOKEN_CHARS) return undefined;
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const expected = Buffer.from(this.mac(`${parts[0]}.${parts[1]}`));
    const given = Buffer.from(parts[2]);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let claims: unknown;
    try {
      const header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as { alg?: unknown };
      if (header.alg !== 'HS256') return undefined;
      claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    const c = claims as Partial<TokenClaims>;
    if (c.iss !== ISSUER || c.aud !== AUDIENCE || c.token_type !== type || typeof c.sid !== 'string' || typeof c.username !== 'string') return undefined;
    if (typeof c.exp !== 'number' || c.exp <= nowS) return undefined;
    return c as TokenClaims;
  }

  private mac(data: string): string {
    return createHmac('sha256', this.key).update(data).digest('base64url');
  }
}
