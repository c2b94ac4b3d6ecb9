// The one reading of a request path that callers outside HTTP (the API over MQTT) may use: normalised as the router
// will see it, then confined to /api/.

/** Longest path (with its query) accepted at all. */
export const MAX_API_PATH = 4096;

const PLACEHOLDER_ORIGIN = 'http://localhost';

/** URL parsing drops tabs and newlines silently; a path with any control character is refused instead. */
function hasControlCharacter(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/**
 * `path` (with an optional query) as the HTTP router will see it — backslashes as slashes, percent-encoded dots
 * decoded and dot segments resolved (WHATWG URL rules, which app.inject applies too), runs of slashes collapsed (as
 * the app's rewriteUrl does) — or undefined when the result is not `/api` or under `/api/`. Checking the raw string
 * let `/api/../downloads/logs/x.log` and `/api/%2e%2e/…` reach routes outside the API with no key at all.
 * A segment that is a dot segment once percent-decoded (`..%2f..`, from which a route's own decode would make one)
 * is refused outright: no API path has one. Encoded twice (`%252e%252e`) it is a literal name to the router.
 */
export function normaliseApiPath(path: unknown): string | undefined {
  if (typeof path !== 'string' || path.length === 0 || path.length > MAX_API_PATH || hasControlCharacter(path)) return undefined;
  const slashed = path.replace(/\\/g, '/');
  if (!slashed.startsWith('/')) return undefined;
  let url: URL;
  try {
    // Appended to an origin, not resolved against it: `//host/x` stays a path instead of naming another host.
    url = new URL(PLACEHOLDER_ORIGIN + slashed.replace(/^\/+/, '/'));
  } catch {
    return undefined;
  }
  if (url.origin !== PLACEHOLDER_ORIGIN) return undefined;
  const pathname = url.pathname.replace(/\/{2,}/g, '/');
  if (!/^\/api(\/|$)/.test(pathname)) return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  if (/(^|[/\\])\.{1,2}([/\\]|$)/.test(decoded)) return undefined;
  return pathname + url.search;
}
