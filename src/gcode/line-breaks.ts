// Where G-code lines end in raw bytes: LF, CR LF or a lone CR, for everything that reads a G-code file line by line.

export const LF = 10;
export const CR = 13;

/**
 * Longest line a file reader keeps whole (1 MiB). No G-code command is near it (firmware buffers hold ≤ 256 bytes,
 * slicers cut thumbnails into short lines), so a longer line is junk: readers pass over it without holding it.
 */
export const MAX_LINE_BYTES = 1 << 20;

/**
 * Finds line ends in a window of bytes. A line ends at LF, CR LF or a lone CR: files from old Mac tools end lines with
 * CR alone, Python's universal newlines (and so OctoPrint) read those as lines, and firmware ends a command at either
 * byte. Text with LF alone costs one memchr a line: the position of the next CR (and LF) is kept until a line passes it.
 */
export class LineBreaks {
  /** After `find` returned true: end of the line's content (its break excluded) and start of the next line. */
  end = 0;
  next = 0;
  private buf: Uint8Array | null = null;
  private limit = 0;
  private from = 0;
  /** First LF and first CR at or after `from` in the window, -1 for none. */
  private lf = -1;
  private cr = -1;

  /** Forgets what was found: call it after changing the bytes of the buffer being scanned. */
  reset(): void {
    this.buf = null;
  }

  /**
   * The line that starts at `from` in buf[from, limit): true with `end` and `next` set; false when the window holds
   * no break, or ends in a CR that an LF in the next chunk may complete (unless `last`: no more bytes follow).
   */
  find(buf: Uint8Array, from: number, limit: number, last = false): boolean {
    // Each byte's position is searched for once per window: text with one kind of break never scans for the other
    // past its first absence, however long the window. Successive lines of a window start further on each time; a
    // call that does not begins a new scan.
    if (buf !== this.buf || limit !== this.limit || from <= this.from) {
      this.buf = buf;
      this.limit = limit;
      this.lf = nextOf(buf, LF, from, limit);
      this.cr = nextOf(buf, CR, from, limit);
    } else {
      if (this.lf !== -1 && this.lf < from) this.lf = nextOf(buf, LF, from, limit);
      if (this.cr !== -1 && this.cr < from) this.cr = nextOf(buf, CR, from, limit);
    }
    this.from = from;
    const { lf, cr } = this;
    // A CR right before the LF is the CR LF pair, ended by the LF below.
    if (cr !== -1 && (lf === -1 || cr < lf - 1)) {
      if (cr === limit - 1 && !last) return false;
      this.end = cr;
      this.next = cr + 1;
      return true;
    }
    if (lf === -1) return false;
    this.end = lf > from && buf[lf - 1] === CR ? lf - 1 : lf;
    this.next = lf + 1;
    return true;
  }
}

function nextOf(buf: Uint8Array, byte: number, from: number, limit: number): number {
  const i = buf.indexOf(byte, from);
  return i >= limit ? -1 : i;
}

/** Start of the first whole line in `buf` (after its first break; 0 when it has none). */
export function afterFirstBreak(buf: Uint8Array): number {
  const b = new LineBreaks();
  return b.find(buf, 0, buf.length, true) ? b.next : 0;
}

/** End of the last whole line in `buf` (after its last break; 0 when it has none). A final CR counts as a break. */
export function afterLastBreak(buf: Uint8Array): number {
  return Math.max(buf.lastIndexOf(LF), buf.lastIndexOf(CR)) + 1;
}

/** Text cut into lines at the same breaks (for commands and scripts given as text rather than read as bytes). */
export function splitLines(text: string): string[] {
  return text.split(/\r\n|\r|\n/);
}
