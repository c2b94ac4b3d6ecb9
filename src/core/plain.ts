// Plain objects: the one guard used wherever parsed JSON or YAML (shapes nobody checked yet) is walked.
export type Plain = Record<string, unknown>;

/** A mapping as JSON and YAML parse it: an object that is neither null nor an array. */
export const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Stores `value` under a name that came from outside (a group key, a profile id, an ini key). A plain assignment of
 * `__proto__` would replace the object's prototype instead, so the entry would vanish from JSON, YAML and listings.
 */
export function setOwn(out: Plain, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}
