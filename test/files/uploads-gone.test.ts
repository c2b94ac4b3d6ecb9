// The uploads folder removed behind the server's back (a clean-up by hand): the next upload makes it again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { multipartBody, GCODE } from './multipart.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function upload(s: TestServer, filename: string): Promise<Response> {
  const { body, contentType } = multipartBody([{ name: 'file', filename, value: GCODE }]);
  return s.api('/api/files/local', { method: 'POST', body, headers: { 'Content-Type': contentType } });
}

test('an upload after the uploads folder was removed makes it again, without what was known of the files that went with it', async (t) => {
  const s = await startTestServer(t);
  assert.equal((await upload(s, 'before.gcode')).status, 201);
  const root = join(s.baseDir, 'uploads');
  await rm(root, { recursive: true, force: true });
  const res = await upload(s, 'after.gcode');
  assert.equal(res.status, 201, await res.clone().text());
  const listed = ((await (await s.api('/api/files?force=true')).json()) as Json).files.map((e: Json) => e.name);
  assert.deepEqual(listed, ['after.gcode']);
  // The folder's metadata file holds the new file only: the old one's entry is not written back from memory.
  const meta = JSON.parse(await readFile(join(root, '.metadata.json'), 'utf8')) as Json;
  assert.deepEqual(Object.keys(meta), ['after.gcode']);
  assert.equal((await s.api('/downloads/files/local/after.gcode')).status, 200);
});
