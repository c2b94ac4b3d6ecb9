// Pure units of the files side: name sanitising, stored-path validation, and the streaming multipart reader fed in
// awkward chunk sizes (boundaries split across chunks).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sanitizeName, parseStoredPath, sanitizePath, resolveInside } from '../../src/files/safe-path.ts';
import { readMultipart, boundaryOf, type MultipartEvent } from '../../src/http/multipart.ts';
import { multipartBody, BOUNDARY } from './multipart.ts';

test('sanitizeName keeps unicode and spaces, drops illegal and control characters and leading dots', () => {
  assert.equal(sanitizeName('Ä b?.gcode'), 'Ä b.gcode');
  assert.equal(sanitizeName('..hidden.gcode'), 'hidden.gcode');
  assert.equal(sanitizeName('a<b>c:d*e|f"g\\h.gcode'), 'abcdefgh.gcode');
  assert.equal(sanitizeName('nu\u0000l\u001f.gcode'), 'nul.gcode');
  assert.equal(sanitizeName('..'), '');
  assert.equal(sanitizeName('Über Teil (2).gcode', true), 'Uber_Teil_(2).gcode');
});

test('parseStoredPath refuses anything that is not already a sanitised path; resolveInside never leaves the root', () => {
  assert.deepEqual(parseStoredPath('a/b.gcode'), ['a', 'b.gcode']);
  assert.deepEqual(parseStoredPath('/a/b.gcode'), ['a', 'b.gcode']);
  for (const bad of ['../x.gcode', 'a/../../x', 'a//b', 'a/./b', 'a\\b.gcode', 'nu\u0000l', '.hidden']) {
    assert.throws(() => parseStoredPath(bad), /not found/i, bad);
  }
  assert.throws(() => sanitizePath('a/../b'));
  assert.deepEqual(sanitizePath('/abs/x?'), ['abs', 'x']);
  assert.throws(() => resolveInside('/srv/uploads', ['..', 'etc']));
  assert.equal(resolveInside('/srv/uploads', ['a', 'b']), '/srv/uploads/a/b');
});

test('paths with long runs of slashes are read in time linear in their length', () => {
  // An upload's `path` of `x` + 200,000 slashes + `x` held the server 88 s while a regular expression trimmed its end.
  const run = '/'.repeat(100_000);
  const t0 = performance.now();
  assert.deepEqual(sanitizePath(`x${run}x${run}`), ['x', 'x']);
  assert.deepEqual(parseStoredPath(`${run}a${run}`), ['a']);
  assert.throws(() => parseStoredPath(`a${run}b`), /not found/i);
  const ms = performance.now() - t0;
  assert.ok(ms < 1500, `${ms.toFixed(0)} ms (≈ 40 s when quadratic)`);
});

async function collect(body: Buffer, chunkSize: number): Promise<Array<{ name: string; filename?: string; data: string }>> {
  async function* chunks() {
    for (let i = 0; i < body.length; i += chunkSize) yield body.subarray(i, i + chunkSize);
  }
  const parts: Array<{ name: string; filename?: string; data: string }> = [];
  let cur: Buffer[] = [];
  for await (const ev of readMultipart(chunks(), BOUNDARY) as AsyncGenerator<MultipartEvent>) {
    if (ev.type === 'part') {
      parts.push({ name: ev.part.name, filename: ev.part.filename, data: '' });
      cur = [];
    } else if (ev.type === 'data') cur.push(Buffer.from(ev.chunk));
    else parts[parts.length - 1].data = Buffer.concat(cur).toString('utf8');
  }
  return parts;
}

test('the multipart reader gives the same parts whatever the chunking, including boundary-like content', async () => {
  const tricky = `line\r\n--${BOUNDARY.slice(0, 10)} not a boundary\r\n--\r\nend`;
  const { body, contentType } = multipartBody([
    { name: 'path', value: 'folder' },
    { name: 'file', filename: 'x.gcode', value: tricky },
    { name: 'select', value: 'true' },
  ]);
  assert.equal(boundaryOf(contentType), BOUNDARY);
  const expected = [{ name: 'path', filename: undefined, data: 'folder' }, { name: 'file', filename: 'x.gcode', data: tricky },
    { name: 'select', filename: undefined, data: 'true' }];
  for (const size of [1, 2, 3, 7, 13, 64, 1000, body.length]) assert.deepEqual(await collect(body, size), expected, `chunk ${size}`);
  await assert.rejects(collect(body.subarray(0, body.length - 20), 50), /Unexpected end/);
});
