// Unit tests: reading a file through reused buffers, byte ranges, the digests built on it, and the download stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { digestFile, fileChunks, fileStream } from './file-chunks.ts';

async function withFile(content: Buffer, fn: (path: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-chunks-'));
  try {
    const path = join(dir, 'f.gcode');
    await writeFile(path, content);
    await fn(path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('the chunks are views of two buffers in turn, and together they are the file', async () => {
  const content = randomBytes(300 * 1024 + 17);
  await withFile(content, async (path) => {
    const copies: Buffer[] = [];
    const backing = new Set<ArrayBufferLike>();
    for await (const chunk of fileChunks(path)) {
      backing.add(chunk.buffer);
      copies.push(Buffer.from(chunk));
    }
    assert.ok(copies.length >= 5, `${copies.length} chunks`);
    assert.equal(backing.size, 2, 'two buffers for the whole read, not one per chunk');
    assert.ok(Buffer.concat(copies).equals(content));
  });
});

test('a byte range reads only those bytes; an empty file or range yields nothing', async () => {
  const content = randomBytes(200 * 1024);
  await withFile(content, async (path) => {
    const read = async (start?: number, end?: number) => {
      const parts: Buffer[] = [];
      for await (const c of fileChunks(path, { start, end })) parts.push(Buffer.from(c));
      return Buffer.concat(parts);
    };
    assert.ok((await read(0, 10)).equals(content.subarray(0, 10)));
    assert.ok((await read(70_000, 140_001)).equals(content.subarray(70_000, 140_001)));
    assert.ok((await read(150_000)).equals(content.subarray(150_000)));
    assert.ok((await read(undefined, 10_000_000)).equals(content), 'an end past the file stops at its end');
    assert.equal((await read(5, 5)).length, 0);
  });
  await withFile(Buffer.alloc(0), async (path) => {
    let n = 0;
    for await (const _ of fileChunks(path)) n++;
    assert.equal(n, 0);
  });
});

test('stopping early closes the file; a missing file rejects', async () => {
  const openFiles = async () => (await readdir('/proc/self/fd')).length;
  await withFile(randomBytes(256 * 1024), async (path) => {
    const before = await openFiles();
    for await (const _ of fileChunks(path)) {
      assert.equal(await openFiles(), before + 1, 'the file is open while read');
      break;
    }
    assert.equal(await openFiles(), before, 'closed after the loop stopped');
  });
  await assert.rejects(digestFile(join(tmpdir(), 'gantry-no-such-file.gcode'), 'sha1'), { code: 'ENOENT' });
});

test('digests equal crypto\'s over the whole content, at and around the chunk size', async () => {
  for (const size of [0, 1, 65_535, 65_536, 65_537, 1_000_003]) {
    const content = randomBytes(size);
    await withFile(content, async (path) => {
      assert.equal(await digestFile(path, 'sha1'), createHash('sha1').update(content).digest('hex'), `sha1 of ${size} bytes`);
      assert.equal(await digestFile(path, 'sha256'), createHash('sha256').update(content).digest('hex'), `sha256 of ${size} bytes`);
    });
  }
});

test('the stream gives the file or its byte range, and ends with the file\'s error', async () => {
  const content = randomBytes(3 * 1024 * 1024 + 5);
  const all = async (stream: AsyncIterable<Buffer>) => {
    const parts: Buffer[] = [];
    for await (const c of stream) parts.push(c);
    return Buffer.concat(parts);
  };
  await withFile(content, async (path) => {
    assert.ok((await all(fileStream(path))).equals(content));
    assert.ok((await all(fileStream(path, { start: 1_000_000, end: 2_500_001 }))).equals(content.subarray(1_000_000, 2_500_001)));
    assert.ok((await all(fileStream(path, { start: 7, end: 8 }))).equals(content.subarray(7, 8)));
  });
  await assert.rejects(all(fileStream(join(tmpdir(), 'gantry-no-such-file.gcode'))), { code: 'ENOENT' });
});
