// Byte stream → lines: splits on \n (dropping a preceding \r), keeps a partial tail, decodes UTF-8 with a Latin-1 fallback.

const LF = 0x0a;
const CR = 0x0d;

/** Lines longer than this without a newline are garbage (noise at the wrong baudrate); they are cut, not buffered forever. */
const MAX_LINE_BYTES = 8192;

function decode(buf: Buffer, start: number, end: number): string {
  let ascii = true;
  for (let i = start; i < end; i++) {
    if (buf[i] >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) return buf.toString('latin1', start, end);
  const text = buf.toString('utf8', start, end);
  // Firmware banners sometimes carry stray high bytes (line noise, `\x80` after reset): keep them as Latin-1.
  return text.includes('\ufffd') ? buf.toString('latin1', start, end) : text;
}

export class LineSplitter {
  private tail: Buffer | null = null;

  constructor(private readonly onLine: (line: string) => void) {}

  /** Feeds the first `length` bytes of `chunk` (all of it by default); calls onLine for every complete line, in order. */
  push(chunk: Buffer, length = chunk.length): void {
    let buf = chunk;
    let end = length;
    let scanFrom = 0;
    if (this.tail) {
      scanFrom = this.tail.length;
      buf = Buffer.concat([this.tail, chunk.subarray(0, length)]);
      end = buf.length;
      this.tail = null;
    }
    let start = 0;
    let nl = buf.indexOf(LF, scanFrom);
    if (nl >= end) nl = -1;
    while (nl !== -1) {
      const lineEnd = nl > start && buf[nl - 1] === CR ? nl - 1 : nl;
      this.onLine(decode(buf, start, lineEnd));
      start = nl + 1;
      nl = start < end ? buf.indexOf(LF, start) : -1;
      if (nl >= end) nl = -1;
    }
    if (start < end) {
      const rest = end - start;
      if (rest > MAX_LINE_BYTES) {
        this.onLine(decode(buf, start, end));
      } else {
        // Copy: the chunk may be the transport's reused read buffer.
        this.tail = Buffer.from(buf.subarray(start, end));
      }
    }
  }

  /** Drops a partial line (after a baudrate change the bytes so far are noise). */
  reset(): void {
    this.tail = null;
  }
}
