// Every change to the uploads folder that the API acknowledges is on disk before the answer leaves: the file's content and the folder entry naming it (or no longer naming it) are synced first, seen in the built server's system calls.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, ensureBuilt, startGantryProcess } from '../helpers/built-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { needs } from '../helpers/tools.ts';

before(ensureBuilt);

/** One system call as strace -f -y logged it: where it completed in the log, and what it was. */
interface Call {
  /** Index of the line that ended the call (its own line, or its "resumed" line for a call another thread interrupted). */
  done: number;
  name: string;
  text: string;
}

/** The calls in the order they completed; strace splits a call that another thread's call interrupted into two lines. */
function parseTrace(log: string): Call[] {
  const calls: Call[] = [];
  const open = new Map<string, { name: string; text: string }>();
  log.split('\n').forEach((line, i) => {
    const m = /^(\d+)\s+(.*)$/.exec(line);
    if (!m) return;
    const [, pid, rest] = m;
    const resumed = /^<\.\.\. (\w+) resumed>(.*)$/.exec(rest);
    if (resumed) {
      const start = open.get(pid);
      open.delete(pid);
      if (start) calls.push({ done: i, name: start.name, text: start.text + resumed[2] });
      return;
    }
    const name = /^(\w+)\(/.exec(rest)?.[1];
    if (!name) return;
    if (rest.endsWith(' <unfinished ...>')) open.set(pid, { name, text: rest.slice(0, -' <unfinished ...>'.length) });
    else calls.push({ done: i, name, text: rest });
  });
  return calls.sort((a, b) => a.done - b.done);
}

/** An fsync (or fdatasync) that succeeded on a descriptor open on `path` (strace -y shows it as `fd</path>`). */
const syncOf = (c: Call, path: string): boolean => /^f(data)?sync$/.test(c.name) && c.text.startsWith(`${c.name}(`) && c.text.includes(`<${path}>)`) && / = 0$/.test(c.text);
/** Whether a call names `path`: whole, or as a name relative to a descriptor open on its folder (`*at` calls). */
function names(c: Call, path: string): boolean {
  const slash = path.lastIndexOf('/');
  return c.text.includes(`"${path}"`) || c.text.includes(`<${path.slice(0, slash)}>, "${path.slice(slash + 1)}"`);
}

/** The server writing an HTTP answer to a socket. */
const reply = (c: Call): boolean => /^write/.test(c.name) && c.text.includes('"HTTP/1.1 ');

/**
 * The first call of `names` that names `path` (in quotes: a path argument) at or after `from`, and the first answer
 * the server wrote after it: the requests are made one at a time, so that is this change's.
 */
function changeAndReply(calls: Call[], kinds: RegExp, path: string, from: number): { change: number; answer: number } {
  const change = calls.findIndex((c, i) => i >= from && kinds.test(c.name) && names(c, path) && / = 0$/.test(c.text));
  assert.ok(change >= 0, `a ${kinds.source} of ${path} in the trace`);
  const answer = calls.findIndex((c, i) => i > change && reply(c));
  assert.ok(answer > change, `an answer after the ${calls[change].name} of ${path}`);
  return { change, answer };
}

function assertSynced(calls: Call[], from: number, to: number, path: string, what: string): void {
  assert.ok(calls.slice(from, to).some((c) => syncOf(c, path)), `${what}: ${path} synced between the change and the answer\n${calls.slice(from, to).map((c) => `${c.name}: ${c.text}`).join('\n')}`);
}

test('uploads, new folders, copies, moves and deletions are synced to disk before the API answers', { skip: needs('strace') }, async (t) => {
  const base = await tempDir(t, 'gantry-durable-');
  const traceLog = join(base, 'trace.log');
  const uploads = join(base, 'uploads');
  // Only the calls looked at below are stopped for (seccomp filter): the server runs near its own speed.
  const g = await startGantryProcess('strace', [
    '-f', '-y', '-qq', '--seccomp-bpf', '-s', '24', '-o', traceLog,
    '-e', 'trace=rename,renameat,renameat2,link,linkat,mkdir,mkdirat,unlink,unlinkat,rmdir,fsync,fdatasync,write,writev',
    process.execPath, join(ROOT, 'dist/cli.js'), 'serve', '--port', '0', '--basedir', base,
  // libuv may do file calls through io_uring where the kernel has it: strace would not see them.
  ], { UV_USE_IO_URING: '0' });
  const server = Number((await readFile(`/proc/${g.child.pid}/task/${g.child.pid}/children`, 'utf8')).trim().split(' ')[0]);
  // SIGTERM to strace would only detach it: the server is stopped, and strace ends with it.
  const stop = async () => {
    if (g.child.exitCode === null) process.kill(server, 'SIGTERM');
    await g.stop();
  };
  t.after(stop);
  const api = (path: string, init: RequestInit = {}) => fetch(`${g.url}${path}`, { ...init, headers: { 'X-Api-Key': g.apiKey, ...(init.headers as Record<string, string>) } });
  const json = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const expect = async (res: Promise<Response>, status: number) => {
    const r = await res;
    assert.equal(r.status, status, await r.text());
  };

  const form = new FormData();
  form.set('file', new Blob(['G28\nG1 X10 Y10 F3000\n']), 'a.gcode');
  await expect(api('/api/files/local', { method: 'POST', body: form }), 201);
  const folder = (name: string) => {
    const f = new FormData();
    f.set('foldername', name);
    return api('/api/files/local', { method: 'POST', body: f });
  };
  await expect(folder('sub'), 201);
  await expect(folder('other'), 201);
  await expect(api('/api/files/local/a.gcode', json({ command: 'copy', destination: 'sub' })), 201);
  await expect(api('/api/files/local/a.gcode', json({ command: 'move', destination: 'other' })), 201);
  await expect(api('/api/files/local/sub', json({ command: 'copy', destination: 'subcopy' })), 201);
  await expect(api('/api/files/local/sub/a.gcode', { method: 'DELETE' }), 204);
  await expect(api('/api/files/local/subcopy', { method: 'DELETE' }), 204);
  await stop();
  const calls = parseTrace(await readFile(traceLog, 'utf8'));

  // The upload: its temp file's content, then the entry renaming it into place.
  let at = changeAndReply(calls, /^rename/, join(uploads, 'a.gcode'), 0);
  const temp = /"([^"]*\/\.upload-[0-9a-f]+\.tmp)"/.exec(calls[at.change].text)![1];
  assertSynced(calls, 0, at.change, temp, 'the uploaded content before its name appears');
  assertSynced(calls, at.change, at.answer, uploads, 'the upload');
  // New folders.
  at = changeAndReply(calls, /^mkdir/, join(uploads, 'sub'), at.answer);
  assertSynced(calls, at.change, at.answer, uploads, 'a new folder');
  at = changeAndReply(calls, /^mkdir/, join(uploads, 'other'), at.answer);
  // A file copied: the copy's content under its hidden name, then its link into place.
  const copyStart = at.answer;
  at = changeAndReply(calls, /^(link|rename)/, join(uploads, 'sub/a.gcode'), copyStart);
  const copyTemp = /"([^"]*\/\.upload-[0-9a-f]+\.tmp)"/.exec(calls[at.change].text)![1];
  assertSynced(calls, copyStart, at.change, copyTemp, 'the copied content before its name appears');
  assertSynced(calls, at.change, at.answer, join(uploads, 'sub'), 'a file copied');
  // A file moved: the folder it went to and the one it left.
  at = changeAndReply(calls, /^rename/, join(uploads, 'other/a.gcode'), at.answer);
  assertSynced(calls, at.change, at.answer, join(uploads, 'other'), 'a file moved (its new folder)');
  assertSynced(calls, at.change, at.answer, uploads, 'a file moved (the folder it left)');
  // A folder copied: the files in it, the new folder, and its entry in the parent.
  at = changeAndReply(calls, /^mkdir/, join(uploads, 'subcopy'), at.answer);
  assertSynced(calls, at.change, at.answer, join(uploads, 'subcopy/a.gcode'), 'a folder copied (a file in it)');
  assertSynced(calls, at.change, at.answer, join(uploads, 'subcopy'), 'a folder copied (the folder)');
  assertSynced(calls, at.change, at.answer, uploads, 'a folder copied (its entry)');
  // Deletions.
  at = changeAndReply(calls, /^unlink/, join(uploads, 'sub/a.gcode'), at.answer);
  assertSynced(calls, at.change, at.answer, join(uploads, 'sub'), 'a file deleted');
  at = changeAndReply(calls, /^rmdir|^unlinkat/, join(uploads, 'subcopy'), at.answer);
  assertSynced(calls, at.change, at.answer, uploads, 'a folder deleted');
});
