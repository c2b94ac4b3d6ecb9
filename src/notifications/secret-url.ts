// How a target's URL is shown where it must not give its secrets away (logs, the delivery log, readers without the
// SETTINGS permission): Apprise URLs carry bot tokens and webhook keys in their host and path parts.

/** `https://host/…` for a webhook (its path is often the key, as Discord's is), `tgram://…` for the rest. */
export function maskUrl(url: string): string {
  const scheme = /^([a-z][a-z0-9+.-]{0,31}):\/\//i.exec(url);
  if (!scheme) return '…';
  const name = scheme[1].toLowerCase();
  if (name === 'http' || name === 'https') {
    try {
      const u = new URL(url);
      const more = u.pathname !== '/' || u.search !== '' || u.username !== '' ? '/…' : '';
      return `${u.protocol}//${u.host}${more}`;
    } catch {
      return `${name}://…`;
    }
  }
  return `${name}://…`;
}

/** Replaces every occurrence of the URL (and its secret-carrying rest) in a text meant for a log or an API answer. */
export function redact(text: string, url: string): string {
  if (url === '') return text;
  const rest = url.replace(/^[a-z][a-z0-9+.-]{0,31}:\/\//i, '');
  let out = text.split(url).join(maskUrl(url));
  if (rest.length >= 6) out = out.split(rest).join('…');
  return out;
}
