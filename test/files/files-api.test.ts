// Files API: upload answers and events, listings, folders, names, commands, delete, ETag, and the test helper.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { multipartBody, GCODE, type FormPart } from './multipart.ts';
import { cubeStl } from '../helpers/stl.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function upload(s: TestServer, parts: FormPart[], location = 'local'): Promise<Response> {
  const { body, contentType } = multipartBody(parts);
  return s.api(`/api/files/${location}`, { method: 'POST', body, headers: { 'Content-Type': contentType } });
}

export const fileParts = (filename: string, content: string | Buffer = GCODE, extra: FormPart[] = []): FormPart[] =>
  [...extra, { name: 'file', filename, value: content }];

function rawStatus(s: TestServer, method: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: s.port, method, path, headers: { 'X-Api-Key': s.apiKey } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

function recordEvents(s: TestServer): string[] {
  const seen: string[] = [];
  s.events.onAny('test', (name) => { seen.push(name); });
  return seen;
}

test('upload answers 201 with an absolute Location and the abridged entry; the listing has hash, size, date, refs', async (t) => {
  const s = await startTestServer(t);
  const seen = recordEvents(s);
  const payloads = new Map<string, unknown>();
  s.events.onAny('test-payloads', (name, payload) => { payloads.set(name, payload); });
  const res = await upload(s, fileParts('cube.gcode', GCODE, [{ name: 'print', value: 'false' }, { name: 'path', value: '' }]));
  assert.equal(res.status, 201);
  const loc = res.headers.get('location') ?? '';
  assert.match(loc, /^http:\/\/127\.0\.0\.1:\d+\/api\/files\/local\/cube\.gcode$/);
  assert.equal(loc.split('api/', 2)[1], 'files/local/cube.gcode');
  const body = await res.json() as Json;
  assert.deepEqual(Object.keys(body.files.local).sort(), ['name', 'origin', 'path', 'refs']);
  assert.equal(body.files.local.path, 'cube.gcode');
  assert.equal(body.done, true);
  assert.equal(body.effectiveSelect, false);
  assert.equal(body.effectivePrint, false);
  assert.ok(seen.indexOf('FileAdded') < seen.indexOf('UpdatedFiles') && seen.indexOf('UpdatedFiles') < seen.indexOf('Upload'), seen.join());
  assert.deepEqual(payloads.get('FileAdded'), { storage: 'local', path: 'cube.gcode', name: 'cube.gcode', type: ['machinecode', 'gcode'], operation: 'add' });
  assert.deepEqual(payloads.get('Upload'), { name: 'cube.gcode', path: 'cube.gcode', target: 'local', select: false, print: false,
    effective_select: false, effective_print: false });

  const list = await (await s.api('/api/files')).json() as Json;
  assert.equal(typeof list.free, 'number');
  assert.equal(typeof list.total, 'number');
  const f = list.files.find((e: Json) => e.name === 'cube.gcode');
  assert.equal(f.hash, createHash('sha1').update(GCODE).digest('hex'));
  assert.equal(f.size, Buffer.byteLength(GCODE));
  assert.ok(Number.isInteger(f.date));
  assert.deepEqual(f.typePath, ['machinecode', 'gcode']);
  assert.equal(f.type, 'machinecode');
  assert.equal(f.origin, 'local');
  assert.match(f.refs.download, /\/downloads\/files\/local\/cube\.gcode$/);
  const one = await (await s.api('/api/files/local/cube.gcode')).json() as Json;
  assert.equal(one.hash, f.hash);
});

test('upload rules: 415 type, 400 userdata, 409 noOverwrite, 400 nothing to do, 404 location; userdata is kept', async (t) => {
  const s = await startTestServer(t);
  assert.equal((await upload(s, fileParts('drawing.dxf'))).status, 415);
  assert.equal((await upload(s, fileParts('notes.txt'))).status, 415);
  const badUser = await upload(s, fileParts('a.gcode', GCODE, [{ name: 'userdata', value: '{nope' }]));
  assert.equal(badUser.status, 400);
  assert.deepEqual(await badUser.json(), { error: 'userdata contains invalid JSON' });
  assert.equal((await upload(s, fileParts('a.gcode', GCODE, [{ name: 'userdata', value: '{"k":[1,2]}' }]))).status, 201);
  const again = await upload(s, fileParts('a.gcode', GCODE, [{ name: 'noOverwrite', value: 'true' }]));
  assert.equal(again.status, 409);
  assert.deepEqual(await again.json(), { error: 'File already exists and noOverwrite was set' });
  assert.equal((await upload(s, fileParts('a.gcode', 'G28\n'))).status, 201, 'overwrite is allowed');
  const entry = await (await s.api('/api/files/local/a.gcode')).json() as Json;
  assert.equal(entry.size, 4);
  assert.equal(entry.userdata, undefined, 'the new upload carries no userdata');
  const none = await upload(s, [{ name: 'path', value: 'x' }]);
  assert.equal(none.status, 400);
  assert.deepEqual(await none.json(), { error: 'No file to upload and no folder to create' });
  assert.equal((await upload(s, fileParts('a.gcode'), 'elsewhere')).status, 404);
  // Nothing half-written stays behind after refused uploads.
  const names = await readdir(join(s.baseDir, 'uploads'));
  assert.deepEqual(names.filter((n) => n.startsWith('.upload-')), []);
});

test('names: folder part and path field, unicode kept, leading dot stripped with display, missing folder created', async (t) => {
  const s = await startTestServer(t);
  assert.equal((await upload(s, fileParts('sub/part.gcode'))).status, 201);
  const r = await upload(s, fileParts('Ä b?.gcode', GCODE, [{ name: 'path', value: 'new/deeper' }]));
  assert.equal(r.status, 201);
  assert.equal((await r.json() as Json).files.local.path, 'new/deeper/Ä b.gcode');
  const hidden = await (await upload(s, fileParts('.hidden.gcode'))).json() as Json;
  assert.equal(hidden.files.local.name, 'hidden.gcode');
  const list = await (await s.api('/api/files?recursive=true')).json() as Json;
  const byPath = new Map<string, Json>();
  const walk = (es: Json[]) => { for (const e of es) { byPath.set(e.path, e); if (e.children) walk(e.children); } };
  walk(list.files);
  assert.equal(byPath.get('hidden.gcode')?.display, '.hidden.gcode');
  assert.equal(byPath.get('new/deeper/Ä b.gcode')?.display, 'Ä b?.gcode');
  assert.equal(byPath.get('new')?.type, 'folder');
  assert.equal(byPath.get('new')?.size, Buffer.byteLength(GCODE));
  assert.ok(byPath.has('sub/part.gcode'));
  const flat = await (await s.api('/api/files/local')).json() as Json;
  const newFolder = flat.files.find((e: Json) => e.path === 'new');
  assert.deepEqual(newFolder.children, []);
  assert.equal(newFolder.size, Buffer.byteLength(GCODE));
  const folderGet = await (await s.api('/api/files/local/new')).json() as Json;
  assert.equal(folderGet.children.length, 1);
  assert.deepEqual(folderGet.children[0].children, []);
});

test('hostile names never escape the uploads folder', async (t) => {
  const s = await startTestServer(t);
  const dotdot = await upload(s, fileParts('../../evil.gcode'));
  assert.equal(dotdot.status, 400);
  const viaPath = await upload(s, fileParts('evil.gcode', GCODE, [{ name: 'path', value: '../..' }]));
  assert.equal(viaPath.status, 400);
  const abs = await upload(s, fileParts('/tmp/abs.gcode'));
  assert.equal(abs.status, 201);
  assert.equal((await abs.json() as Json).files.local.path, 'tmp/abs.gcode');
  const nul = await upload(s, fileParts('nu\u0000l.gcode'));
  assert.equal(nul.status, 201);
  assert.equal((await nul.json() as Json).files.local.name, 'nul.gcode');
  const backslash = await upload(s, fileParts('..\\..\\win.gcode'));
  assert.ok(backslash.status === 400 || backslash.status === 201);
  // Raw request paths: fetch() would normalise `..` before sending.
  for (const p of ['..%2F..%2Fconfig.yaml', '%2E%2E/config.yaml', '../../config.yaml', 'a%00b.gcode', '..', 'tmp/../tmp/abs.gcode',
    'tmp%2F..%2F..%2Fconfig.yaml', 'tmp/..%5C..%5Cconfig.yaml']) {
    assert.equal(await rawStatus(s, 'GET', `/api/files/local/${p}`), 404, p);
    assert.equal(await rawStatus(s, 'DELETE', `/api/files/local/${p}`), 404, p);
    assert.equal(await rawStatus(s, 'GET', `/downloads/files/local/${p}`), 404, p);
  }
  assert.equal(await rawStatus(s, 'GET', '/api/files/local/tmp/abs.gcode'), 200);
  const copyOut = await s.api('/api/files/local/tmp/abs.gcode', { method: 'POST', json: { command: 'copy', destination: '../../escaped.gcode' } });
  assert.equal(copyOut.status, 400);
  const baseNames = await readdir(s.baseDir);
  assert.ok(!baseNames.includes('evil.gcode') && !baseNames.includes('escaped.gcode') && !baseNames.includes('win.gcode'));
  // The "absolute" upload landed inside the uploads folder.
  assert.equal(await readFile(join(s.baseDir, 'uploads', 'tmp', 'abs.gcode'), 'utf8'), GCODE);
});

test('encoding: filename* (RFC 5987) wins over filename; non-UTF-8 header bytes fall back to ISO-8859-1', async (t) => {
  const s = await startTestServer(t);
  const star = await upload(s, [{ name: 'file', rawDisposition: Buffer.from(`form-data; filename*=UTF-8''%E2%82%AC%20rates.gcode; name="file"; filename="plain.gcode"`), value: GCODE }]);
  assert.equal(star.status, 201);
  assert.equal((await star.json() as Json).files.local.name, '€ rates.gcode');
  const latin1 = await upload(s, [{ name: 'file', rawDisposition: Buffer.concat([Buffer.from('form-data; name="file"; filename="caf'), Buffer.from([0xe9]), Buffer.from('.gcode"')]), value: GCODE }]);
  assert.equal(latin1.status, 201);
  assert.equal((await latin1.json() as Json).files.local.name, 'café.gcode');
  const utf8 = await upload(s, [{ name: 'file', rawDisposition: Buffer.from('form-data; name="file"; filename="über.gcode"', 'utf8'), value: GCODE }]);
  assert.equal((await utf8.json() as Json).files.local.name, 'über.gcode');
});

test('folders: 201 with Location, idempotent, nested, 409 for a known extension, 400 empty / not local', async (t) => {
  const s = await startTestServer(t);
  const seen = recordEvents(s);
  const r = await upload(s, [{ name: 'foldername', value: 'parts' }]);
  assert.equal(r.status, 201);
  assert.match(r.headers.get('location') ?? '', /\/api\/files\/local\/parts$/);
  const body = await r.json() as Json;
  assert.deepEqual(body, { folder: { name: 'parts', path: 'parts', origin: 'local', refs: { resource: r.headers.get('location') } }, done: true });
  assert.ok(seen.includes('FolderAdded'));
  assert.equal((await upload(s, [{ name: 'foldername', value: 'parts' }])).status, 201);
  const nested = await (await upload(s, [{ name: 'foldername', value: 'inner' }, { name: 'path', value: 'parts' }])).json() as Json;
  assert.equal(nested.folder.path, 'parts/inner');
  assert.equal((await upload(s, [{ name: 'foldername', value: 'foo.gcode' }])).status, 409);
  assert.equal((await upload(s, [{ name: 'foldername', value: '...' }])).status, 400);
});

test('copy, move, analyse, select without printer, unselect, slice, unknown command', async (t) => {
  const s = await startTestServer(t);
  await upload(s, fileParts('a.gcode'));
  await upload(s, [{ name: 'foldername', value: 'dir' }]);
  const cmd = (path: string, json: Json) => s.api(`/api/files/local/${path}`, { method: 'POST', json });
  const seen = recordEvents(s);

  const copy = await cmd('a.gcode', { command: 'copy', destination: 'dir' });
  assert.equal(copy.status, 201);
  const copied = await copy.json() as Json;
  assert.equal(copied.path, 'dir/a.gcode');
  assert.equal(copied.name, 'a.gcode');
  assert.match(copy.headers.get('location') ?? '', /\/api\/files\/local\/dir\/a\.gcode$/);
  assert.ok(seen.includes('FileAdded'));
  const exists = await cmd('a.gcode', { command: 'copy', destination: 'dir/a.gcode' });
  assert.equal(exists.status, 409);
  assert.deepEqual(await exists.json(), { error: 'Exception thrown by storage, bad folder/file name?' });
  assert.equal((await cmd('a.gcode', { command: 'copy', destination: 'a.txt' })).status, 415);
  // OctoPrint 1.9.3 answers 500 here; Gantry answers the client's mistake as one (issue 58 item 11).
  const missing = await cmd('a.gcode', { command: 'copy', destination: 'nope/b.gcode' });
  assert.equal(missing.status, 409);
  assert.deepEqual(await missing.json(), { error: 'No such folder' });
  assert.equal((await cmd('missing.gcode', { command: 'copy', destination: 'x.gcode' })).status, 404);
  assert.equal((await cmd('a.gcode', { command: 'copy' })).status, 400);

  const move = await cmd('a.gcode', { command: 'move', destination: 'renamed.gcode' });
  assert.equal(move.status, 201);
  const moved = await move.json() as Json;
  assert.equal(moved.name, 'a.gcode', 'name is the source name even on rename');
  assert.equal(moved.path, 'renamed.gcode');
  assert.ok(seen.includes('FileMoved') && seen.includes('FileRemoved'));
  assert.equal((await s.api('/api/files/local/a.gcode')).status, 404);
  const movedFolder = await cmd('dir', { command: 'move', destination: 'dir2' });
  assert.equal(movedFolder.status, 201);
  assert.equal((await s.api('/api/files/local/dir2/a.gcode')).status, 200);

  assert.equal((await s.api('/api/files/sdcard/x.gcode', { method: 'POST', json: { command: 'copy', destination: 'y.gcode' } })).status, 400);
  assert.equal((await cmd('renamed.gcode', { command: 'analyse' })).status, 204);
  assert.equal((await cmd('nope.gcode', { command: 'analyse' })).status, 404);

  const select = await cmd('renamed.gcode', { command: 'select' });
  assert.equal(select.status, 409, 'no printer connected: not ready');
  const unselect = await cmd('current', { command: 'unselect' });
  assert.equal(unselect.status, 409);
  assert.match(unselect.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal(await unselect.text(), 'Printer is already printing, cannot unselect current file');
  const slice = await cmd('renamed.gcode', { command: 'slice' });
  assert.equal(slice.status, 415);
  const bad = await cmd('renamed.gcode', { command: 'frobnicate' });
  assert.equal(bad.status, 400);
  assert.deepEqual(await bad.json(), { error: 'command is invalid' });
});

test('delete: 204 for file and folder, 404 when missing; events fire', async (t) => {
  const s = await startTestServer(t);
  await upload(s, fileParts('d/x.gcode'));
  await upload(s, fileParts('y.gcode'));
  const seen = recordEvents(s);
  assert.equal((await s.api('/api/files/local/y.gcode', { method: 'DELETE' })).status, 204);
  assert.equal((await s.api('/api/files/local/d', { method: 'DELETE' })).status, 204);
  assert.ok(seen.includes('FileRemoved') && seen.includes('FolderRemoved') && seen.includes('UpdatedFiles'));
  assert.equal((await s.api('/api/files/local/y.gcode', { method: 'DELETE' })).status, 404);
  assert.equal((await s.api('/api/files/local/y.gcode')).status, 404);
  assert.equal((await s.api('/api/files/nowhere/y.gcode')).status, 404);
});

test('listings carry ETag/Last-Modified and answer 304 unless force; metadata is rebuilt when lost', async (t) => {
  const s = await startTestServer(t);
  await upload(s, fileParts('e.gcode'));
  // The background analysis changes the listing when it lands; let it land first.
  for (let i = 0; i < 200; i++) {
    if (((await (await s.api('/api/files/local/e.gcode')).json()) as Json).gcodeAnalysis) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const first = await s.api('/api/files');
  const etag = first.headers.get('etag') ?? '';
  assert.ok(etag && first.headers.get('last-modified'));
  const again = await s.api('/api/files', { headers: { 'If-None-Match': etag } });
  assert.equal(again.status, 304);
  assert.equal(await again.text(), '');
  assert.equal((await s.api('/api/files?force=false', { headers: { 'If-None-Match': etag } })).status, 200);
  await upload(s, fileParts('f.gcode'));
  assert.equal((await s.api('/api/files', { headers: { 'If-None-Match': etag } })).status, 200);

  await rm(join(s.baseDir, 'uploads', '.metadata.json'), { force: true });
  await writeFile(join(s.baseDir, 'uploads', 'dropped.gcode'), GCODE);
  const list = await (await s.api('/api/files?force=true')).json() as Json;
  const dropped = list.files.find((e: Json) => e.name === 'dropped.gcode');
  assert.equal(dropped.hash, createHash('sha1').update(GCODE).digest('hex'));
});

test('filter keeps folders and only matching files; /api/files/test sanitize and exists', async (t) => {
  const s = await startTestServer(t);
  await upload(s, fileParts('k/one.gcode'));
  const filtered = await (await s.api('/api/files/local?filter=machinecode&recursive=true')).json() as Json;
  assert.equal(filtered.files[0].children[0].name, 'one.gcode');
  const none = await (await s.api('/api/files/local?filter=model&recursive=true')).json() as Json;
  assert.deepEqual(none.files[0].children, []);
  const san = await (await s.api('/api/files/test', { method: 'POST', json: { command: 'sanitize', storage: 'local', path: 'k', filename: 'Ä b?.gcode' } })).json() as Json;
  assert.equal(san.sanitized, join(s.baseDir, 'uploads', 'k', 'Ä b.gcode'));
  const ex = await (await s.api('/api/files/test', { method: 'POST', json: { command: 'exists', storage: 'local', path: 'k', filename: 'one.gcode' } })).json() as Json;
  assert.deepEqual(ex, { exists: true, suggestion: 'one_1.gcode' });
  const nx = await (await s.api('/api/files/test', { method: 'POST', json: { command: 'exists', storage: 'local', path: '', filename: 'zz.gcode' } })).json() as Json;
  assert.deepEqual(nx, { exists: false });
  assert.equal((await s.api('/api/files/test', { method: 'POST', json: { command: 'exists', storage: 'local' } })).status, 400);
});

test('less travelled answers: 403 overwrite without FILES_DELETE, 415 select and 400 analyse of a model, 409 SD upload without a printer, 304 on If-Modified-Since', async (t) => {
  const s = await startTestServer(t);
  await s.access.users.addGroup({ key: 'uploaders', name: 'Uploaders', description: 'upload only', permissions: ['FILES_LIST', 'FILES_UPLOAD'], subgroups: [], default: false });
  await s.access.users.addUser({ name: 'ulla', password: 'ulla-pw-123', groups: ['uploaders'] });
  const key = await s.access.users.generateUserKey('ulla');
  const asUlla = (name: string, content: string): Promise<Response> => {
    const { body, contentType } = multipartBody(fileParts(name, content));
    return s.api('/api/files/local', { method: 'POST', body, headers: { 'Content-Type': contentType }, key });
  };
  assert.equal((await asUlla('mine.gcode', 'G28\n')).status, 201, 'a new file needs only FILES_UPLOAD');
  const over = await asUlla('mine.gcode', 'G28\nG1 X1\n');
  assert.equal(over.status, 403);
  assert.deepEqual(await over.json(), { error: 'File already exists, cannot overwrite due to a lack of permissions' });
  assert.equal((await s.api('/api/files/local/mine.gcode')).status, 200);
  assert.equal(((await (await s.api('/api/files/local/mine.gcode')).json()) as Json).size, 4, 'the old content stays');
  assert.equal((await upload(s, fileParts('mine.gcode', 'G28\nG1 X1\n'))).status, 201, 'the admin (FILES_DELETE) may');

  // A model file (PrusaSlicer is installed, so STL is a known type) is no machine code and no G-code.
  const model = await upload(s, fileParts('cube.stl', cubeStl(5)));
  assert.equal(model.status, 201);
  const select = await s.api('/api/files/local/cube.stl', { method: 'POST', json: { command: 'select' } });
  assert.equal(select.status, 415);
  assert.deepEqual(await select.json(), { error: 'Cannot select file for printing, not a machinecode file' });
  const analyse = await s.api('/api/files/local/cube.stl', { method: 'POST', json: { command: 'analyse' } });
  assert.equal(analyse.status, 400);
  assert.deepEqual(await analyse.json(), { error: 'No analysis possible' });

  const sd = await upload(s, fileParts('card.gcode'), 'sdcard');
  assert.equal(sd.status, 409);
  assert.deepEqual(await sd.json(), { error: 'Can not upload to SD card, printer is either not operational or already busy' });

  // The analyses of the files uploaded above finish in the background (the worker starts on demand) and change the
  // listing; once nothing changes any more, the listing's own Last-Modified answers 304.
  let lastModified = '';
  let cached: Response | undefined;
  for (let i = 0; i < 50 && cached?.status !== 304; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 200));
    const first = await s.api('/api/files/local');
    lastModified = first.headers.get('last-modified') ?? '';
    assert.ok(lastModified);
    await first.arrayBuffer();
    cached = await s.api('/api/files/local', { headers: { 'If-Modified-Since': lastModified } });
    if (cached.status !== 304) await cached.arrayBuffer();
  }
  assert.ok(cached);
  assert.equal(cached.status, 304);
  assert.equal(await cached.text(), '');
  const older = new Date(Date.parse(lastModified) - 60_000).toUTCString();
  assert.equal((await s.api('/api/files/local', { headers: { 'If-Modified-Since': older } })).status, 200);
  assert.equal((await s.api('/api/files/local?force=true', { headers: { 'If-Modified-Since': lastModified } })).status, 200);
});
