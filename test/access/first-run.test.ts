// The first run: the administrator's drawn password is stored at a low scrypt work factor and raised to the full one
// at its first login; a users file without users, a port already taken or a failure after listening still stops the
// start, and gives back its log file (and the port).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parse } from 'yaml';
import { startGantry } from '../../src/main.ts';
import { CONTROL_FILE } from '../../src/access/local-control.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { passwordProblem } from '../../src/access/password.ts';

async function startCapturing(baseDir: string, port = 0): Promise<{ g: Awaited<ReturnType<typeof startGantry>>; out: string }> {
  const write = process.stdout.write.bind(process.stdout);
  let out = '';
  process.stdout.write = ((chunk: string | Uint8Array) => { out += chunk.toString(); return true; }) as typeof process.stdout.write;
  try {
    return { g: await startGantry({ host: '127.0.0.1', port, baseDir }), out };
  } finally {
    process.stdout.write = write;
  }
}

const adminHash = async (dir: string) => (parse(await readFile(join(dir, 'users.yaml'), 'utf8')) as Record<string, { passwordHash: string }>).admin.passwordHash;
const login = (url: string, pass: string) => fetch(`${url}/api/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ user: 'admin', pass }) });

test('the first run\'s admin password: printed once, logs in, and its hash reaches the full work factor at that login', async (t) => {
  const dir = await tempDir(t, 'gantry-first-run-');
  const { g, out } = await startCapturing(dir);
  t.after(() => g.stop());
  const password = /password:\s+(\S+)/.exec(out)?.[1];
  assert.ok(password, out);
  assert.equal(passwordProblem(password), undefined, 'the drawn password passes the rule for chosen ones (16 characters)');
  assert.match(await adminHash(dir), /^scrypt\$1024\$8\$1\$/, 'a drawn password is hashed at the low factor');
  assert.equal((await login(g.url, `${password}x`)).status, 403);
  assert.match(await adminHash(dir), /^scrypt\$1024\$/, 'a failed login changes nothing');
  assert.equal((await login(g.url, password)).status, 200);
  assert.match(await adminHash(dir), /^scrypt\$32768\$8\$1\$/, 'raised at the first login');
  assert.equal((await login(g.url, password)).status, 200, 'the raised hash checks the same password');
  const key = /global API key:\s+(\S+)/.exec(out)?.[1];
  assert.equal((await fetch(`${g.url}/api/version`, { headers: { 'X-Api-Key': key! } })).status, 200);
});

test('a users file without users stops the start', async (t) => {
  const dir = await tempDir(t, 'gantry-first-run-');
  await writeFile(join(dir, 'users.yaml'), '{}\n');
  await assert.rejects(startCapturing(dir), /holds no users; refusing to start/);
  await assertLogClosed(dir);
});

test('a port already taken stops the start, which gives back its log file; the server holding the port keeps answering', async (t) => {
  const first = await startCapturing(await tempDir(t, 'gantry-first-run-'));
  t.after(() => first.g.stop());
  const dir = await tempDir(t, 'gantry-first-run-');
  await assert.rejects(startGantry({ host: '127.0.0.1', port: first.g.port, baseDir: dir }), /EADDRINUSE/);
  await assertLogClosed(dir);
  assert.equal((await fetch(`${first.g.url}/api/version`)).status, 403, 'the first server still answers (403: no key)');
});

test('a start that fails after listening (its control file cannot be written) closes the port again and gives back its log file', async (t) => {
  const dir = await tempDir(t, 'gantry-first-run-');
  // A folder (not empty) where the control file goes: the atomic write's rename onto it fails.
  await mkdir(join(dir, CONTROL_FILE, 'occupied'), { recursive: true });
  const port = await freePort();
  await assert.rejects(startCapturing(dir, port), (err: NodeJS.ErrnoException) => ['EISDIR', 'ENOTEMPTY', 'EEXIST'].includes(err.code ?? ''));
  await assertLogClosed(dir);
  // Nothing listens there any more: the port can be taken again.
  const again = createServer();
  await new Promise<void>((resolve, reject) => { again.once('error', reject); again.listen(port, '127.0.0.1', resolve); });
  await new Promise((resolve) => again.close(resolve));
});

/** A port nothing listens on now (the system's pick, given back at once). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** A failed start closes its log file: a handle left to garbage collection is an uncaught error on Node 26. */
async function assertLogClosed(baseDir: string): Promise<void> {
  const log = join(baseDir, 'logs', 'gantry.log');
  const holdsLog = async () => {
    const fds = await readdir('/proc/self/fd');
    return (await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')))).includes(log);
  };
  const deadline = Date.now() + 5000;
  while (await holdsLog() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(await holdsLog(), false, `${log} is still open after the failed start`);
}
