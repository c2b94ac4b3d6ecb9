// Language packs API: upload of zip, tar.gz, tgz and tar archives built here, listing with metadata, delete, and hostile archives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { create as tarCreate } from 'tar';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { zipOf } from '../helpers/zip.ts';

const run = promisify(execFile);

interface Lang { locale: string; locale_display: string; locale_english: string; last_update?: number; author?: string }
interface Listing { language_packs: Record<string, { identifier: string; display: string; name: string; languages: Lang[] }> }

/** A pack tree on disk: core `de` (with meta.yaml) and plugin `myplugin` / `fr`. */
async function packTree(dir: string, author = 'Jane Translator'): Promise<void> {
  await mkdir(join(dir, 'de', 'LC_MESSAGES'), { recursive: true });
  await writeFile(join(dir, 'de', 'LC_MESSAGES', 'messages.mo'), 'mo-bytes-de');
  await writeFile(join(dir, 'de', 'meta.yaml'), `last_update: 2023-05-04T10:20:30Z\nauthor: ${author}\n`);
  await mkdir(join(dir, '_plugins', 'myplugin', 'fr', 'LC_MESSAGES'), { recursive: true });
  await writeFile(join(dir, '_plugins', 'myplugin', 'fr', 'LC_MESSAGES', 'messages.mo'), 'mo-bytes-fr');
}

async function upload(s: TestServer, data: Buffer, filename: string): Promise<Response> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(data)]), filename);
  return s.api('/api/languages', { method: 'POST', body: form });
}

async function leftovers(s: TestServer): Promise<string[]> {
  return (await readdir(s.paths.translations)).filter((n) => n.startsWith('.'));
}

test('each archive type installs; the list carries locale names and the packs\' own metadata', async (t) => {
  const s = await startTestServer(t);
  const work = await tempDir(t, 'gantry-packs-');
  const tree = join(work, 'tree');
  await packTree(tree);

  const zip = await zipOf([
    { name: 'de/LC_MESSAGES/messages.mo', data: 'mo-bytes-de' },
    { name: 'de/meta.yaml', data: 'last_update: 2023-05-04T10:20:30Z\nauthor: Jane Translator\n' },
    { name: '_plugins/myplugin/fr/LC_MESSAGES/messages.mo', data: 'mo-bytes-fr' },
  ]);
  await tarCreate({ file: join(work, 'p.tar.gz'), gzip: true, cwd: tree }, ['de', '_plugins']);
  await tarCreate({ file: join(work, 'p.tgz'), gzip: true, cwd: tree }, ['de', '_plugins']);
  await tarCreate({ file: join(work, 'p.tar'), cwd: tree }, ['de', '_plugins']);
  const archives: Array<[string, Buffer]> = [['pack.zip', zip], ['pack.tar.gz', await readFile(join(work, 'p.tar.gz'))],
    ['pack.tgz', await readFile(join(work, 'p.tgz'))], ['pack.tar', await readFile(join(work, 'p.tar'))]];

  for (const [name, data] of archives) {
    await rm(join(s.paths.translations, 'de'), { recursive: true, force: true });
    await rm(join(s.paths.translations, '_plugins'), { recursive: true, force: true });
    const res = await upload(s, data, name);
    assert.equal(res.status, 200, `${name}: ${await res.clone().text()}`);
    const body = await res.json() as Listing;
    const core = body.language_packs._core;
    assert.equal(core.identifier, '_core');
    assert.equal(core.display, 'Core');
    assert.equal(core.name, 'Core');
    assert.deepEqual(core.languages, [{ locale: 'de', locale_display: 'Deutsch', locale_english: 'German',
      last_update: Date.UTC(2023, 4, 4, 10, 20, 30) / 1000, author: 'Jane Translator' }], name);
    assert.deepEqual(body.language_packs.myplugin.languages.map((l) => [l.locale, l.locale_english]), [['fr', 'French']]);
    assert.equal(await readFile(join(s.paths.translations, 'de', 'LC_MESSAGES', 'messages.mo'), 'utf8'), 'mo-bytes-de');
    assert.equal(await readFile(join(s.paths.translations, '_plugins', 'myplugin', 'fr', 'LC_MESSAGES', 'messages.mo'), 'utf8'), 'mo-bytes-fr');
    assert.deepEqual(await leftovers(s), [], name);
  }
  assert.deepEqual(await (await s.api('/api/languages')).json(), await (await s.api('/api/languages')).json());
});

test('a new upload replaces the installed locale; delete removes core and plugin packs', async (t) => {
  const s = await startTestServer(t);
  const first = await zipOf([{ name: 'de/LC_MESSAGES/messages.mo', data: 'v1' }, { name: 'de/LC_MESSAGES/old.mo', data: 'stale' },
    { name: 'pt_BR/LC_MESSAGES/messages.mo', data: 'pt' }, { name: '_plugins/myplugin/fr/LC_MESSAGES/messages.mo', data: 'fr' }]);
  assert.equal((await upload(s, first, 'first.zip')).status, 200);
  const second = await zipOf([{ name: 'de/LC_MESSAGES/messages.mo', data: 'v2' }]);
  const res = await upload(s, second, 'second.zip');
  assert.equal(res.status, 200);
  assert.equal(await readFile(join(s.paths.translations, 'de', 'LC_MESSAGES', 'messages.mo'), 'utf8'), 'v2');
  assert.equal(await stat(join(s.paths.translations, 'de', 'LC_MESSAGES', 'old.mo')).catch(() => undefined), undefined);
  const listed = (await res.json() as Listing).language_packs._core.languages;
  assert.deepEqual(listed.map((l) => l.locale), ['de', 'pt_BR']);
  assert.equal(listed[1].locale_english, 'Brazilian Portuguese');

  const del = await s.api('/api/languages/de/_core', { method: 'DELETE' });
  assert.equal(del.status, 200);
  assert.deepEqual((await del.json() as Listing).language_packs._core.languages.map((l) => l.locale), ['pt_BR']);
  const delPlugin = await s.api('/api/languages/fr/myplugin', { method: 'DELETE' });
  assert.equal(delPlugin.status, 200);
  assert.equal((await delPlugin.json() as Listing).language_packs.myplugin, undefined);
  assert.equal((await s.api('/api/languages/de/_core', { method: 'DELETE' })).status, 404);
  assert.equal((await s.api('/api/languages/..%2F..%2Fconfig.yaml/_core', { method: 'DELETE' })).status, 400);
  assert.equal((await s.api('/api/languages/de/%20evil', { method: 'DELETE' })).status, 400);
  const long = await s.api(`/api/languages/${'x'.repeat(90)}/_core`, { method: 'DELETE' });
  assert.equal(long.status, 400);
  assert.deepEqual(await long.json(), { error: `Invalid locale: "${'x'.repeat(78)}…` }, 'the refused value quoted, cut short');
  assert.ok(await stat(s.paths.config));
});

test('hostile or unsuitable archives are refused and leave nothing behind', async (t) => {
  const s = await startTestServer(t);
  const work = await tempDir(t, 'gantry-evil-');

  // zip-slip: yazl refuses to write `..`, so write a same-length name and patch it in (local header and central directory).
  const slipRaw = await zipOf([{ name: 'de/meta.yaml', data: 'author: x\n' }, { name: 'zz/zzzzzzzzz.txt', data: 'owned' }]);
  const slip = Buffer.from(slipRaw.toString('latin1').replaceAll('zz/zzzzzzzzz.txt', '../../evil01.txt'), 'latin1');
  const absolute = Buffer.from((await zipOf([{ name: 'de/x', data: '' }, { name: 'tm/zzzzzzzz.txt', data: 'owned' }]))
    .toString('latin1').replaceAll('tm/zzzzzzzz.txt', '/tmp/evil02.txt'), 'latin1');
  const zipLink = await zipOf([{ name: 'de/LC_MESSAGES/messages.mo', data: '/etc/passwd', mode: 0o120777 }]);
  const bomb = await zipOf([{ name: 'de/LC_MESSAGES/messages.mo', data: Buffer.alloc(60 * 1024 * 1024) }]);
  const manyEntries = await zipOf(Array.from({ length: 2100 }, (_, i) => ({ name: `de/f${i}.txt`, data: 'x' })));
  const noPack = await zipOf([{ name: 'README/notes.txt', data: 'hello' }]);

  // tar: a `..` member (GNU tar keeps it with -P), a symlink, and a hard link.
  await mkdir(join(work, 'src', 'de'), { recursive: true });
  await writeFile(join(work, 'outside.txt'), 'owned');
  await writeFile(join(work, 'src', 'de', 'real.mo'), 'mo');
  await run('tar', ['-P', '-C', join(work, 'src'), '-cf', join(work, 'slip.tar'), 'de', '../outside.txt']);
  await symlink('/etc/passwd', join(work, 'src', 'de', 'link.mo'));
  await run('tar', ['-C', join(work, 'src'), '-czf', join(work, 'link.tgz'), 'de']);
  await rm(join(work, 'src', 'de', 'link.mo'));
  await run('tar', ['-C', join(work, 'src'), '--hard-dereference', '-cf', join(work, 'plain.tar'), 'de']);
  await run('ln', [join(work, 'src', 'de', 'real.mo'), join(work, 'src', 'de', 'hard.mo')]);
  await run('tar', ['-C', join(work, 'src'), '-cf', join(work, 'hard.tar'), 'de']);

  // A gzip bomb: 60 MiB of zeros (a sparse file) compress to a few dozen KiB.
  await mkdir(join(work, 'bomb', 'de'), { recursive: true });
  await run('truncate', ['-s', '60M', join(work, 'bomb', 'de', 'big.mo')]);
  await run('tar', ['-C', join(work, 'bomb'), '-czf', join(work, 'bomb.tgz'), 'de']);

  const cases: Array<[string, Buffer, number]> = [
    ['bomb.tgz', await readFile(join(work, 'bomb.tgz')), 400],
    ['slip.zip', slip, 400], ['absolute.zip', absolute, 400], ['link.zip', zipLink, 400], ['bomb.zip', bomb, 400],
    ['many.zip', manyEntries, 400], ['nopack.zip', noPack, 400],
    ['slip.tar', await readFile(join(work, 'slip.tar')), 400], ['link.tgz', await readFile(join(work, 'link.tgz')), 400],
    ['hard.tar', await readFile(join(work, 'hard.tar')), 400],
    ['garbage.tar.gz', Buffer.from('this is not gzip at all'), 400], ['garbage.zip', Buffer.from('PK nope'), 400],
    ['pack.rar', Buffer.from('Rar!'), 400], ['pack.7z', Buffer.from('7z'), 400],
    ['huge.zip', Buffer.alloc(6 * 1024 * 1024, 1), 413],
  ];
  for (const [name, data, status] of cases) {
    const res = await upload(s, data, name);
    assert.equal(res.status, status, `${name}: ${await res.clone().text()}`);
    assert.ok((await res.json() as { error: string }).error, name);
    assert.deepEqual(await readdir(s.paths.translations), [], `${name} left something behind`);
  }
  for (const p of [join(s.baseDir, 'evil01.txt'), join(s.paths.translations, '..', '..', 'evil01.txt'), '/tmp/evil02.txt',
    join(s.baseDir, 'outside.txt'), join(s.paths.translations, '..', 'outside.txt')]) {
    assert.equal(await stat(p).catch(() => undefined), undefined, `${p} must not exist`);
  }
  const wrongField = new FormData();
  wrongField.append('pack', new Blob([new Uint8Array(await zipOf([{ name: 'de/a.mo', data: 'x' }]))]), 'pack.zip');
  assert.equal((await s.api('/api/languages', { method: 'POST', body: wrongField })).status, 400);
  assert.equal((await s.api('/api/languages', { method: 'POST', json: { file: 'pack.zip' } })).status, 400);
  assert.deepEqual(await readdir(s.paths.translations), []);
  // The same tree without links installs fine, so the refusals above were about the hostile parts.
  assert.equal((await upload(s, await readFile(join(work, 'plain.tar')), 'plain.tar')).status, 200);
});

test('language endpoints need SETTINGS', async (t) => {
  const s = await startTestServer(t);
  await s.access.users.addUser({ name: 'u', password: 'secret-pass-4', groups: ['users'] });
  const key = await s.access.users.generateUserKey('u');
  assert.equal((await s.api('/api/languages', { key })).status, 403);
  assert.equal((await s.api('/api/languages/de/_core', { key, method: 'DELETE' })).status, 403);
  assert.equal((await s.api('/api/languages', { key: null })).status, 403);
});

test('the same pack uploaded eight times at once installs eight times in turn; eight deletes at once: one 200, the rest 404', async (t) => {
  const s = await startTestServer(t);
  const zip = await zipOf([{ name: 'de/LC_MESSAGES/messages.mo', data: 'v1' }]);
  // Before, six of them answered 500: each renamed its folder into place where another had just put one.
  const uploads = await Promise.all(Array.from({ length: 8 }, () => upload(s, zip, 'pack.zip')));
  assert.deepEqual(uploads.map((r) => r.status), Array<number>(8).fill(200));
  assert.equal(await readFile(join(s.paths.translations, 'de', 'LC_MESSAGES', 'messages.mo'), 'utf8'), 'v1');
  assert.deepEqual(await leftovers(s), [], 'no work folders left behind');
  const deletes = await Promise.all(Array.from({ length: 8 }, () => s.api('/api/languages/de/_core', { method: 'DELETE' })));
  assert.deepEqual(deletes.map((r) => r.status).sort(), [200, ...Array<number>(7).fill(404)]);
  await assert.rejects(stat(join(s.paths.translations, 'de')), { code: 'ENOENT' });
});
