// Byte-level G-code line scanner: command letter/number and parameter words straight from a Buffer, no strings or regexes.

/** Parameter letters A..Z map to slots 0..25; `mask` has bit (letter - 'A') set when the word was present with a number. */
export class ScannedLine {
  letter = 0; // 71 'G', 77 'M', 84 'T', 0 none
  code = -1;
  sub = -1;
  mask = 0;
  /** Like mask, but for every letter seen, with or without a number ("G28 X"). */
  seen = 0;
  readonly values = new Float64Array(26);
  /** Index just after the command word, where parameter scanning starts. */
  paramStart = 0;

  /** `slot` is one of the P* constants (letter - 'A'). */
  has(slot: number): boolean {
    return ((this.mask >> slot) & 1) !== 0;
  }
  get(slot: number): number {
    return this.values[slot];
  }
}

const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

/** Parsed number of the last successful parseNumber call (a typed array: a plain `let` would box every double). */
export const parsed = new Float64Array(1);

/** Parses a decimal number (optional sign, digits, optional fraction) at `i`; returns the index after it, or -1 if none. */
export function parseNumber(buf: Uint8Array, i: number, end: number): number {
  let neg = false;
  let c = buf[i];
  if (c === 45 /* - */ || c === 43 /* + */) {
    neg = c === 45;
    i++;
  }
  let int = 0;
  let digits = 0;
  while (i < end) {
    c = buf[i];
    if (c < 48 || c > 57) break;
    int = int * 10 + (c - 48);
    digits++;
    i++;
  }
  let frac = 0;
  let fracDigits = 0;
  if (i < end && buf[i] === 46 /* . */) {
    i++;
    while (i < end) {
      c = buf[i];
      if (c < 48 || c > 57) break;
      if (fracDigits < 22) {
        frac = frac * 10 + (c - 48);
        fracDigits++;
      }
      digits++;
      i++;
    }
  }
  if (digits === 0) return -1;
  const v = fracDigits > 0 ? int + frac / POW10[fracDigits] : int;
  if (v === Infinity) return -1; // hundreds of digits: junk, not a coordinate
  parsed[0] = neg ? -v : v;
  return i;
}

/**
 * Reads the command word of the line [start, end): skips blanks and an `N<line>` number, then a G/M/T word.
 * Returns false for blank lines, comments and anything without a command.
 */
export function scanCommand(buf: Uint8Array, start: number, end: number, out: ScannedLine): boolean {
  let i = start;
  while (i < end && (buf[i] === 32 || buf[i] === 9)) i++;
  if (i < end && (buf[i] | 32) === 110 /* n */) {
    const j = parseNumber(buf, i + 1, end);
    if (j < 0) return false;
    i = j;
    while (i < end && (buf[i] === 32 || buf[i] === 9)) i++;
  }
  if (i >= end) return false;
  const letter = buf[i] & ~32; // upper-case
  if (letter !== 71 && letter !== 77 && letter !== 84) return false;
  const j = parseNumber(buf, i + 1, end);
  const num = parsed[0];
  if (j < 0 || num < 0) return false;
  out.letter = letter;
  out.code = Math.trunc(num);
  // "M73.2" parses as 73.2: the fraction is the sub-code.
  const frac = num - out.code;
  out.sub = frac > 0 ? Math.round(frac * 10) : -1;
  out.mask = 0;
  out.seen = 0;
  out.paramStart = j;
  return true;
}

/** Reads the parameter words after the command word (letters case-insensitive, spaces optional; stops at `;` or `*`). */
export function scanParams(buf: Uint8Array, end: number, out: ScannedLine): void {
  let i = out.paramStart;
  let mask = 0;
  let seen = 0;
  const values = out.values;
  while (i < end) {
    const c = buf[i];
    if (c === 59 /* ; */ || c === 42 /* * */) break;
    if (c === 40 /* ( */) {
      while (i < end && buf[i] !== 41) i++;
      i++;
      continue;
    }
    const up = c & ~32;
    if (up >= 65 && up <= 90) {
      seen |= 1 << (up - 65);
      const j = parseNumber(buf, i + 1, end);
      if (j > 0) {
        const slot = up - 65;
        values[slot] = parsed[0];
        mask |= 1 << slot;
        i = j;
        continue;
      }
    }
    i++;
  }
  out.mask = mask;
  out.seen = seen;
}
