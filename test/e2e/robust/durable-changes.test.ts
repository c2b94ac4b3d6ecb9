// What the API acknowledges is on disk before the answer leaves, and a rendered movie before its frames go: contents and the folder entries naming them (or no longer naming them) are synced first, seen in the built server's system calls.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readdir } from 'node:fs/promises';
import { dirname, relative } from 'node:path';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureBuilt } from '../../helpers/built-server.ts';
import { assertSynced, findChange, findRenameTo, isReply, startTracedServer, traceCommand, type Call } from '../../helpers/syscall-trace.ts';
import { FIXTURE_DIR, SKIP as NO_FIXTURE } from '../../import/helpers.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { needs } from '../../helpers/tools.ts';
import { waitFor } from '../../helpers/wait.ts';
import { zipOf } from '../../helpers/zip.ts';

before(ensureBuilt);

const TRACE = ['rename', 'renameat', 'renameat2', 'link', 'linkat', 'mkdir', 'mkdirat', 'unlink', 'unlinkat', 'rmdir', 'fsync', 'fdatasync', 'write', 'writev'];
const json = (body: unknown, method = 'POST'): RequestInit => ({ method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

async function expectStatus(res: Promise<Response>, status: number): Promise<void> {
  const r = await res;
  assert.equal(r.status, status, await r.text());
}

/** The change of `kinds` naming `path` at or after `from`, and the answer that acknowledged it: requests are made one at a time, so the first answer after it. */
function changeAndReply(calls: Call[], kinds: RegExp, path: string, from: number): { change: number; answer: number } {
  const change = findChange(calls, kinds, path, from);
  const answer = calls.findIndex((c, i) => i > change && isReply(c));
  assert.ok(answer > change, `an answer after the ${calls[change].name} of ${path}`);
  return { change, answer };
}

/** The hidden temp file an upload or a copy was renamed or linked from. */
const tempOf = (c: Call): string => /"([^"]*\/\.upload-[0-9a-f]+\.tmp)"/.exec(c.text)![1];

test('uploads, new folders, copies, moves and deletions are synced to disk before the API answers', { skip: needs('strace') }, async (t) => {
  const base = await tempDir(t, 'gantry-durable-');
  const uploads = join(base, 'uploads');
  const s = await startTracedServer(base, TRACE);
  t.after(s.stop);

  const form = new FormData();
  form.set('file', new Blob(['G28\nG1 X10 Y10 F3000\n']), 'a.gcode');
  await expectStatus(s.api('/api/files/local', { method: 'POST', body: form }), 201);
  const folder = (name: string) => {
    const f = new FormData();
    f.set('foldername', name);
    return s.api('/api/files/local', { method: 'POST', body: f });
  };
  await expectStatus(folder('sub'), 201);
  await expectStatus(folder('other'), 201);
  await expectStatus(s.api('/api/files/local/a.gcode', json({ command: 'copy', destination: 'sub' })), 201);
  await expectStatus(s.api('/api/files/local/a.gcode', json({ command: 'move', destination: 'other' })), 201);
  await expectStatus(s.api('/api/files/local/sub', json({ command: 'copy', destination: 'subcopy' })), 201);
  await expectStatus(s.api('/api/files/local/sub/a.gcode', { method: 'DELETE' }), 204);
  await expectStatus(s.api('/api/files/local/subcopy', { method: 'DELETE' }), 204);
  const calls = await s.calls();

  // The upload: its temp file's content, then the entry renaming it into place.
  let at = changeAndReply(calls, /^rename/, join(uploads, 'a.gcode'), 0);
  assertSynced(calls, 0, at.change, tempOf(calls[at.change]), 'the uploaded content before its name appears');
  assertSynced(calls, at.change, at.answer, uploads, 'the upload');
  // New folders.
  at = changeAndReply(calls, /^mkdir/, join(uploads, 'sub'), at.answer);
  assertSynced(calls, at.change, at.answer, uploads, 'a new folder');
  at = changeAndReply(calls, /^mkdir/, join(uploads, 'other'), at.answer);
  // A file copied: the copy's content under its hidden name, then its link into place.
  const copyStart = at.answer;
  at = changeAndReply(calls, /^(link|rename)/, join(uploads, 'sub/a.gcode'), copyStart);
  assertSynced(calls, copyStart, at.change, tempOf(calls[at.change]), 'the copied content before its name appears');
  assertSynced(calls, at.change, at.answer, join(uploads, 'sub'), 'a file copied');
  // A file moved: the folder it went to and the one it left.
  at = changeAndReply(calls, /^rename/, join(uploads, 'other/a.gcode'), at.answer);
  assertSynced(calls, at.change, at.answer, join(uploads, 'other'), 'a file moved (its new folder)');
  assertSynced(calls, at.change, at.answer, uploads, 'a file moved (the folder it left)');
  // A folder copied: made under a hidden name, the files in it and the folder synced, then renamed into place.
  const folderCopyStart = at.answer;
  at = changeAndReply(calls, /^rename/, join(uploads, 'subcopy'), folderCopyStart);
  const folderTemp = tempOf(calls[at.change]);
  assertSynced(calls, folderCopyStart, at.change, join(folderTemp, 'a.gcode'), 'a folder copied (a file in it)');
  assertSynced(calls, folderCopyStart, at.change, folderTemp, 'a folder copied (the folder)');
  assertSynced(calls, at.change, at.answer, uploads, 'a folder copied (its entry)');
  // Deletions.
  at = changeAndReply(calls, /^unlink/, join(uploads, 'sub/a.gcode'), at.answer);
  assertSynced(calls, at.change, at.answer, join(uploads, 'sub'), 'a file deleted');
  at = changeAndReply(calls, /^rmdir|^unlinkat/, join(uploads, 'subcopy'), at.answer);
  assertSynced(calls, at.change, at.answer, uploads, 'a folder deleted');
});

test('a rendered movie is on disk before its frames are deleted; deleted movies, profiles and logs stay deleted', { skip: needs('strace') || needs('ffmpeg') }, async (t) => {
  const base = await tempDir(t, 'gantry-durable-');
  const movies = join(base, 'timelapse');
  const frames = join(movies, 'tmp');
  await mkdir(frames, { recursive: true });
  await promisify(execFile)('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=4',
    '-frames:v', '4', '-start_number', '0', join(frames, 'job-%d.jpg')]);
  const s = await startTracedServer(base, TRACE);
  t.after(s.stop);

  await expectStatus(s.api('/api/settings', json({ webcam: { ffmpegPath: '/usr/bin/ffmpeg' } })), 200);
  await expectStatus(s.api('/api/timelapse/unrendered/job', json({ command: 'render' })), 204);
  await waitFor('the frames to be deleted after the render', async () => !(await readdir(frames)).some((n) => n.startsWith('job-')), 60_000);
  await expectStatus(s.api('/api/timelapse/job.mp4', { method: 'DELETE' }), 200);
  await expectStatus(s.api('/api/printerprofiles', json({ profile: { id: 'spare', name: 'Spare' } })), 200);
  await expectStatus(s.api('/api/printerprofiles/spare', { method: 'DELETE' }), 204);
  await expectStatus(s.api('/api/slicing/prusaslicer/profiles/draft', json({ data: { layer_height: 0.3 } }, 'PUT')), 201);
  await expectStatus(s.api('/api/slicing/prusaslicer/profiles/draft', { method: 'DELETE' }), 204);
  const logs = ((await (await s.api('/api/logs')).json()) as { files: { name: string }[] }).files.map((f) => f.name);
  assert.ok(logs.length > 0, 'a log file to delete');
  await expectStatus(s.api(`/api/logs/${encodeURIComponent(logs[0])}`, { method: 'DELETE' }), 204);
  const calls = await s.calls();

  const placed = findChange(calls, /^rename/, join(movies, 'job.mp4'));
  const firstFrameGone = findChange(calls, /^unlink/, join(frames, 'job-0.jpg'));
  assertSynced(calls, 0, placed, join(movies, '.job.mp4'), 'the movie before its name appears');
  assertSynced(calls, placed, firstFrameGone, movies, 'the movie in its folder before the frames go');

  let at = changeAndReply(calls, /^unlink/, join(movies, 'job.mp4'), firstFrameGone);
  assertSynced(calls, at.change, at.answer, movies, 'a movie deleted');
  at = changeAndReply(calls, /^unlink/, join(base, 'printerProfiles/spare.profile'), at.answer);
  assertSynced(calls, at.change, at.answer, join(base, 'printerProfiles'), 'a printer profile deleted');
  at = changeAndReply(calls, /^unlink/, join(base, 'slicingProfiles/prusaslicer/draft.profile'), at.answer);
  assertSynced(calls, at.change, at.answer, join(base, 'slicingProfiles/prusaslicer'), 'a slicing profile deleted');
  at = changeAndReply(calls, /^unlink/, join(base, 'logs', logs[0]), at.answer);
  assertSynced(calls, at.change, at.answer, join(base, 'logs'), 'a log file deleted');
});

test('a language pack is on disk before it replaces the installed one, and stays deleted once deleted', { skip: needs('strace') }, async (t) => {
  const base = await tempDir(t, 'gantry-durable-');
  const translations = join(base, 'translations');
  const s = await startTracedServer(base, TRACE);
  t.after(s.stop);
  const pack = async (text: string) => {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(await zipOf([{ name: 'de/LC_MESSAGES/messages.mo', data: text }, { name: '_plugins/myplugin/fr/LC_MESSAGES/messages.mo', data: text }]))]), 'pack.zip');
    return s.api('/api/languages', { method: 'POST', body: form });
  };
  await expectStatus(pack('first'), 200);
  await expectStatus(pack('second'), 200);
  await expectStatus(s.api('/api/languages/fr/myplugin', { method: 'DELETE' }), 200);
  const calls = await s.calls();

  let from = 0;
  for (const round of ['first install', 'replacement']) {
    // One request: the plugin's locale is moved in first (its folder sorts first), then the core one, then the answer.
    const plugin = findRenameTo(calls, join(translations, '_plugins/myplugin/fr'), from);
    const core = findRenameTo(calls, join(translations, 'de'), plugin.at);
    const answer = calls.findIndex((c, i) => i > core.at && isReply(c));
    assertSynced(calls, from, plugin.at, join(plugin.source, 'LC_MESSAGES/messages.mo'), `${round}: the plugin pack's file before it is put in place`);
    assertSynced(calls, from, plugin.at, join(core.source, 'LC_MESSAGES/messages.mo'), `${round}: the core pack's file before it is put in place`);
    for (const folder of [join(translations, '_plugins/myplugin'), join(translations, '_plugins')]) {
      assertSynced(calls, plugin.at, core.at, folder, `${round}: ${folder}`);
    }
    // The replaced version goes with the work folder, after the new one is in place on disk.
    const oldGone = calls.findIndex((c, i) => i > core.at && /^(unlink|rmdir)/.test(c.name) && /\/old-[0-9a-f]+/.test(c.text));
    assertSynced(calls, core.at, round === 'replacement' ? oldGone : answer, translations, `${round}: the core pack in place before the answer and the old version's removal`);
    from = answer;
  }
  const deleted = changeAndReply(calls, /^rmdir|^unlinkat/, join(translations, '_plugins/myplugin/fr'), from);
  assertSynced(calls, deleted.change, deleted.answer, join(translations, '_plugins/myplugin'), 'a deleted pack');
});

test('an import from OctoPrint is on disk before it takes the base dir\'s place, and the swap before the previous base dir goes', { skip: needs('strace') || NO_FIXTURE }, async (t) => {
  const parent = await tempDir(t, 'gantry-durable-import-');
  const baseDir = join(parent, 'gantry');
  const tree = async () => (await readdir(baseDir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => relative(baseDir, join(e.parentPath, e.name)));
  for (const merge of [false, true]) {
    const run = await traceCommand(['import-octoprint', '--from', FIXTURE_DIR, '--basedir', baseDir, ...(merge ? ['--merge'] : [])], TRACE, join(parent, `trace-${merge}.log`));
    assert.equal(run.code, 0, run.output);
    const { calls } = run;
    const { at: swapped, source: staging } = findRenameTo(calls, baseDir);
    assert.match(staging, /\.gantry\.import-/, calls[swapped].text);
    const files = await tree();
    assert.ok(files.length > 10, `the import wrote files: ${files.join(', ')}`);
    for (const f of files) assertSynced(calls, 0, swapped, join(staging, f), `${merge ? 'merge' : 'import'}: ${f} before the swap`);
    assertSynced(calls, 0, swapped, staging, `${merge ? 'merge' : 'import'}: the staging folder before the swap`);
    // After the swap, before the end (a merge: before the previous base dir is removed).
    const previousGone = merge ? calls.findIndex((c, i) => i > swapped && /^(unlink|rmdir)/.test(c.name) && c.text.includes('.gantry.replaced-')) : calls.length;
    assert.ok(previousGone > swapped, 'the previous base dir removed after the swap');
    assertSynced(calls, swapped, previousGone, dirname(baseDir), `${merge ? 'merge' : 'import'}: the swap`);
  }
});
