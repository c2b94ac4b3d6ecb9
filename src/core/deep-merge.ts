// Bounded deep merge for settings and profiles: hostile depth is a 400, prototype names stay ordinary own keys.
import { invalid } from './errors.ts';
import { isPlain, setOwn, type Plain } from './plain.ts';

/** Deeper than any settings tree or profile needs; anything deeper is an attack or a mistake, refused before recursing. */
export const MAX_DEPTH = 32;

/** True when `v` nests objects or arrays more than `limit` levels deep. Iterative, so hostile depth cannot overflow the stack. */
export function tooDeep(v: unknown, limit = MAX_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[v, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= limit) return true;
    for (const child of Object.values(node)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

/** Throws INVALID_REQUEST when `v` is nested deeper than MAX_DEPTH. */
export function assertDepth(v: unknown, what = 'Value'): void {
  if (tooDeep(v)) throw invalid(`${what} is nested too deeply (at most ${MAX_DEPTH} levels)`);
}

function merge(base: unknown, patch: unknown): unknown {
  if (!isPlain(base) || !isPlain(patch)) return structuredClone(patch);
  const out: Plain = {};
  for (const [k, v] of Object.entries(base)) setOwn(out, k, structuredClone(v));
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    setOwn(out, k, Object.hasOwn(out, k) ? merge(out[k], v) : structuredClone(v));
  }
  return out;
}

/**
 * A fresh tree: objects merge key by key (own keys only), anything else (arrays included) replaces; `undefined` in the
 * patch leaves the base alone. A patch nested deeper than MAX_DEPTH is INVALID_REQUEST.
 */
export function deepMerge(base: unknown, patch: unknown): unknown {
  assertDepth(patch);
  return merge(base, patch);
}
