// Bounds on client-supplied JSON values before they are merged or stored: nesting depth and serialised size.
import { DomainError, ErrorCodes, invalid } from './errors.ts';

export interface JsonBounds {
  /** Deepest allowed container nesting: `{}` and `[]` are depth 1, `[[1]]` depth 2. */
  maxDepth: number;
  /** Largest allowed JSON serialisation in UTF-8 bytes. */
  maxBytes: number;
}

/** Generous for any real settings tree, far below what recursion (merge, YAML, JSON) or the disk would mind. */
export const DEFAULT_JSON_BOUNDS: JsonBounds = { maxDepth: 32, maxBytes: 256 * 1024 };

/**
 * Every JSON value a client writes to be kept (user settings, upload userdata, a plugin's settings, a printer profile,
 * imported file metadata): far more than any real one needs, and small enough that every later listing, merge,
 * serialisation and push of it stays cheap and cannot overflow a stack.
 */
export const STORED_JSON_BOUNDS: JsonBounds = { maxDepth: 16, maxBytes: 64 * 1024 };

/**
 * Why `value` exceeds the bounds, or undefined when it fits. Walks with an explicit stack (never recursion, so hostile
 * nesting cannot overflow it) and stops as soon as a bound is passed, so huge values cost no more than the bound.
 * Cycles count as unbounded depth. The byte count is JSON's: keys, strings, numbers and punctuation.
 */
export function jsonBoundsViolation(value: unknown, bounds: Partial<JsonBounds> = {}): string | undefined {
  const { maxDepth, maxBytes } = { ...DEFAULT_JSON_BOUNDS, ...bounds };
  const stack: Array<[unknown, number]> = [[value, 0]];
  let bytes = 0;
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v !== null && typeof v === 'object') {
      if (depth + 1 > maxDepth) return `nested deeper than ${maxDepth} levels`;
      const entries = Array.isArray(v) ? v.map((x): [string | undefined, unknown] => [undefined, x]) : Object.entries(v);
      bytes += 2 + Math.max(0, entries.length - 1);
      for (const [k, x] of entries) {
        if (k !== undefined) bytes += Buffer.byteLength(k) + 3;
        stack.push([x, depth + 1]);
      }
    } else if (typeof v === 'string') {
      bytes += Buffer.byteLength(v) + 2;
    } else {
      bytes += v === undefined ? 4 : String(v).length;
    }
    if (bytes > maxBytes) return `larger than ${maxBytes} bytes`;
  }
  return undefined;
}

/** Throws a DomainError naming `what` when `value` exceeds the bounds: INVALID_REQUEST when too deep, PAYLOAD_TOO_LARGE when too large. */
export function assertBoundedJson(value: unknown, bounds: Partial<JsonBounds> = {}, what = 'Value'): void {
  const reason = jsonBoundsViolation(value, bounds);
  if (!reason) return;
  if (reason.startsWith('larger')) throw new DomainError(ErrorCodes.PAYLOAD_TOO_LARGE, `${what} is ${reason}`);
  throw invalid(`${what} is ${reason}`);
}
