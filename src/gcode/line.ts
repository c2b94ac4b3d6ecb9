// Pure G-code line utilities on the streaming hot path: comment stripping, checksums, framing, classification.

/**
 * Cuts the comment at the first `;` not escaped by a backslash and trims; '' for comment-only lines.
 * Char loop instead of a regex: it runs once per streamed line.
 */
export function stripComment(line: string): string {
  let end = line.length;
  for (let i = 0; i < line.length; i++) {
    if (line.charCodeAt(i) === 59 /* ; */ && (i === 0 || line.charCodeAt(i - 1) !== 92 /* \ */)) {
      end = i;
      break;
    }
  }
  let start = 0;
  while (start < end && line.charCodeAt(start) <= 32) start++;
  while (end > start && line.charCodeAt(end - 1) <= 32) end--;
  return start === 0 && end === line.length ? line : line.slice(start, end);
}

/** XOR of all character codes (the firmware's checksum over `N<n> <cmd>`). */
export function xorChecksum(s: string, seed = 0): number {
  let cs = seed;
  for (let i = 0; i < s.length; i++) cs ^= s.charCodeAt(i) & 0xff;
  return cs;
}

/** `N<n> <cmd>*<cs>`: the numbered, checksummed wire form. */
export function frameLine(lineNumber: number, command: string): string {
  const head = `N${lineNumber} `;
  return `${head}${command}*${xorChecksum(command, xorChecksum(head))}`;
}

/**
 * The command's code: `G28`, `M104`, `T` (any tool change), or null for anything else (host `@` commands,
 * Klipper macros). Sub-codes (`G29.1`) are reported without the fraction.
 */
export function commandCode(cmd: string): string | null {
  let i = 0;
  while (i < cmd.length && cmd.charCodeAt(i) === 32) i++;
  if (i >= cmd.length) return null;
  let c = cmd.charCodeAt(i);
  if (c >= 97) c -= 32; // lower-case letters
  if (c !== 71 /* G */ && c !== 77 /* M */ && c !== 84 /* T */) return null;
  const digitsStart = i + 1;
  let j = digitsStart;
  while (j < cmd.length) {
    const d = cmd.charCodeAt(j);
    if (d < 48 || d > 57) break;
    j++;
  }
  if (j === digitsStart) return null;
  if (c === 84) return 'T';
  // Leading zeros are insignificant to the firmware (G01 = G1).
  let k = digitsStart;
  while (k < j - 1 && cmd.charCodeAt(k) === 48) k++;
  return String.fromCharCode(c) + cmd.slice(k, j);
}

/** The tool number of a `T<n>` command, or null. */
export function toolNumber(cmd: string): number | null {
  const s = cmd.trimStart();
  if (s[0] !== 'T' && s[0] !== 't') return null;
  const n = parseInt(s.slice(1), 10);
  return Number.isFinite(n) ? n : null;
}

/**
 * Value of parameter `letter` (upper case) in a command, or null. Skips the code itself. `G1 X10 F3000` → F: 3000.
 * A parameter present without a number (`G28 X`) yields NaN.
 */
export function param(cmd: string, letter: string): number | null {
  const want = letter.charCodeAt(0);
  // Skip the code word.
  let i = 0;
  while (i < cmd.length && cmd.charCodeAt(i) === 32) i++;
  while (i < cmd.length && cmd.charCodeAt(i) !== 32) i++;
  for (; i < cmd.length; i++) {
    const prev = cmd.charCodeAt(i - 1);
    if (prev !== 32 && prev !== 9) continue;
    let c = cmd.charCodeAt(i);
    if (c >= 97 && c <= 122) c -= 32;
    if (c !== want) continue;
    let j = i + 1;
    while (j < cmd.length && cmd.charCodeAt(j) !== 32 && cmd.charCodeAt(j) !== 9) j++;
    const text = cmd.slice(i + 1, j);
    return text === '' ? NaN : Number(text);
  }
  return null;
}

/** True when the command has parameter `letter` at all (with or without a value). */
export function hasParam(cmd: string, letter: string): boolean {
  return param(cmd, letter) !== null;
}

/** Upper-cases the code and parameter letters, keeping text parameters of the given codes (M117 messages). */
export function normalizeCommand(cmd: string, keepCase: readonly string[] = ['M117', 'M118']): string {
  const stripped = stripComment(cmd);
  if (stripped === '') return '';
  const code = commandCode(stripped);
  if (code === null) return stripped;
  if (keepCase.includes(code)) {
    const sp = stripped.indexOf(' ');
    return sp === -1 ? stripped.toUpperCase() : stripped.slice(0, sp).toUpperCase() + stripped.slice(sp);
  }
  return stripped.toUpperCase();
}

/**
 * Python-style named `%(name)s` substitution used by the command API's `parameters`.
 * Unknown names throw so the caller can answer 400.
 */
export function formatParameters(template: string, params: Record<string, unknown>): string {
  return template.replace(/%\(([^)]+)\)([sdif])/g, (_m, name: string, kind: string) => {
    if (!(name in params)) throw new Error(`unknown parameter ${name}`);
    const v = params[name];
    if (kind === 'd' || kind === 'i') return String(Math.trunc(Number(v)));
    if (kind === 'f') return Number(v).toFixed(6);
    return String(v);
  });
}
