// The edges of a received line that are noise, not reply: what is trimmed before a line is read.

/** Unicode's white space outside ASCII (what `\s` adds to ASCII's), as single characters. */
const WIDE_SPACE = /^\s$/;

/**
 * A received line without what no firmware reply starts or ends with: control characters, spaces, DEL and characters
 * outside printable ASCII at the start (line noise after a reset or on a bad cable, as in `\0\xff\xfeok`), control
 * characters, DEL and white space at the end. The reference strips white space and NUL from both ends; the wider set
 * at the start recovers a reply behind the noise. A scan by hand: as a regular expression (`[\s\x00-\x1f\x7f]+$`) a
 * run of spaces inside a 16 KB line of noise took a second, trying every start in the run.
 */
export function trimLineNoise(line: string): string {
  let start = 0;
  let end = line.length;
  while (start < end) {
    const c = line.charCodeAt(start);
    if (c > 32 && c < 127) break;
    start++;
  }
  while (end > start) {
    const c = line.charCodeAt(end - 1);
    if (!(c <= 32 || c === 127 || (c > 127 && WIDE_SPACE.test(line[end - 1])))) break;
    end--;
  }
  return start === 0 && end === line.length ? line : line.slice(start, end);
}
