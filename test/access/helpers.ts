// Helpers for the access tests: a clock tests can move forward, a tiny cookie jar, and user/login shortcuts.
import type { Clock } from '../../src/core/clock.ts';
import type { TestServer } from '../helpers/server.ts';

/** Real time plus an offset the test advances, so expiry can be tested without sleeping. */
export class OffsetClock implements Clock {
  offset = 0;
  now(): number { return Date.now() + this.offset; }
  monotonic(): number { return performance.now() + this.offset; }
  advance(ms: number): void { this.offset += ms; }
}

/** Time that stands still but for what the test advances: for timeouts that a slow machine's real time must not reach. */
export class StillClock implements Clock {
  private readonly at = Date.now();
  private readonly mono = performance.now();
  offset = 0;
  now(): number { return this.at + this.offset; }
  monotonic(): number { return this.mono + this.offset; }
  advance(ms: number): void { this.offset += ms; }
}

/** Cookies as a browser would keep them (name → value), from Set-Cookie headers. */
export class CookieJar {
  readonly cookies = new Map<string, string>();
  take(res: Response): this {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return this;
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  get(prefix: string): string | undefined {
    for (const [k, v] of this.cookies) if (k.startsWith(prefix)) return v;
    return undefined;
  }
}

export async function addUser(s: TestServer, name: string, password: string, groups?: string[]): Promise<void> {
  await s.access.users.addUser({ name, password, groups });
}

/** A browser-style login: loads the page for the CSRF cookie, then logs in; returns the jar and the CSRF token. */
export async function browserLogin(s: TestServer, user: string, pass: string, remember = false): Promise<{ jar: CookieJar; csrf: string; body: Record<string, unknown> }> {
  const jar = new CookieJar();
  jar.take(await fetch(`${s.url}/login`));
  const res = await fetch(`${s.url}/api/login`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', Cookie: jar.header() },
    body: JSON.stringify({ user, pass, remember }),
  });
  if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`);
  const body = await res.json() as Record<string, unknown>;
  jar.take(res);
  return { jar, csrf: jar.get('csrf_token_P') ?? '', body };
}

/** fetch with the jar's cookies (and, for state-changing methods, its CSRF token) and no API key. */
export function asBrowser(s: TestServer, jar: CookieJar, path: string, init: RequestInit & { json?: unknown; csrf?: string | null } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('Cookie', jar.header());
  const csrf = init.csrf === undefined ? jar.get('csrf_token_P') : init.csrf;
  if (csrf) headers.set('X-CSRF-Token', csrf);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('Content-Type', 'application/json');
    body = JSON.stringify(init.json);
  }
  return fetch(s.url + path, { ...init, headers, body });
}
