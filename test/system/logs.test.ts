// Logs API: listing with refs and free space, download, delete (also of the live log), admin only, no way out of the folder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, rm, rmdir, writeFile, stat, symlink } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { waitFor, waitForFile } from '../helpers/wait.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { CURRENT_LOG, LOG_PRESENCE_CHECK_MS, LOG_RETRY_MS, ReopenableLogStream } from '../../src/system/log-files.ts';

interface LogList { files: Array<{ name: string; size: number; date: number; refs: { resource: string; download: string } }>; free: number }

async function list(s: TestServer): Promise<LogList> {
  const res = await s.api('/api/logs');
  assert.equal(res.status, 200);
  return res.json() as Promise<LogList>;
}

/** Sends the path exactly as written (fetch would normalise `..` segments away). */
function rawRequest(s: TestServer, method: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${s.url}/`, { method, path, headers: { 'X-Api-Key': s.apiKey } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('lists log files with absolute refs and free space; downloads them', async (t) => {
  const s = await startTestServer(t);
  await writeFile(join(s.paths.logs, 'serial.log'), 'Send: M105\nRecv: ok T:20\n');
  const body = await list(s);
  assert.equal(typeof body.free, 'number');
  assert.ok(body.free > 0);
  const serial = body.files.find((f) => f.name === 'serial.log');
  assert.ok(serial, 'serial.log listed');
  assert.equal(serial.size, 25);
  assert.ok(Math.abs(serial.date - Date.now() / 1000) < 600);
  assert.equal(serial.refs.resource, `${s.url}/api/logs/serial.log`);
  assert.equal(serial.refs.download, `${s.url}/downloads/logs/serial.log`);
  assert.ok(body.files.some((f) => f.name === 'gantry.log'));

  const dl = await fetch(serial.refs.download, { headers: { 'X-Api-Key': s.apiKey } });
  assert.equal(dl.status, 200);
  assert.equal(await dl.text(), 'Send: M105\nRecv: ok T:20\n');
  assert.equal((await s.api('/downloads/logs/missing.log')).status, 404);

  const plugin = await s.api('/plugin/logging/logs');
  assert.equal(plugin.status, 200);
  const viaPlugin = (await plugin.json() as LogList).files.find((f) => f.name === 'serial.log');
  assert.equal(viaPlugin?.refs.resource, `${s.url}/plugin/logging/logs/serial.log`);
  assert.equal((await s.api('/plugin/logging/logs/serial.log', { method: 'DELETE' })).status, 204);
  assert.equal(await stat(join(s.paths.logs, 'serial.log')).catch(() => undefined), undefined);
});

test('non-admins get 403 on every log operation', async (t) => {
  const s = await startTestServer(t);
  await s.access.users.addUser({ name: 'op', password: 'secret-pass-3', groups: ['users'] });
  const key = await s.access.users.generateUserKey('op');
  assert.equal((await s.api('/api/logs', { key })).status, 403);
  assert.equal((await s.api('/api/logs/gantry.log', { key, method: 'DELETE' })).status, 403);
  assert.equal((await s.api('/downloads/logs/gantry.log', { key })).status, 403);
  assert.equal((await s.api('/api/logs', { key: null })).status, 403);
});

test('deletes a log file with 204; unknown names are 404', async (t) => {
  const s = await startTestServer(t);
  await writeFile(join(s.paths.logs, 'old.log'), 'x');
  const res = await s.api('/api/logs/old.log', { method: 'DELETE' });
  assert.equal(res.status, 204);
  assert.equal(await res.text(), '');
  assert.equal(await stat(join(s.paths.logs, 'old.log')).catch(() => undefined), undefined);
  assert.ok(!(await list(s)).files.some((f) => f.name === 'old.log'));
  assert.equal((await s.api('/api/logs/old.log', { method: 'DELETE' })).status, 404);
});

test('no name reaches outside the logs folder', async (t) => {
  const s = await startTestServer(t);
  const secret = join(s.baseDir, 'secret.txt');
  await writeFile(secret, 'top secret');
  // A symlink inside the folder pointing out of it is not a log file either.
  await symlink(secret, join(s.paths.logs, 'link.log'));
  const attempts = [
    '/downloads/logs/..%2Fsecret.txt', '/downloads/logs/%2E%2E%2Fsecret.txt', '/downloads/logs/..%5Csecret.txt',
    '/downloads/logs/../secret.txt', `/downloads/logs/${encodeURIComponent(secret)}`, '/downloads/logs/link.log',
    '/downloads/logs/..', '/downloads/logs/%2e%2e',
  ];
  for (const path of attempts) {
    const res = await rawRequest(s, 'GET', path);
    assert.ok(res.status >= 400 && res.status < 500, `${path} → ${res.status}`);
    assert.doesNotMatch(res.body, /top secret/, path);
  }
  for (const path of ['/api/logs/..%2Fsecret.txt', '/api/logs/%2E%2E%2Fsecret.txt', `/api/logs/${encodeURIComponent(secret)}`,
    '/api/logs/..', '/api/logs/%2e%2e', '/api/logs/link.log', '/api/logs/..%5Csecret.txt']) {
    const res = await rawRequest(s, 'DELETE', path);
    assert.ok(res.status >= 400 && res.status < 500, `${path} → ${res.status}`);
  }
  assert.equal(await readFile(secret, 'utf8'), 'top secret');
  assert.ok(!(await list(s)).files.some((f) => f.name === 'link.log'), 'symlinks are not listed');
});

test('the current gantry.log can be deleted and logging carries on into a new gantry.log', async (t) => {
  const s = await startTestServer(t);
  const current = join(s.paths.logs, 'gantry.log');
  await waitFor('gantry.log', async () => (await stat(current).catch(() => undefined)) !== undefined);
  const res = await s.api('/api/logs/gantry.log', { method: 'DELETE' });
  assert.equal(res.status, 204);
  s.logger.info({ probe: 'after-delete-marker' }, 'still logging');
  await waitFor('a line in the new gantry.log', async () => (await readFile(current, 'utf8').catch(() => '')).includes('after-delete-marker'));
  assert.ok((await list(s)).files.some((f) => f.name === 'gantry.log'));
});

test('a logs folder removed behind the server\'s back is made again when listed, and logging carries on into it', async (t) => {
  const s = await startTestServer(t);
  const current = join(s.paths.logs, 'gantry.log');
  await waitFor('gantry.log', async () => (await stat(current).catch(() => undefined)) !== undefined);
  await rm(s.paths.logs, { recursive: true, force: true });
  const listed = await list(s);
  assert.ok(listed.free > 0);
  s.logger.info({ probe: 'after-removal-marker' }, 'still logging');
  await waitFor('a line in the new gantry.log', async () => (await readFile(current, 'utf8').catch(() => '')).includes('after-removal-marker'));
  assert.ok((await list(s)).files.some((f) => f.name === 'gantry.log'));
});

test('a log file or folder removed by hand is noticed by a later write, which opens a new one; not more often than the check interval', async (t) => {
  const dir = await tempDir(t, 'gantry-log-gone-');
  const logs = join(dir, 'logs');
  let monotonic = 1_000;
  const stream = new ReopenableLogStream(logs, CURRENT_LOG, () => undefined, Date.now, () => monotonic);
  t.after(() => stream.end());
  const file = join(logs, CURRENT_LOG);
  stream.write('{"msg":"first"}\n');
  await waitForFile(file, (text) => text.includes('first'));
  for (const removal of [() => rm(file), () => rm(logs, { recursive: true })]) {
    await removal();
    // Before the interval is up nothing looks: the line goes into the removed file.
    monotonic += LOG_PRESENCE_CHECK_MS - 1;
    stream.write('{"msg":"too soon"}\n');
    for (let i = 0; i < 5; i++) await stat(dir); // thread-pool round trips, as a check's stat and reopen would take
    assert.equal(await stat(file).catch(() => undefined), undefined, 'no new file before the interval');
    monotonic += 1;
    let n = 0;
    await waitFor('a new gantry.log with a line written after the removal', async () => {
      stream.write(`{"msg":"after ${++n}"}\n`);
      return (await readFile(file, 'utf8').catch(() => '')).includes('"after ');
    });
  }
});

test('a log file that cannot be written does not stop the server: lines are dropped and counted, said once, and the file is opened again later, whatever the wall clock does', async (t) => {
  const dir = await tempDir(t, 'gantry-log-stream-');
  // A folder where the file goes fails the way a full disk does: the stream reports an error instead of writing.
  await mkdir(join(dir, CURRENT_LOG));
  let now = Date.UTC(2026, 10, 28);
  let monotonic = 1_000;
  const warnings: string[] = [];
  let warned: () => void = () => undefined;
  const stream = new ReopenableLogStream(dir, CURRENT_LOG, (text) => { warnings.push(text); warned(); }, () => now, () => monotonic);
  t.after(() => stream.end());
  await new Promise<void>((resolve) => { warned = resolve; stream.write('{"msg":"lost 1"}\n'); });
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /gantry\.log cannot be written .*dropped until it can/);
  for (let i = 2; i <= 4; i++) stream.write(`{"msg":"lost ${i}"}\n`);
  monotonic += LOG_RETRY_MS - 1;
  now += LOG_RETRY_MS - 1;
  stream.write('{"msg":"lost 5"}\n');
  assert.equal(warnings.length, 1, 'said once while it lasts');

  await rmdir(join(dir, CURRENT_LOG));
  monotonic += 1;
  // NTP set the clock back an hour meanwhile: before, the file stayed shut until the clock caught up.
  now -= 3_600_000;
  const back = new Promise<void>((resolve) => { warned = resolve; });
  stream.write('{"msg":"kept"}\n');
  await back;
  assert.match(warnings[1], /is written again/);
  const lines = (await waitForFile(join(dir, CURRENT_LOG), (text) => text.includes('kept'))).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.equal(lines.length, 2);
  assert.equal(lines[0].level, 40);
  assert.equal(lines[0].dropped, 4, 'the four lines written after the failure was known (the first went down with the stream)');
  assert.equal(lines[1].msg, 'kept');
});
