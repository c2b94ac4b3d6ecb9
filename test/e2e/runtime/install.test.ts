// A real install: npm pack + npm install -g into a temp prefix gives a working `gantry serve`; `gantry install-service` writes a systemd unit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT, descendants, ensureBuilt, startGantryProcess } from '../../helpers/built-server.ts';
import { renderUnit, serviceNodeFlags } from '../../../src/system/systemd-unit.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const run = promisify(execFile);
const BIN = join(ROOT, 'bin/gantry.js');

test('install-service --user writes a user unit running this node and bin/gantry.js, restarting on failure', async (t) => {
  await ensureBuilt();
  const config = await tempDir(t, 'gantry-xdg-');
  const base = join(config, 'my base');
  const { stdout } = await run(process.execPath, [BIN, 'install-service', '--user', '--basedir', base, '--port', '5055'], {
    env: { ...process.env, XDG_CONFIG_HOME: config },
  });
  const file = join(config, 'systemd/user/gantry.service');
  const unit = await readFile(file, 'utf8');
  const [v8Major, v8Minor] = process.versions.v8.split('.').map(Number);
  const flags = v8Major * 100 + v8Minor >= 1204 ? '--memory-balancer --expose-gc --max-semi-space-size=2 ' : '';
  assert.ok(unit.includes(`\nExecStart=${process.execPath} ${flags}${BIN} serve --basedir "${base}" --port 5055\n`), unit);
  assert.match(unit, /^Restart=on-failure$/m);
  assert.match(unit, /^WantedBy=default\.target$/m);
  assert.doesNotMatch(unit, /^User=/m, 'a user unit runs as its owner');
  assert.match(stdout, new RegExp(`wrote ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  assert.match(stdout, /systemctl --user enable --now gantry/);
  assert.match(stdout, /loginctl enable-linger/);
  if (existsSync('/usr/bin/systemd-analyze')) await run('/usr/bin/systemd-analyze', ['verify', file]);
});

test('install-service --system --print prints a system unit for the current user with the dialout group', async () => {
  await ensureBuilt();
  const { stdout } = await run(process.execPath, [BIN, 'install-service', '--system', '--print', '--basedir', '/srv/gantry', '--host', '0.0.0.0']);
  assert.match(stdout, new RegExp(`^User=${userInfo().username}$`, 'm'));
  assert.match(stdout, /^SupplementaryGroups=dialout$/m);
  assert.match(stdout, /^LimitNICE=-10$/m);
  assert.match(stdout, /^Restart=on-failure$/m);
  assert.match(stdout, /^WantedBy=multi-user\.target$/m);
  assert.match(stdout, / serve --basedir \/srv\/gantry --host 0\.0\.0\.0$/m);
});

/** Runs `words` (node first) with `extra` after the node options, process.execve replaced by a marker: whether the launcher re-executed. */
async function reExecutes(words: string[], env: Record<string, string>, extra: string[]): Promise<boolean> {
  const marker = 'data:text/javascript,process.execve = () => { process.stderr.write("re-executed\\n"); process.exit(3); };';
  const binAt = words.indexOf(BIN);
  const args = [...words.slice(1, binAt), '--import', marker, BIN, ...extra];
  // What the launcher reads to decide comes only from `env`.
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(MALLOC_|GANTRY_MALLOC_TUNING$|GANTRY_V8_FLAGS$|NODE_OPTIONS$)/.test(k)));
  const { stdout, stderr } = await run(words[0], args, { env: { ...base, ...env } }).catch((err: { code: number; stdout: string; stderr: string }) => {
    if (err.code !== 3) throw err;
    return err;
  });
  if (stderr.includes('re-executed')) return true;
  assert.match(stdout, /^\d+\.\d+\.\d+/);
  return false;
}

test('the unit starts the launcher with what it would re-execute itself for, so a service boots node once', async (t) => {
  await ensureBuilt();
  if (typeof process.execve !== 'function') {
    t.skip(`node ${process.version} has no process.execve: the launcher never re-executes`);
    return;
  }
  const { stdout } = await run(process.execPath, [BIN, 'install-service', '--system', '--print', '--basedir', '/srv/gantry']);
  const words = /^ExecStart=(.*)$/m.exec(stdout)![1].split(' ');
  const env = Object.fromEntries(/^Environment=(.*)$/m.exec(stdout)![1].split(' ').map((kv) => kv.split('=') as [string, string]));
  assert.deepEqual(words.slice(1, -4), serviceNodeFlags());
  assert.equal(await reExecutes(words, env, ['--version']), false, 'started as the unit starts it');
  // The check can fail: without the unit's environment, or without its node options where it has some, it re-executes.
  assert.equal(await reExecutes(words, {}, ['--version']), true, 'without the malloc settings');
  if (serviceNodeFlags().length > 0) assert.equal(await reExecutes([words[0], BIN], env, ['--version']), true, 'without the V8 options');
});

test('contrib/gantry.service is what install-service writes for user pi with a global npm install', async () => {
  const contrib = await readFile(join(ROOT, 'contrib/gantry.service'), 'utf8');
  const rendered = renderUnit({ scope: 'system', node: '/usr/bin/node', bin: '/usr/lib/node_modules/gantry/bin/gantry.js',
    baseDir: '/home/pi/.gantry', user: 'pi', serialGroup: 'dialout' });
  assert.ok(contrib.endsWith(rendered), 'regenerate contrib/gantry.service after changing renderUnit()');
});

test('npm pack + npm install -g into a temp prefix gives a `gantry` command whose serve answers, analyses and serves the UI', async (t) => {
  await ensureBuilt();
  const dir = await tempDir(t, 'gantry-install-');
  // --ignore-scripts: `prepare` would rebuild what ensureBuilt() just checked; the tarball ships dist/ and web/dist/.
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dir, ROOT], { cwd: dir });
  const tarball = join(dir, stdout.trim().split('\n').at(-1)!);
  const prefix = join(dir, 'prefix');
  // The README's command; dependencies come from npm's cache when it has them (CI's npm ci filled it). Their metadata
  // comes from the registry: a request that stalls is given up after 30 s and tried again, not after npm's 5 minutes
  // (one stalled once on a fresh clone, 298 s, where the whole test takes 10–45 s).
  await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error',
    '--fetch-timeout=30000', '--fetch-retries=5', tarball],
    { cwd: dir, maxBuffer: 16 << 20 });
  const pkg = join(prefix, 'lib/node_modules/gantry');
  assert.deepEqual((await readdir(pkg)).filter((n) => ['src', 'test', 'node_modules', 'dist'].includes(n)).sort(), ['dist', 'node_modules'],
    'dist/ is shipped, the TypeScript sources and tests are not');
  const modules = await readdir(join(pkg, 'node_modules'));
  assert.ok(!modules.includes('tsx') && !modules.includes('esbuild'), 'the build tools are development dependencies only');

  const base = join(dir, 'base');
  const g = await startGantryProcess(join(prefix, 'bin/gantry'), ['serve', '--port', '0', '--basedir', base],
    { PATH: `${join(prefix, 'bin')}:${process.env.PATH}` });
  t.after(() => g.stop());
  const headers = { 'X-Api-Key': g.apiKey };
  assert.equal((await fetch(`${g.url}/api/version`, { headers })).status, 200);
  assert.equal((await readFile(`/proc/${g.child.pid}/cmdline`, 'utf8')).split('\0')[0], 'node',
    'the command (bin/gantry) is installed executable and started node once, itself');
  assert.equal((await fetch(`${g.url}/api/connection`, { headers })).status, 200, 'serialport loads from the installed modules');
  if (existsSync(join(ROOT, 'web/dist/index.html'))) assert.equal((await fetch(`${g.url}/`)).status, 200, 'the UI is in the package');
  const form = new FormData();
  form.append('file', new Blob(['M83\nG1 X10 E2 F600\n']), 'a.gcode');
  assert.equal((await fetch(`${g.url}/api/files/local`, { method: 'POST', headers, body: form })).status, 201);
  let length: number | undefined;
  for (const deadline = Date.now() + 30_000; length === undefined && Date.now() < deadline;) {
    const info = (await (await fetch(`${g.url}/api/files/local/a.gcode`, { headers })).json()) as { gcodeAnalysis?: { filament: { tool0: { length: number } } } };
    length = info.gcodeAnalysis?.filament.tool0.length;
    if (length === undefined) await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(length, 2, `the installed analysis worker runs; stderr: ${g.stderr()}`);
  assert.deepEqual((await descendants(g.child.pid!)).filter((n) => n === 'esbuild'), []);
  assert.equal(await g.stop(), 0);
});

// npm 12 runs a dependency's install script only when package.json's allowScripts names it (npm 11.16+ warns); a
// dependency added later with a script of its own must be reviewed and named there, or `npm ci` silently skips it.
test('every dependency with an install script is reviewed in package.json allowScripts', async (t) => {
  const { stdout: version } = await run('npm', ['--version']);
  const [major, minor] = version.trim().split('.').map(Number);
  if (major * 100 + minor < 1116) {
    t.skip(`npm ${version.trim()} predates allowScripts (npm 11.16)`);
    return;
  }
  const { stdout } = await run('npm', ['approve-scripts', '--allow-scripts-pending', '--json'], { cwd: ROOT });
  const pending = (JSON.parse(stdout) as { allowScripts: { name: string }[] }).allowScripts.map((p) => p.name);
  assert.deepEqual(pending, [], 'review each and run `npm approve-scripts <name>` (or deny it)');
  const allowed = (JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> }).allowScripts;
  // serialport's native binding builds from source where no prebuilt binary fits; esbuild's postinstall checks its binary.
  assert.deepEqual(allowed, { esbuild: true, '@serialport/bindings-cpp': true });
});
