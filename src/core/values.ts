// Loose values from forms and query strings, read the way OctoPrint reads them.

/** `true`, or the strings `true`/`yes`/`y`/`1` in any case (form fields and query parameters arrive as strings). */
export function truthy(v: unknown): boolean {
  return v === true || (typeof v === 'string' && ['true', 'yes', 'y', '1'].includes(v.toLowerCase()));
}
