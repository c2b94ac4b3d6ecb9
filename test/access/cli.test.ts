// The `gantry` command: first start (admin + key printed once), graceful SIGTERM, invalid config refusal, user/apikey commands, --version and mistyped options.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ensureBuilt } from '../helpers/built-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const BIN = new URL('../../bin/gantry.js', import.meta.url).pathname;
// bin/gantry.js runs dist/cli.js: build it first when the sources changed.
before(ensureBuilt);

interface Run { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

function run(args: string[], opts: { onStdout?: (all: string, kill: (s: NodeJS.Signals) => void) => void } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GANTRY_BASEDIR: '' } });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      opts.onStdout?.(stdout, (s) => child.kill(s));
    });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

test('first start creates admin, prints password and key once, serves, and shuts down cleanly on SIGTERM', async (t) => {
  const dir = await tempDir(t, 'gantry-cli-');
  let checked: Promise<void> | undefined;
  let loginStatus = 0;
  let versionStatus = 0;
  const result = await run(['serve', '--port', '0', '--basedir', dir], {
    onStdout: (all, kill) => {
      const up = /is up at (http:\/\/\S+)/.exec(all);
      if (!up || checked) return;
      const password = /password:\s+(\S+)/.exec(all)?.[1] ?? '';
      const key = /global API key:\s+(\S+)/.exec(all)?.[1] ?? '';
      checked = (async () => {
        loginStatus = (await fetch(`${up[1]}/api/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ user: 'admin', pass: password }) })).status;
        versionStatus = (await fetch(`${up[1]}/api/version`, { headers: { 'X-Api-Key': key } })).status;
      })().finally(() => kill('SIGTERM'));
    },
  });
  await checked;
  assert.equal(result.code, 0, `signal ${result.signal}; stderr: ${result.stderr}; stdout: ${result.stdout.slice(-2000)}`);
  assert.equal(loginStatus, 200, 'the printed password logs in');
  assert.equal(versionStatus, 200, 'the printed key works');
  assert.match(result.stdout, /SIGTERM: shutting down/);
  const users = await readFile(join(dir, 'users.yaml'), 'utf8');
  const password = /password:\s+(\S+)/.exec(result.stdout)?.[1] ?? '';
  assert.ok(password.length >= 12);
  assert.ok(!users.includes(password), 'only the hash is stored');
  assert.match(users, /passwordHash: scrypt\$/);
  const config = parse(await readFile(join(dir, 'config.yaml'), 'utf8')) as { api: { key: string }; server: { firstRun: boolean } };
  assert.match(config.api.key, /^[0-9A-F]{32}$/);
  assert.equal(config.server.firstRun, false);
  assert.deepEqual((await readdir(dir)).filter((n) => n.endsWith('.tmp')), [], 'no temp files left');
  for (const folder of ['uploads', 'logs', 'data']) assert.ok((await readdir(dir)).includes(folder), folder);

  // A second start finds the admin and prints no new password.
  let stopped = false;
  const again = await run(['serve', '--port', '0', '--basedir', dir], { onStdout: (all, kill) => {
    if (/is up at/.test(all) && !stopped) {
      stopped = true;
      kill('SIGINT');
    }
  } });
  assert.equal(again.code, 0, again.stderr);
  assert.doesNotMatch(again.stdout, /password:/);
});

test('an invalid config stops the server with file, line and problem', async (t) => {
  const dir = await tempDir(t, 'gantry-cli-');
  const file = join(dir, 'config.yaml');
  await writeFile(file, 'api:\n  allowCrossOrigin: false\nserver:\n  port: "not a number"\n');
  const result = await run(['serve', '--port', '0', '--basedir', dir]);
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:4: server\\.port`));
  assert.equal(await readFile(file, 'utf8'), 'api:\n  allowCrossOrigin: false\nserver:\n  port: "not a number"\n', 'never replaced with defaults');

  await writeFile(file, 'server:\n  port: [1\n');
  const yamlError = await run(['serve', '--port', '0', '--basedir', dir]);
  assert.notEqual(yamlError.code, 0);
  assert.match(yamlError.stderr, /config\.yaml:\d+:\d+: invalid YAML/);
});

test('user and apikey commands work headless', async (t) => {
  const dir = await tempDir(t, 'gantry-cli-');
  const ok = async (args: string[]) => {
    const r = await run([...args, '--basedir', dir]);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  assert.match(await ok(['user', 'add', 'bob', '--password', 'pw-bob-12345']), /added user bob/);
  await ok(['user', 'add', 'root', '--password', 'pw-root-12345', '--admin']);
  const list = await ok(['user', 'list']);
  assert.match(list, /^bob\tactive\tusers$/m);
  assert.match(list, /^root\tactive\tadmins,users$/m);
  const hashBefore = /bob:[\s\S]*?passwordHash: (\S+)/.exec(await readFile(join(dir, 'users.yaml'), 'utf8'))?.[1];
  await ok(['user', 'password', 'bob', '--password', 'changed-pw']);
  const hashAfter = /bob:[\s\S]*?passwordHash: (\S+)/.exec(await readFile(join(dir, 'users.yaml'), 'utf8'))?.[1];
  assert.notEqual(hashAfter, hashBefore);
  await ok(['user', 'remove', 'bob']);
  assert.doesNotMatch(await readFile(join(dir, 'users.yaml'), 'utf8'), /^bob:/m);
  const short = await run(['user', 'add', 'eve', '--password', 'short', '--basedir', dir]);
  assert.notEqual(short.code, 0);
  assert.match(short.stderr, /at least 8 characters/);
  const dup = await run(['user', 'add', 'root', '--password', 'pw-root-other', '--basedir', dir]);
  assert.notEqual(dup.code, 0);
  assert.match(dup.stderr, /already exists/);

  const key = (await ok(['apikey'])).trim();
  assert.match(key, /^[0-9A-F]{32}$/);
  const regenerated = (await ok(['apikey', '--regenerate'])).trim();
  assert.notEqual(regenerated, key);
  assert.equal((parse(await readFile(join(dir, 'config.yaml'), 'utf8')) as { api: { key: string } }).api.key, regenerated);
});

test('--version prints the version; a mistyped option is named with the usage, not a stack trace', async () => {
  const version = (JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  for (const args of [['--version'], ['-v'], ['version']]) {
    const r = await run(args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stdout, `${version}\n`, args.join(' '));
  }
  const bad = await run(['serve', '--prot', '5000']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^gantry: Unknown option '--prot'/);
  assert.match(bad.stderr, /Usage:/);
  assert.doesNotMatch(bad.stderr, /\n\s+at /, 'no stack trace');
  const missing = await run(['serve', '--port']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^gantry: Option '--port <value>' argument missing/);
});
