// Where the server is mounted: '' normally, '/prefix' behind a reverse proxy (the server writes it into index.html).
import { withoutTrailing } from './text.ts';

/** The path prefix the page was served under, from `<meta name="gantry-base">`; without it, the site root. */
export const BASE: string = withoutTrailing(document.querySelector('meta[name="gantry-base"]')?.getAttribute('content') ?? '', '/');

/** A server path (`/api/…`, `/login`) as the browser must ask for it; full URLs and relative paths pass unchanged. */
export function at(path: string): string {
  return path.startsWith('/') && !path.startsWith('//') && !(BASE && (path === BASE || path.startsWith(`${BASE}/`))) ? BASE + path : path;
}

/** The page's path without the prefix (for deciding which page to show). */
export function pagePath(): string {
  const p = location.pathname;
  return BASE && p.startsWith(BASE) ? p.slice(BASE.length) || '/' : p;
}
