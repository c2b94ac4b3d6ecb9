// The machine state a G-code file leaves behind up to a byte offset (Z, layer, E, feedrate, fan, tool, targets),
// read from the file itself, incrementally, so the streaming path never pays for it.
import { open } from 'node:fs/promises';
import { CR, LineBreaks } from '../gcode/line-breaks.ts';

export interface MachineState {
  /** Byte offset scanned up to and the number of whole lines before it. */
  filepos: number;
  line: number;
  x: number | null;
  y: number | null;
  z: number | null;
  /** E in the file's coordinates (absolute value the firmware had, after any G92 E). */
  e: number;
  f: number | null;
  relativeE: boolean;
  relativeXYZ: boolean;
  tool: number;
  /** Part cooling fan 0–255. */
  fan: number;
  /** Targets last set by the file (M104/M109 per tool, M140/M190, M141/M191). */
  tools: Record<string, number>;
  bed: number | null;
  chamber: number | null;
  /** 0-based layer: raised by each new highest Z that is then extruded at. */
  layer: number;
  layerZ: number | null;
  /** Byte offset and line where the current layer's Z move was read. */
  layerStart: { filepos: number; line: number } | null;
}

export function initialState(): MachineState {
  return {
    filepos: 0, line: 0, x: null, y: null, z: null, e: 0, f: null, relativeE: false, relativeXYZ: false, tool: 0, fan: 0,
    tools: {}, bed: null, chamber: null, layer: -1, layerZ: null, layerStart: null,
  };
}

// A line's words (letter → first value after the command), read from the file's bytes: the journal reads every line a
// print sends, twice (acknowledged and executed), and a Map, regex matches and a string per line made it the main
// thread's biggest cost while streaming fast (≈ 80 % of its CPU at the virtual printer's full speed). Module-level,
// reused for every line: no allocation per line.
const wordValue = new Float64Array(26);
let wordSeen = 0; // bit (letter - 'A') set once the letter has its value

const isSpace = (b: number) => b === 32 || (b >= 9 && b <= 13);
const isDigit = (b: number) => b >= 48 && b <= 57;
const upper = (b: number) => (b >= 97 && b <= 122 ? b - 32 : b);
const word = (letter: string): number | undefined => {
  const i = letter.charCodeAt(0) - 65;
  return wordSeen & (1 << i) ? wordValue[i] : undefined;
};

/**
 * Reads the number at buf[i] as the pattern -?\d*\.?\d+ takes it (a dot without a digit after it is not part of it):
 * false if there is none, else true with its end in `numberEnd` and its value in `numberValue`.
 */
let numberEnd = 0;
let numberValue = 0;
function readNumber(buf: Buffer, i: number, end: number): boolean {
  const from = i;
  if (i < end && buf[i] === 45) i++; // '-'
  let int = 0;
  const intFrom = i;
  while (i < end && isDigit(buf[i])) { int = int * 10 + buf[i] - 48; i++; }
  const intDigits = i - intFrom;
  let frac = 0;
  let fracDigits = 0;
  if (i + 1 < end && buf[i] === 46 && isDigit(buf[i + 1])) {
    i++;
    while (i < end && isDigit(buf[i])) { frac = frac * 10 + buf[i] - 48; fracDigits++; i++; }
  }
  const digits = intDigits + fracDigits;
  if (digits === 0) return false;
  numberEnd = i;
  // Below 2^53 both parts and the power of ten are exact, so one division rounds as Number() does; longer ones are
  // rare enough to parse as text.
  numberValue = digits <= 15 && fracDigits <= 22
    ? (int * 10 ** fracDigits + frac) / 10 ** fracDigits * (buf[from] === 45 ? -1 : 1)
    : Number(buf.toString('latin1', from, i));
  return true;
}

/** The words of buf[i, end) (upper-cased letters; the first value of each letter counts). */
function readWords(buf: Buffer, i: number, end: number): void {
  wordSeen = 0;
  while (i < end) {
    const letter = upper(buf[i]);
    if (letter < 65 || letter > 90) { i++; continue; }
    let j = i + 1;
    while (j < end && isSpace(buf[j])) j++;
    if (!readNumber(buf, j, end)) { i++; continue; }
    const bit = 1 << (letter - 65);
    if (!(wordSeen & bit)) { wordSeen |= bit; wordValue[letter - 65] = numberValue; }
    i = numberEnd;
  }
}

/** Applies the line in buf[from, to) (without its newline; a comment after ';' and surrounding blanks are ignored). */
export function applyLineBytes(s: MachineState, buf: Buffer, from: number, to: number, lineStart: number): void {
  // The comment's ';', looked for within the line only (indexOf would run on to the next comment, lines ahead).
  let end = from;
  while (end < to && buf[end] !== 59) end++;
  while (end > from && isSpace(buf[end - 1])) end--;
  let i = from;
  if (buf[i] === 0xef && buf[i + 1] === 0xbb && buf[i + 2] === 0xbf && i + 3 <= end) i += 3; // a UTF-8 byte order mark
  while (i < end && isSpace(buf[i])) i++;
  if (i === end) return;
  // The command is the first token; a line number glued to it (N12G1) is dropped, one standing alone leaves none.
  let tokenEnd = i;
  while (tokenEnd < end && !isSpace(buf[tokenEnd])) tokenEnd++;
  let c = i;
  if (upper(buf[c]) === 78 && c + 1 < tokenEnd && isDigit(buf[c + 1])) { // N<digits>
    c++;
    while (c < tokenEnd && isDigit(buf[c])) c++;
  }
  if (c === tokenEnd) return;
  const letter = upper(buf[c]);
  let n = 0;
  let k = c + 1;
  while (k < tokenEnd && isDigit(buf[k])) { n = n * 10 + buf[k] - 48; k++; }
  const digits = k - c - 1;
  if (k !== tokenEnd || digits === 0) return; // not a letter and a number (G1, M104, T0)
  if (letter === 84) { s.tool = digits <= 15 ? n : Number(buf.toString('latin1', c + 1, k)); return; } // T<digits>
  // Written as G1, M104: G01 or M0104 are not these commands.
  if (digits > 1 && buf[c + 1] === 48) return;
  readWords(buf, tokenEnd, end);
  if (letter === 71) applyG(s, n, lineStart);
  else if (letter === 77) applyM(s, n);
}

function applyG(s: MachineState, n: number, lineStart: number): void {
  switch (n) {
    case 0: case 1: case 2: case 3: {
      const zBefore = s.z;
      const x = word('X');
      if (x !== undefined) s.x = s.relativeXYZ && s.x !== null ? s.x + x : x;
      const y = word('Y');
      if (y !== undefined) s.y = s.relativeXYZ && s.y !== null ? s.y + y : y;
      const z = word('Z');
      if (z !== undefined) s.z = s.relativeXYZ && s.z !== null ? s.z + z : z;
      if (s.z !== zBefore && s.z !== null && (s.layerZ === null || s.z > s.layerZ)) s.layerStart = { filepos: lineStart, line: s.line };
      const f = word('F');
      if (f !== undefined) s.f = f;
      const e = word('E');
      if (e !== undefined) {
        const delta = s.relativeE ? e : e - s.e;
        s.e = s.relativeE ? s.e + e : e;
        if (delta > 0 && s.z !== null && (s.layerZ === null || s.z > s.layerZ + 1e-6)) {
          s.layer++;
          s.layerZ = s.z;
        }
      }
      return;
    }
    case 28: s.x = s.y = s.z = null; if (wordSeen === 0 || word('Z') !== undefined) s.z = 0; return;
    case 90: s.relativeXYZ = false; s.relativeE = false; return;
    case 91: s.relativeXYZ = true; s.relativeE = true; return;
    case 92: {
      const e = word('E');
      if (e !== undefined) s.e = e;
      const z = word('Z');
      if (z !== undefined) s.z = z;
      return;
    }
    default:
  }
}

function applyM(s: MachineState, n: number): void {
  switch (n) {
    case 82: s.relativeE = false; return;
    case 83: s.relativeE = true; return;
    case 104: case 109: {
      const t = word('S') ?? word('R');
      if (t !== undefined) s.tools[`tool${word('T') ?? s.tool}`] = t;
      return;
    }
    case 140: case 190: { const t = word('S') ?? word('R'); if (t !== undefined) s.bed = t; return; }
    case 141: case 191: { const t = word('S') ?? word('R'); if (t !== undefined) s.chamber = t; return; }
    case 106: s.fan = Math.max(0, Math.min(255, word('S') ?? 255)); return;
    case 107: s.fan = 0; return;
    default:
  }
}

/**
 * Calls `onLine(buf, start, end, lineStart, next)` for each whole line of the file from byte `from` up to `to` (its
 * content buf[start, end), its file offset, the offset after its break) until it returns true; lines end at LF,
 * CR LF or a lone CR (gcode/line-breaks.ts), as the print reads them. Reads 64 KiB at a time, each chunk from the
 * start of the line the last one cut; a line longer than that is not G-code: it is counted (content empty), not held.
 */
async function walkLines(path: string, from: number, to: number,
  onLine: (buf: Buffer, start: number, end: number, lineStart: number, next: number) => boolean): Promise<void> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(64 * 1024);
    const breaks = new LineBreaks();
    let pos = from;
    let junkFrom = -1; // file offset where a line too long for the buffer began, while reading on to its end
    while (pos < to) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, to - pos), pos);
      if (bytesRead === 0) break;
      const last = pos + bytesRead >= to;
      breaks.reset();
      let start = 0;
      if (junkFrom >= 0) {
        if (!breaks.find(buf, 0, bytesRead, last)) {
          // Still inside it; a CR ending the chunk is read again, with the LF that may follow it.
          pos += buf[bytesRead - 1] === CR && bytesRead > 1 ? bytesRead - 1 : bytesRead;
          continue;
        }
        if (onLine(buf, 0, 0, junkFrom, pos + breaks.next)) return;
        start = breaks.next;
        junkFrom = -1;
      }
      while (breaks.find(buf, start, bytesRead, last)) {
        if (onLine(buf, start, breaks.end, pos + start, pos + breaks.next)) return;
        start = breaks.next;
      }
      if (start === 0) {
        // An unfinished line up to `to` (or the file's end) is not a line yet.
        if (bytesRead < buf.length) break;
        junkFrom = pos;
        pos += buf[bytesRead - 1] === CR ? bytesRead - 1 : bytesRead;
        continue;
      }
      pos += start;
    }
  } finally {
    await fh.close();
  }
}

/**
 * Advances `s` from its offset to `to` by reading the file. Only whole lines ending before `to` are applied; `to` is
 * always a line end in practice (the stream's offsets are).
 */
export async function scanTo(path: string, s: MachineState, to: number, until?: (s: MachineState) => boolean): Promise<MachineState> {
  if (to <= s.filepos) return s;
  await walkLines(path, s.filepos, to, (buf, start, end, lineStart, next) => {
    applyLineBytes(s, buf, start, end, lineStart);
    s.line++;
    s.filepos = next;
    return until?.(s) ?? false;
  });
  return s;
}

/** Byte offset of the start of 1-based `line` (null past the end). */
export async function offsetOfLine(path: string, line: number): Promise<number | null> {
  if (line <= 1) return 0;
  let seen = 1;
  let offset: number | null = null;
  await walkLines(path, 0, Infinity, (_buf, _start, _end, _lineStart, next) => {
    if (++seen < line) return false;
    offset = next;
    return true;
  });
  return offset;
}

/** Where layer `layer` (0-based) begins (its Z move), scanning from the start; null if the file has no such layer. */
export async function offsetOfLayer(path: string, layer: number, size: number): Promise<number | null> {
  const s = await scanTo(path, initialState(), size, (st) => st.layer >= layer);
  return s.layer === layer ? s.layerStart?.filepos ?? null : null;
}
