// Conditional requests: whether a client's If-None-Match names the current entity tag.

/**
 * True when `If-None-Match` holds `etag` among its tags (weak ones compared as strong: a GET's weak comparison) or is
 * `*`, which matches any current representation (RFC 9110 13.1.2). A list of tags was taken for one: a client
 * sending its two cached copies' tags got the whole answer again, and `*` got a download (or a range of it).
 */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  for (const tag of header.split(',')) {
    const t = tag.trim();
    if (t === '*' || (t.startsWith('W/') ? t.slice(2) : t) === etag) return true;
  }
  return false;
}
