// Reads a G-code file as batches of lines with byte offsets, for JobStreamer: big chunks, no per-line promise.
import { open } from 'node:fs/promises';
import type { JobLineBatch } from './types.ts';

/**
 * Yields the lines of `path` from byte `start` (a UTF-8 BOM at 0 is skipped but counted), each batch with the byte
 * offset after every line. Memory stays flat whatever the file size.
 */
export async function* fileLineSource(path: string, start = 0, chunkSize = 64 * 1024): AsyncGenerator<JobLineBatch> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(chunkSize);
    let pos = start;
    let carry: Buffer | null = null;
    let first = start === 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, chunkSize, pos);
      if (bytesRead === 0) break;
      let data = buf.subarray(0, bytesRead);
      let base = pos; // file offset of data[0] (after the carry)
      pos += bytesRead;
      if (first) {
        first = false;
        if (data.length >= 3 && data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) {
          data = data.subarray(3);
          base += 3;
        }
      }
      const lines: string[] = [];
      const ends: number[] = [];
      let lineStart = 0;
      for (let i = 0; i < data.length; i++) {
        if (data[i] !== 10) continue;
        let text: string;
        if (carry) {
          text = Buffer.concat([carry, data.subarray(0, i)]).toString('utf8');
          carry = null;
        } else text = data.toString('utf8', lineStart, i);
        lines.push(text.endsWith('\r') ? text.slice(0, -1) : text);
        ends.push(base + i + 1);
        lineStart = i + 1;
      }
      if (lineStart < data.length) {
        const rest = Buffer.from(data.subarray(lineStart));
        carry = carry ? Buffer.concat([carry, rest]) : rest;
      }
      if (lines.length > 0) yield { lines, ends };
    }
    if (carry && carry.length > 0) yield { lines: [carry.toString('utf8')], ends: [pos] };
  } finally {
    await fh.close();
  }
}
