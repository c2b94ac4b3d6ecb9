// Reading a whole file on the main thread without piling up Buffers for the GC: two reused buffers (digests), or a stream
// whose sent chunks are freed as it goes (downloads).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline, Transform, type Readable } from 'node:stream';
import { collectYoungGarbage } from './gc.ts';

/**
 * Below glibc's default mmap threshold (128 KB), so the buffers never raise it; two per read-through, reused.
 * A stream (`createReadStream`) allocates a new Buffer per chunk, freed only when a GC finds it dead: hashing the
 * 36 MB file at a print's start piled ≈ 30 MB of them into malloc's main heap between collections, which a block
 * still in use above them can pin for good (see gc.ts on uploads).
 */
const CHUNK_BYTES = 64 * 1024;

export interface ChunkRange {
  /** First byte to read (default 0). */
  start?: number;
  /** Read no further than this byte offset (exclusive; default: to the end of the file). */
  end?: number;
}

/**
 * Yields the file's bytes in order. A chunk stays valid until the loop asks for the next one, then its buffer is
 * read into again: copy (or decode) what must outlive the step. The next chunk is read while the caller works on
 * this one (two buffers in turn), which keeps hashing the 36 MB file as fast as a stream does.
 */
export async function* fileChunks(path: string, range: ChunkRange = {}): AsyncGenerator<Buffer> {
  const fh = await open(path, 'r');
  const end = range.end ?? Infinity;
  const buffers = [Buffer.allocUnsafe(CHUNK_BYTES), Buffer.allocUnsafe(CHUNK_BYTES)];
  const readAt = (buf: Buffer, at: number) => (at < end ? fh.read(buf, 0, Math.min(CHUNK_BYTES, end - at), at) : null);
  let at = range.start ?? 0;
  let pending = readAt(buffers[0], at);
  try {
    for (let turn = 0; pending; turn ^= 1) {
      const { bytesRead } = await pending;
      pending = null;
      if (bytesRead === 0) return;
      at += bytesRead;
      pending = readAt(buffers[turn ^ 1], at);
      yield buffers[turn].subarray(0, bytesRead);
    }
  } finally {
    // A read still under way when the caller stopped early: its outcome no longer matters (close waits for it).
    pending?.catch(() => {});
    await fh.close();
  }
}

/** The hex digest of the file's content. */
export async function digestFile(path: string, algorithm: 'sha1' | 'sha256'): Promise<string> {
  const h = createHash(algorithm);
  for await (const chunk of fileChunks(path)) h.update(chunk);
  return h.digest('hex');
}

/**
 * The file's bytes as a stream, for an HTTP reply. A stream cannot reuse its buffer (the socket still writes from it),
 * so the chunks it sent are freed every megabyte, as an upload's are (gc.ts): three downloads of the 36 MB file grew
 * malloc's main heap to 25 MB between collections, 1 MB with this (every 256 KB, as uploads do, slowed a local
 * download by ≈ 20 %). Errors of the file (gone, unreadable) end the stream with them.
 */
export function fileStream(path: string, range: ChunkRange = {}): Readable {
  const end = range.end === undefined ? undefined : range.end - 1; // createReadStream's end is inclusive
  let bytes = 0;
  const release = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const before = bytes;
      bytes += chunk.length;
      if (bytes >>> 20 !== before >>> 20) collectYoungGarbage();
      done(null, chunk);
    },
  });
  return pipeline(createReadStream(path, { start: range.start, end }), release, () => {});
}
