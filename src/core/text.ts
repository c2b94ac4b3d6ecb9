// Text from outside cut in time linear in its length, where the regular expression for it would not be.

/**
 * `text` without the run of `char` at its end. As `/\/+$/` (the obvious expression) a run of slashes that does not end
 * the text is tried from each of its slashes: `x` + 200,000 slashes + `x` as an upload's `path` held the server 88 s,
 * and 15,000 in an X-Script-Name header 0.6 s per request, without credentials.
 */
export function withoutTrailing(text: string, char: string): string {
  const code = char.charCodeAt(0);
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === code) end--;
  return end === text.length ? text : text.slice(0, end);
}

/** Longest shown value in an error message, in characters. */
const SHOWN_MAX = 80;

/**
 * A value from a request as an error message quotes it: JSON, except numbers JSON has no text for (`1e400` parses as
 * Infinity, which JSON.stringify writes as `null`), cut to 80 characters so a refused megabyte is not sent back whole.
 */
export function shown(value: unknown): string {
  const text = typeof value === 'number' || typeof value === 'bigint' ? String(value) : JSON.stringify(value) ?? String(value);
  return text.length > SHOWN_MAX ? `${text.slice(0, SHOWN_MAX - 1)}…` : text;
}
