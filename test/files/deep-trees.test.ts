// Trees the listing must survive: folders nested deeper than a path may be (made on disk) and links back to an
// enclosing folder; the API refuses to make such depth, for uploads, folders, copies and moves. (A tree 1,990 deep,
// uploaded one level at a time before the cap, overflowed the stack of every listing; 300 levels show the cap at work
// without the seconds a recursive mkdir and rm of 1,990 levels take.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { multipartBody, type FormPart } from './multipart.ts';
import { MAX_PATH_PARTS } from '../../src/files/safe-path.ts';

function upload(s: TestServer, parts: FormPart[]): Promise<Response> {
  const { body, contentType } = multipartBody(parts);
  return s.api('/api/files/local', { method: 'POST', body, headers: { 'Content-Type': contentType } });
}

const fileParts = (filename: string, content: string, extra: FormPart[]): FormPart[] => [...extra, { name: 'file', filename, value: content }];

type Entry = { name: string; path: string; type: string; children?: Entry[] };

function deepest(entries: Entry[]): Entry[] {
  let chain: Entry[] = [];
  for (const e of entries) {
    const below = e.children ? [e, ...deepest(e.children)] : [e];
    if (below.length > chain.length) chain = below;
  }
  return chain;
}

test('a tree 300 folders deep on disk lists, down to the deepest level a path may have', async (t) => {
  const s = await startTestServer(t);
  const uploads = join(s.baseDir, 'uploads');
  const deep = join(uploads, ...Array<string>(300).fill('e'));
  await mkdir(deep, { recursive: true });
  await writeFile(join(deep, 'bottom.gcode'), 'G1 X1\n');
  await writeFile(join(uploads, 'top.gcode'), 'G1 X1\n');
  const res = await s.api('/api/files?recursive=true&force=true');
  assert.equal(res.status, 200);
  const { files } = await res.json() as { files: Entry[] };
  assert.deepEqual(files.map((f) => f.name), ['e', 'top.gcode']);
  const chain = deepest(files);
  assert.equal(chain.length, MAX_PATH_PARTS);
  assert.deepEqual(chain.at(-1)?.children, [], 'the deepest folder a path may name is listed without its content');
  assert.equal((await s.api('/api/files/local/e?recursive=true')).status, 200);
  // And it can be deleted as a whole.
  assert.equal((await s.api('/api/files/local/e', { method: 'DELETE' })).status, 204);
  assert.deepEqual(((await (await s.api('/api/files')).json()) as { files: Entry[] }).files.map((f) => f.name), ['top.gcode']);
});

test('links back to an enclosing folder are left out of listings; other linked folders are listed', async (t) => {
  const s = await startTestServer(t);
  const uploads = join(s.baseDir, 'uploads');
  await mkdir(join(uploads, 'a', 'b'), { recursive: true });
  await writeFile(join(uploads, 'a', 'b', 'part.gcode'), 'G1 X1\n');
  // Two loops: walked blindly, 2^40 paths before the kernel's ELOOP.
  await symlink('..', join(uploads, 'a', 'b', 'up'));
  await symlink('../..', join(uploads, 'a', 'b', 'root'));
  await symlink('a/b', join(uploads, 'shortcut'));
  const res = await s.api('/api/files?recursive=true&force=true');
  assert.equal(res.status, 200);
  const { files } = await res.json() as { files: Entry[] };
  const paths = (entries: Entry[]): string[] => entries.flatMap((e) => [e.path, ...paths(e.children ?? [])]);
  // Through the shortcut, `up` is `a`, which does not enclose `shortcut`: listed, without `b` (which does).
  assert.deepEqual(paths(files), ['a', 'a/b', 'a/b/part.gcode', 'shortcut', 'shortcut/part.gcode', 'shortcut/up']);
});

test('uploads, folders, copies and moves that would nest deeper than a path may are refused with 400', async (t) => {
  const s = await startTestServer(t);
  const at = (n: number): string => Array<string>(n).fill('e').join('/');
  assert.equal((await upload(s, fileParts('x.gcode', 'G1 X1\n', [{ name: 'path', value: at(MAX_PATH_PARTS - 1) }]))).status, 201);
  const refused = await upload(s, fileParts('x.gcode', 'G1 X1\n', [{ name: 'path', value: at(MAX_PATH_PARTS) }]));
  assert.equal(refused.status, 400);
  assert.match((await refused.json() as { error: string }).error, /nest too deeply/);
  assert.equal((await upload(s, [{ name: 'foldername', value: 'z' }, { name: 'path', value: at(MAX_PATH_PARTS) }])).status, 400);
  assert.equal((await upload(s, [{ name: 'foldername', value: 'f' }])).status, 201);
  for (const command of ['copy', 'move']) {
    const r = await s.api('/api/files/local/e', { method: 'POST', json: { command, destination: 'f' } });
    assert.equal(r.status, 400, command);
    assert.match((await r.json() as { error: string }).error, /nest too deeply/);
  }
  // One level less fits.
  const moved = await s.api('/api/files/local/e/e', { method: 'POST', json: { command: 'move', destination: 'f' } });
  assert.equal(moved.status, 201);
  assert.equal((await s.api(`/api/files/local/f/${at(MAX_PATH_PARTS - 2)}/x.gcode`)).status, 200);
});
