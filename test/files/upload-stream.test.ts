// Upload intake under stress: a large streamed upload keeps memory flat, an aborted upload leaves nothing behind,
// oversized and length-less uploads are refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { BOUNDARY } from './multipart.ts';

const LINE = Buffer.from('G1 X100.123 Y100.456 E0.05 F1800 ; generated filler line for upload tests\n');

function head(filename: string): Buffer {
  return Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
}
const TAIL = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

interface UploadRun { status: number; body: string }

/**
 * Streams `size` bytes of generated G-code as a multipart upload without holding it in memory. `abortAfter` destroys
 * the socket after that many payload bytes. `onChunk` sees every write (memory sampling).
 */
function streamUpload(s: TestServer, filename: string, size: number, opts: { abortAfter?: number; chunked?: boolean; onChunk?: () => void } = {}): Promise<UploadRun> {
  const chunk = Buffer.concat(Array.from({ length: Math.ceil(65536 / LINE.length) }, () => LINE));
  const pre = head(filename);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'X-Api-Key': s.apiKey, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` };
    if (!opts.chunked) headers['Content-Length'] = pre.length + size + TAIL.length;
    const req = httpRequest({ host: '127.0.0.1', port: s.port, method: 'POST', path: '/api/files/local', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', (err) => (opts.abortAfter !== undefined ? resolve({ status: 0, body: String(err) }) : reject(err)));
    let sent = 0;
    const pump = () => {
      if (sent === 0) req.write(pre);
      while (sent < size) {
        if (opts.abortAfter !== undefined && sent >= opts.abortAfter) {
          req.destroy();
          return;
        }
        const n = Math.min(chunk.length, size - sent);
        sent += n;
        opts.onChunk?.();
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once('drain', pump);
          return;
        }
      }
      req.end(TAIL);
    };
    pump();
  });
}

async function leftovers(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).filter((n) => n.includes('.upload-'));
}

test('a large streamed upload is stored intact while memory stays flat', async (t) => {
  const s = await startTestServer(t);
  const size = 192 * 1024 * 1024;
  global.gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  let n = 0;
  const res = await streamUpload(s, 'big.gcode', size, { onChunk: () => { if (++n % 64 === 0) peak = Math.max(peak, process.memoryUsage().rss); } });
  assert.equal(res.status, 201, res.body);
  const st = await stat(join(s.baseDir, 'uploads', 'big.gcode'));
  assert.equal(st.size, size);
  // The whole file passed through this process twice (client and server); buffering it would add ≥ 192 MB.
  const growth = peak - base;
  assert.ok(growth < 96 * 1024 * 1024, `RSS grew by ${(growth / 1048576).toFixed(1)} MB`);
  assert.deepEqual(await leftovers(join(s.baseDir, 'uploads')), []);
  const entry = await (await s.api('/api/files/local/big.gcode')).json() as { hash: string };
  assert.match(entry.hash, /^[0-9a-f]{40}$/);
});

test('an upload aborted mid-way leaves neither the file nor a temp file', async (t) => {
  const s = await startTestServer(t);
  const uploads = join(s.baseDir, 'uploads');
  const res = await streamUpload(s, 'partial.gcode', 32 * 1024 * 1024, { abortAfter: 8 * 1024 * 1024 });
  assert.equal(res.status, 0);
  // The server notices the reset asynchronously; wait for its cleanup (bounded).
  for (let i = 0; i < 300 && (await leftovers(uploads)).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(await leftovers(uploads), []);
  assert.ok(!(await readdir(uploads)).includes('partial.gcode'));
  // The server is still fine afterwards.
  assert.equal((await s.api('/api/files/local')).status, 200);
});

test('uploads over server.uploads.maxSize are refused with 413 and leave nothing; no Content-Length is 411', async (t) => {
  const s = await startTestServer(t, { settings: { server: { uploads: { maxSize: 1024 * 1024 } } } });
  const uploads = join(s.baseDir, 'uploads');
  const over = await streamUpload(s, 'over.gcode', 3 * 1024 * 1024);
  assert.equal(over.status, 413);
  const small = await streamUpload(s, 'under.gcode', 512 * 1024);
  assert.equal(small.status, 201);
  const chunked = await streamUpload(s, 'chunked.gcode', 64 * 1024, { chunked: true });
  assert.equal(chunked.status, 411);
  assert.deepEqual(await leftovers(uploads), []);
  assert.deepEqual((await readdir(uploads)).filter((n) => n.endsWith('.gcode')), ['under.gcode']);
});

test('forms of too many parts or too large field names are refused with 400 and leave nothing', async (t) => {
  const s = await startTestServer(t);
  const file = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="many.gcode"\r\n\r\nG1 X1\n\r\n--${BOUNDARY}--\r\n`;
  const form = (count: number, name: (i: number) => string, value: string) => Array.from({ length: count },
    (_, i) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name(i)}"\r\n\r\n${value}\r\n`).join('') + file;
  const cases: Array<[string, string, string]> = [
    ['1,001 empty fields', form(1001, (i) => `f${i}`, ''), 'Too many parts in the form (at most 1000)'],
    // Empty values, but 300 names of 15,000 bytes: the names count against the 4 MiB of fields.
    ['long names', form(300, (i) => `${i}-${'n'.repeat(15_000)}`, ''), 'Form fields are too large'],
  ];
  for (const [what, body, error] of cases) {
    const res = await s.api('/api/files/local', { method: 'POST', body, headers: { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` } });
    assert.equal(res.status, 400, what);
    assert.deepEqual(await res.json(), { error }, what);
  }
  assert.deepEqual(await leftovers(s.paths.uploads), []);
  // A form of a thousand parts still goes through.
  const ok = await s.api('/api/files/local', { method: 'POST', body: form(999, (i) => `f${i}`, 'v'), headers: { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` } });
  assert.equal(ok.status, 201);
});

test('downloads: attachment headers, Range → 206 with the exact bytes, suffix ranges, 416, 304 for a current copy, HTML 404', async (t) => {
  const s = await startTestServer(t);
  const content = Buffer.concat(Array.from({ length: 2000 }, (_, i) => Buffer.from(`G1 X${i} Y${i}\n`)));
  const { multipartBody } = await import('./multipart.ts');
  const { body, contentType } = multipartBody([{ name: 'file', filename: 'dl ü.gcode', value: content }]);
  assert.equal((await s.api('/api/files/local', { method: 'POST', body, headers: { 'Content-Type': contentType } })).status, 201);
  const url = `/downloads/files/local/${encodeURIComponent('dl ü.gcode')}`;
  const full = await s.api(url);
  assert.equal(full.status, 200);
  assert.equal(full.headers.get('accept-ranges'), 'bytes');
  assert.match(full.headers.get('content-type') ?? '', /^text\/plain/);
  assert.match(full.headers.get('content-disposition') ?? '', /^attachment; filename="dl _.gcode"; filename\*=UTF-8''dl%20%C3%BC\.gcode$/);
  assert.ok(full.headers.get('etag') && full.headers.get('last-modified'));
  assert.equal(createHash('sha1').update(Buffer.from(await full.arrayBuffer())).digest('hex'), createHash('sha1').update(content).digest('hex'));
  const part = await s.api(url, { headers: { Range: 'bytes=100-199' } });
  assert.equal(part.status, 206);
  assert.equal(part.headers.get('content-range'), `bytes 100-199/${content.length}`);
  assert.deepEqual(Buffer.from(await part.arrayBuffer()), content.subarray(100, 200));
  const suffix = await s.api(url, { headers: { Range: 'bytes=-10' } });
  assert.equal(suffix.status, 206);
  assert.deepEqual(Buffer.from(await suffix.arrayBuffer()), content.subarray(content.length - 10));
  const open = await s.api(url, { headers: { Range: `bytes=${content.length - 5}-` } });
  assert.deepEqual(Buffer.from(await open.arrayBuffer()), content.subarray(content.length - 5));
  const bad = await s.api(url, { headers: { Range: `bytes=${content.length + 10}-` } });
  assert.equal(bad.status, 416);
  // Conditional: the client's tag alone, among others, weak, or `*` (any copy) → 304, with a range too; another → 200.
  const etag = full.headers.get('etag') ?? '';
  for (const inm of [etag, `"other", ${etag}`, `W/${etag}`, '*']) {
    assert.equal((await s.api(url, { headers: { 'If-None-Match': inm } })).status, 304, inm);
    assert.equal((await s.api(url, { headers: { 'If-None-Match': inm, Range: 'bytes=0-9' } })).status, 304, `${inm} with a range`);
  }
  assert.equal((await s.api(url, { headers: { 'If-None-Match': '"other"' } })).status, 200);
  const missing = await s.api('/downloads/files/local/none.gcode');
  assert.equal(missing.status, 404);
  assert.match(await missing.text(), /<title>404: Not Found<\/title>/);
  assert.equal((await s.api(url, { key: null })).status, 403);
});
