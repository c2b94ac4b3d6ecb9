// The listing kept between changes: the same listing while nothing changed, a fresh one after every change made
// through the server (upload, folder, copy, move, delete, metadata), and files dropped in behind its back still show.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, rename, stat, utimes, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { LISTING_REUSE_MS, LocalStorage, listingReuseMs } from '../../src/files/local-storage.ts';
import { FileTypes } from '../../src/files/file-types.ts';
import { silentLogger } from '../../src/core/logger.ts';
import type { StoredEntry, StoredFile, StoredFolder } from '../../src/files/types.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { multipartBody, GCODE, type FormPart } from './multipart.ts';
import { tempDir } from '../helpers/temp-dir.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function upload(s: TestServer, parts: FormPart[]): Promise<Response> {
  const { body, contentType } = multipartBody(parts);
  return s.api('/api/files/local', { method: 'POST', body, headers: { 'Content-Type': contentType } });
}
const fileParts = (filename: string): FormPart[] => [{ name: 'file', filename, value: GCODE }];

async function storageIn(t: { after(fn: () => Promise<void>): void }): Promise<{ root: string; storage: LocalStorage }> {
  const root = await tempDir(t, 'gantry-listing-');
  return { root, storage: new LocalStorage(root, silentLogger, new FileTypes()) };
}

test('a listing is walked once while nothing changes, and again after every change made through the storage', async (t) => {
  const { root, storage } = await storageIn(t);
  await writeFile(join(root, 'a.gcode'), GCODE);
  // The first walk stores a.gcode's hash (a metadata write), which makes its own result stale.
  await storage.list(Infinity);
  const first = await storage.list(Infinity);
  assert.equal(await storage.list(Infinity), first, 'nothing changed: the same listing');
  assert.notEqual(await storage.list(Infinity, undefined, true), first, 'fresh: walked again');

  const changes: Array<[string, () => Promise<unknown>, (names: string[]) => void]> = [
    ['makeFolder', () => storage.makeFolder(['dir']), (n) => assert.ok(n.includes('dir'))],
    ['copy', () => storage.transfer(['a.gcode'], ['dir', 'a.gcode'], 'copy'), () => {}],
    ['move', () => storage.transfer(['a.gcode'], ['b.gcode'], 'move'), (n) => assert.deepEqual(n.sort(), ['b.gcode', 'dir'])],
    ['metadata', () => storage.metadata.update(root, 'b.gcode', { display: 'B' }), () => {}],
    ['remove', () => storage.remove(['dir']), (n) => assert.deepEqual(n, ['b.gcode'])],
    ['changed()', async () => storage.changed(), () => {}],
  ];
  for (const [what, change, check] of changes) {
    const before = await storage.list(Infinity);
    assert.equal(await storage.list(Infinity), before);
    await change();
    const after = await storage.list(Infinity);
    assert.notEqual(after, before, `${what}: a new walk`);
    check(after.map((e) => e.name));
  }
  const withDisplay = await storage.list(Infinity);
  assert.equal(withDisplay.find((e) => e.name === 'b.gcode')?.display, 'B');
});

test('concurrent listings share one walk; depth and filter are listings of their own', async (t) => {
  const { root, storage } = await storageIn(t);
  await writeFile(join(root, 'a.gcode'), GCODE);
  await storage.list(Infinity);
  const [x, y] = await Promise.all([storage.list(Infinity), storage.list(Infinity)]);
  assert.equal(x, y);
  assert.notEqual(await storage.list(0), x);
  assert.deepEqual((await storage.list(Infinity, 'model')).map((e) => e.name), []);
  assert.deepEqual((await storage.list(Infinity)).map((e) => e.name), ['a.gcode']);
});

test('/api/files shows every change made through the API at once, with a new ETag', async (t) => {
  const s = await startTestServer(t);
  const names = async (path = '/api/files?recursive=true'): Promise<{ names: string[]; etag: string }> => {
    const res = await s.api(path);
    const body = await res.json() as Json;
    const flat = (entries: Json[]): string[] => entries.flatMap((e) => [e.path as string, ...flat(e.children ?? [])]);
    return { names: flat(body.files).sort(), etag: res.headers.get('etag') ?? '' };
  };
  const empty = await names();
  assert.deepEqual(empty.names, []);
  assert.equal(empty.etag, (await names()).etag);

  assert.equal((await upload(s, fileParts('cube.gcode'))).status, 201);
  const uploaded = await names();
  assert.deepEqual(uploaded.names, ['cube.gcode']);
  assert.notEqual(uploaded.etag, empty.etag);

  assert.equal((await upload(s, [{ name: 'foldername', value: 'parts' }])).status, 201);
  assert.deepEqual((await names()).names, ['cube.gcode', 'parts']);
  const cmd = (path: string, json: Json) => s.api(`/api/files/local/${path}`, { method: 'POST', json });
  assert.equal((await cmd('cube.gcode', { command: 'copy', destination: 'parts' })).status, 201);
  assert.deepEqual((await names()).names, ['cube.gcode', 'parts', 'parts/cube.gcode']);
  assert.equal((await cmd('cube.gcode', { command: 'move', destination: 'moved.gcode' })).status, 201);
  assert.deepEqual((await names()).names, ['moved.gcode', 'parts', 'parts/cube.gcode']);
  assert.deepEqual((await names('/api/files/local?recursive=true')).names, ['moved.gcode', 'parts', 'parts/cube.gcode']);
  assert.equal((await s.api('/api/files/local/parts', { method: 'DELETE' })).status, 204);
  assert.deepEqual((await names()).names, ['moved.gcode']);
  assert.equal((await s.api('/api/files/local/moved.gcode', { method: 'DELETE' })).status, 204);
  assert.deepEqual((await names()).names, []);
});

test('a listing kept for one base URL does not answer another (reverse proxy prefix)', async (t) => {
  const s = await startTestServer(t);
  assert.equal((await upload(s, fileParts('cube.gcode'))).status, 201);
  const refOf = async (headers: Record<string, string>): Promise<string> =>
    ((await (await s.api('/api/files', { headers })).json()) as Json).files[0].refs.resource as string;
  const plain = await refOf({});
  const proxied = await refOf({ 'X-Script-Name': '/octo', 'X-Forwarded-Host': 'printer.example' });
  assert.match(plain, /^http:\/\/127\.0\.0\.1:\d+\/api\/files\/local\/cube\.gcode$/);
  assert.equal(proxied, 'http://printer.example/octo/api/files/local/cube.gcode');
  assert.equal(await refOf({}), plain);
});

test('a file dropped into the uploads folder behind the server\'s back shows at once with force, and soon without', async (t) => {
  const s = await startTestServer(t);
  const listed = async (query: string): Promise<string[]> =>
    ((await (await s.api(`/api/files${query}`)).json()) as Json).files.map((e: Json) => e.name as string);
  assert.deepEqual(await listed(''), []);
  await writeFile(join(s.baseDir, 'uploads', 'dropped.gcode'), GCODE);
  assert.deepEqual(await listed('?force=true'), ['dropped.gcode']);
  await writeFile(join(s.baseDir, 'uploads', 'later.gcode'), GCODE);
  let names: string[] = [];
  for (let i = 0; i < 100 && !names.includes('later.gcode'); i++) {
    names = await listed('');
    if (!names.includes('later.gcode')) await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(names, ['dropped.gcode', 'later.gcode']);
});

test('a listing is reused for four times what its walk took when that is over a second, then walked again', async (t) => {
  const { root, storage } = await storageIn(t);
  await writeFile(join(root, 'a.gcode'), GCODE);
  await storage.list(Infinity); // stores a.gcode's hash: this walk's own result is stale
  await storage.list(Infinity);
  // The walk below "takes" 1.5 s on a clock of the test's own: reused until 1.5 + 6 s.
  let now = 0;
  const realNow = performance.now.bind(performance);
  performance.now = () => now;
  t.after(() => { performance.now = realNow; });
  const walking = storage.list(Infinity, undefined, true);
  now = 1500;
  const walked = await walking;
  await writeFile(join(root, 'behind-its-back.gcode'), GCODE);
  now = 7400;
  assert.equal(await storage.list(Infinity), walked, 'within 4 × 1.5 s of the walk\'s end: the same listing');
  now = 7600;
  const again = await storage.list(Infinity);
  assert.notEqual(again, walked);
  assert.deepEqual(again.map((e) => e.name), ['a.gcode', 'behind-its-back.gcode']);
  assert.equal(listingReuseMs(5), LISTING_REUSE_MS, 'a small library: as before');
});

test('listings kept are bounded whatever filters clients send; the recent ones stay shared', async (t) => {
  const { root, storage } = await storageIn(t);
  await writeFile(join(root, 'a.gcode'), GCODE);
  await storage.list(Infinity);
  const kept = (): number => (storage as unknown as { listings: Map<string, unknown> }).listings.size;
  for (let i = 0; i < 200; i++) await storage.list(Infinity, `filter-${i}`);
  assert.ok(kept() <= 8, `${kept()} listings kept`);
  const recent = await storage.list(Infinity, 'filter-199');
  assert.equal(await storage.list(Infinity, 'filter-199'), recent, 'the newest is still shared');
});

test('a file\'s entry is handed out again while its content, metadata and path stay the same, and made anew after any change', async (t) => {
  const { root, storage } = await storageIn(t);
  await writeFile(join(root, 'a.gcode'), GCODE);
  await writeFile(join(root, 'b.gcode'), GCODE);
  await storage.list(Infinity); // stores the hashes
  const entryOf = async (name: string) => (await storage.list(Infinity, undefined, true)).find((e): e is StoredFile => e.kind === 'file' && e.name === name);
  const a = await entryOf('a.gcode');
  assert.ok(a);
  assert.equal(await entryOf('a.gcode'), a, 'walked again, nothing changed: the same entry');

  await storage.metadata.update(root, 'a.gcode', { display: 'A' });
  const renamed = await entryOf('a.gcode');
  assert.notEqual(renamed, a, 'metadata changed: a new entry');
  assert.equal(renamed?.display, 'A');

  // Behind the server's back: same size, another modification time (the content key).
  await utimes(join(root, 'a.gcode'), new Date(), new Date(Date.now() + 5000));
  const touched = await entryOf('a.gcode');
  assert.notEqual(touched, renamed, 'content changed: a new entry');
  assert.equal(touched?.hash, a.hash);
  const hashed = await entryOf('a.gcode'); // the walk above stored the new hash: metadata changed again
  assert.equal(await entryOf('a.gcode'), hashed, 'the same entry from then on');
  await writeFile(join(root, 'a.gcode'), `${GCODE}G1 X1\n`);
  assert.equal((await entryOf('a.gcode'))?.size, Buffer.byteLength(`${GCODE}G1 X1\n`));

  // A copy carries the same metadata object to another path: each path keeps its own entry.
  await storage.makeFolder(['dir']);
  await storage.transfer(['b.gcode'], ['dir', 'b.gcode'], 'copy');
  const listed = await storage.list(Infinity, undefined, true);
  const copy = listed.find((e) => e.name === 'dir');
  assert.equal(copy?.kind === 'folder' && copy.children[0]?.path, 'dir/b.gcode');
  assert.equal(listed.find((e) => e.name === 'b.gcode')?.path, 'b.gcode');
});

test('a listing made while an upload moves its file into place takes the upload\'s hash instead of reading the file again', async (t) => {
  const { root, storage } = await storageIn(t);
  const hash = createHash('sha1').update(GCODE).digest('hex');
  const temp = join(root, '.upload-0.tmp');
  await writeFile(temp, GCODE);
  const placed = await storage.placing(['a.gcode'], hash, temp);
  // The moment between the upload's rename and its metadata: under load a listing fell in it nearly every time.
  await rename(temp, join(root, 'a.gcode'));
  storage.changed();
  const before = storage.generation;
  assert.equal(((await storage.list(Infinity))[0] as StoredFile).hash, hash);
  assert.equal(storage.generation, before, 'no hash made (a hash made from the file is stored in its metadata)');
  placed();
  // Once placed, a file with no hash in its metadata gets one made from its content, as any file copied in by hand.
  assert.equal(((await storage.list(Infinity, undefined, true))[0] as StoredFile).hash, hash);
  assert.equal(storage.generation, before + 1, 'made from the file and stored');
});

test('content that is not what the upload announced (copied across file systems: a new mtime) is hashed from the disk', async (t) => {
  const { root, storage } = await storageIn(t);
  const temp = join(root, '.upload-0.tmp');
  await writeFile(temp, GCODE);
  const placed = await storage.placing(['a.gcode'], 'f'.repeat(40), temp);
  t.after(placed);
  await writeFile(join(root, 'a.gcode'), `${GCODE}M117 other\n`);
  await utimes(join(root, 'a.gcode'), new Date(), new Date(Date.now() + 5_000));
  storage.changed();
  assert.equal(((await storage.list(Infinity))[0] as StoredFile).hash, createHash('sha1').update(`${GCODE}M117 other\n`).digest('hex'));
});

/** Gives a file an analysis of its current content in its metadata, as the analyser leaves it. */
async function analysed(storage: LocalStorage, folder: string, name: string): Promise<void> {
  const st = await stat(join(folder, name));
  await storage.metadata.update(folder, name, { analysis: { estimatedPrintTime: 42 }, analysisKey: `${st.size}:${Math.floor(st.mtimeMs)}` });
}

/** Lists the tree afresh, again and again, until `until` settles; every listing's entries for `name`, wherever they are. */
async function listingsDuring(storage: LocalStorage, name: string, until: Promise<unknown>): Promise<StoredFile[]> {
  let done = false;
  void until.finally(() => { done = true; });
  const seen: StoredFile[] = [];
  const find = (entries: StoredEntry[]): void => {
    for (const e of entries) {
      if (e.kind === 'folder') find(e.children ?? []);
      else if (e.name === name) seen.push(e);
    }
  };
  while (!done) find(await storage.list(Infinity, undefined, true));
  await until;
  return seen;
}

test('a file being copied appears whole, with its metadata, to listings made during the copy', async (t) => {
  const { root, storage } = await storageIn(t);
  const content = Buffer.alloc(16 << 20, 'G1 X1 Y1 E0.1\n');
  await writeFile(join(root, 'big.gcode'), content);
  // Modified in the second half of a millisecond: fs.cp's preserveTimestamps rounded it up, into the next one.
  await utimes(join(root, 'big.gcode'), new Date(), 1_796_177_150.5415907);
  await storage.list(Infinity); // its hash, made and stored
  await analysed(storage, root, 'big.gcode');
  await storage.makeFolder(['copies']);
  const seen = await listingsDuring(storage, 'big.gcode', storage.transfer(['big.gcode'], ['copies', 'big.gcode'], 'copy'));
  const copies = seen.filter((e) => e.path === 'copies/big.gcode');
  assert.deepEqual(copies.filter((e) => e.size !== content.length || e.analysisMissing).map((e) => e.size), [], 'part of a file, or without its metadata');
  assert.deepEqual((await readdir(join(root, 'copies'))).sort(), ['.metadata.json', 'big.gcode'], 'no temporary file left');
  await assert.rejects(storage.transfer(['big.gcode'], ['copies', 'big.gcode'], 'copy'), { code: 'EEXIST' }, 'never over a file already there');
  assert.deepEqual((await readdir(join(root, 'copies'))).sort(), ['.metadata.json', 'big.gcode']);
});

test('a file being moved is never listed at its new place without its metadata (its analysis, its hash)', async (t) => {
  const { root, storage } = await storageIn(t);
  await writeFile(join(root, 'a.gcode'), GCODE);
  await storage.list(Infinity);
  await analysed(storage, root, 'a.gcode');
  await storage.makeFolder(['parts']);
  const seen: StoredFile[] = [];
  for (const [from, to] of [[['a.gcode'], ['parts', 'a.gcode']], [['parts', 'a.gcode'], ['a.gcode']]] as const) {
    seen.push(...(await listingsDuring(storage, 'a.gcode', storage.transfer(from, to, 'move'))));
  }
  assert.ok(seen.length > 0);
  assert.deepEqual(seen.filter((e) => e.analysisMissing || e.hash === undefined).map((e) => e.path), [], 'listed without its metadata');
});

test('a folder copied keeps what is known of its files: their analyses still match their content', async (t) => {
  const { root, storage } = await storageIn(t);
  await storage.makeFolder(['set']);
  // Times whose copies fs.cp put in the next millisecond, on Node 20 and 24 alike.
  for (const [name, mtime] of [['a.gcode', 1_796_177_150.5415907], ['b.gcode', 1_700_000_001.9996]] as const) {
    await writeFile(join(root, 'set', name), GCODE);
    await utimes(join(root, 'set', name), new Date(), mtime);
    await analysed(storage, join(root, 'set'), name);
  }
  await storage.metadata.flush();
  await storage.transfer(['set'], ['copy'], 'copy');
  const copy = (await storage.list(Infinity, undefined, true)).find((e) => e.name === 'copy') as StoredFolder;
  assert.deepEqual(copy.children.map((e) => [e.name, (e as StoredFile).analysisMissing ?? false]).sort(), [['a.gcode', false], ['b.gcode', false]]);
});
