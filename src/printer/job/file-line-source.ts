// Reads a G-code file as batches of lines with byte offsets, for JobStreamer: big chunks, no per-line promise.
import { open, type FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { LineBreaks, MAX_LINE_BYTES } from '../../gcode/line-breaks.ts';
import type { JobLineBatch } from '../types.ts';

const EMPTY = Buffer.alloc(0);

/**
 * Yields the lines of `path` from byte `start` (a UTF-8 BOM at 0 is skipped but counted), each batch with the byte
 * offset after every line. Lines end at LF, CR LF or a lone CR (gcode/line-breaks.ts). Memory stays flat whatever the
 * file: a line over `maxLineBytes` (MAX_LINE_BYTES) is not G-code and is not held: it is yielded as an empty line (sent as nothing),
 * so that line numbers still count it, as the recovery's do. Before, a file with no line break at all was read into
 * one line, concatenating every chunk onto the last (a 100 MB file: minutes of CPU), and sent to the printer as one.
 */
export async function* fileLineSource(path: string, start = 0, chunkSize = 64 * 1024, maxLineBytes = MAX_LINE_BYTES): AsyncGenerator<JobLineBatch> {
  const fh = await open(path, 'r');
  try {
    const opened = await fh.stat();
    const buf = Buffer.allocUnsafe(chunkSize);
    const breaks = new LineBreaks();
    let pos = start;
    // The start of a line the chunk boundary cut (copied: the chunk buffer is reused), and how long it is so far.
    let carry: Buffer[] = [];
    let carried = 0;
    let overlong = false;
    let first = start === 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, chunkSize, pos);
      await unchanged(fh, opened);
      let data = buf.subarray(0, bytesRead);
      let base = pos; // file offset of data[0]
      pos += bytesRead;
      const last = bytesRead === 0;
      if (first && bytesRead > 0) {
        first = false;
        if (data.length >= 3 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) {
          data = data.subarray(3);
          base += 3;
        }
      }
      const lines: string[] = [];
      const ends: number[] = [];
      let lineStart = 0;
      const takeCarry = (upTo: Buffer = EMPTY): string => {
        const text = overlong || carried + upTo.length > maxLineBytes ? '' : Buffer.concat([...carry, upTo]).toString('utf8');
        carry = [];
        carried = 0;
        overlong = false;
        return text;
      };
      // A carry ends in CR only when that CR ended its chunk: it was a line break, one with the LF that may start this one.
      if (carried > 0 && carry[carry.length - 1].at(-1) === 13) {
        carry[carry.length - 1] = carry[carry.length - 1].subarray(0, -1);
        carried--;
        if (data[0] === 10) {
          data = data.subarray(1);
          base++;
        }
        lines.push(takeCarry());
        ends.push(base);
      }
      breaks.reset();
      while (breaks.find(data, lineStart, data.length, last)) {
        if (carried > 0 || overlong) lines.push(takeCarry(data.subarray(lineStart, breaks.end)));
        else lines.push(breaks.end - lineStart > maxLineBytes ? '' : data.toString('utf8', lineStart, breaks.end));
        ends.push(base + breaks.next);
        lineStart = breaks.next;
      }
      if (last) {
        if (carried > 0 || overlong) {
          lines.push(takeCarry());
          ends.push(base);
        }
        if (lines.length > 0) yield { lines, ends };
        return;
      }
      if (lineStart < data.length && !overlong) {
        // A last byte CR is the break that ends the line (held back in case an LF follows), not part of it.
        if (carried + data.length - lineStart - (data.at(-1) === 13 ? 1 : 0) > maxLineBytes) {
          // Junk: only its end is looked for from now on, and the line counts as one empty line.
          overlong = true;
          carry = data.at(-1) === 13 ? [Buffer.from([13])] : [];
          carried = carry.length;
        } else {
          carry.push(Buffer.from(data.subarray(lineStart)));
          carried += data.length - lineStart;
        }
      } else if (overlong) {
        // Still inside it: keep only a final CR, which an LF in the next chunk may pair with.
        carry = data.at(-1) === 13 ? [Buffer.from([13])] : [];
        carried = carry.length;
      }
      if (lines.length > 0) yield { lines, ends };
    }
  } finally {
    await fh.close();
  }
}

/** Said by the read of a file written over in place while it was printed (see `unchanged`). */
const CHANGED_ON_DISK = 'on disk while it was printed';

/** Whether a job's error is that its file was written over in place while it printed: what was printed is gone. */
export function isFileChangedOnDisk(error: string): boolean {
  return error.includes(CHANGED_ON_DISK);
}

/**
 * Written over in place while it is read (scp and cp write into the file the print has open; an upload through the
 * API is refused while a file prints): the rest would be another file's lines, or none, after this one's first part,
 * and a print cut short by a shorter file ended as done. The read stops with an error instead, which fails the job.
 */
async function unchanged(fh: FileHandle, opened: Stats): Promise<void> {
  const now = await fh.stat();
  if (now.size === opened.size && now.mtimeMs === opened.mtimeMs) return;
  throw new Error(now.size < opened.size
    ? `the file was cut short ${CHANGED_ON_DISK} (${now.size} bytes, ${opened.size} when its read began)`
    : `the file was written over ${CHANGED_ON_DISK}`);
}
