// The `gantry` command (bin/gantry, a shell script): node started once, with the options and malloc settings bin/gantry.js would re-execute itself to get.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { appendFile, chmod, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT, ensureBuilt, startGantryProcess } from '../../helpers/built-server.ts';
import { serviceNodeFlags } from '../../../src/system/systemd-unit.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const run = promisify(execFile);
const LAUNCHER = join(ROOT, 'bin/gantry');
const ENTRY = join(ROOT, 'bin/gantry.js');

interface NodeCall { args: string[]; arenaMax: string; mmapThreshold: string }

/**
 * A stand-in `node` first on PATH (the launcher's one boundary: the binary it asks and then runs): `old` answers the
 * probe as Node 20 does ("bad option", exit 9). Every call is written down. `become` replaces it with the other kind,
 * as an upgrade or downgrade of node would.
 */
async function fakeNode(t: Parameters<typeof tempDir>[0], kind: 'new' | 'old', binarySize = false): Promise<{ dir: string; cache: string; calls: () => Promise<NodeCall[]>; become: (kind: 'new' | 'old') => Promise<void> }> {
  const dir = await tempDir(t, 'gantry-fake-node-');
  const log = join(dir, 'calls');
  await writeFile(log, '');
  const become = async (k: 'new' | 'old') => {
    const refuse = k === 'old' ? 'echo "node: bad option: --memory-balancer" >&2; exit 9' : 'echo v24.0.0; exit 0';
    await rm(join(dir, 'node'), { force: true });
    await writeFile(join(dir, 'node'), `#!/bin/sh
{ printf 'call'; for a in "$@"; do printf '\\t%s' "$a"; done; printf '\\tARENA=%s\\tMMAP=%s\\n' "\${MALLOC_ARENA_MAX-unset}" "\${MALLOC_MMAP_THRESHOLD_-unset}"; } >> ${JSON.stringify(log)}
case " $* " in *" --version "*) case " $* " in *" --memory-balancer "*) ${refuse} ;; esac; echo v24.0.0 ;; esac
exit 0
`);
    // As large as a node binary (the launcher keeps answers only for those): a comment the shell never reads, after exit.
    if (binarySize) await appendFile(join(dir, 'node'), `#${'x'.repeat(16_000_000)}\n`);
    await chmod(join(dir, 'node'), 0o755);
  };
  await become(kind);
  return {
    dir,
    // The launcher keeps node's answer in the user's cache folder: each stand-in gets its own.
    cache: await tempDir(t, 'gantry-fake-cache-'),
    calls: async () => (await readFile(log, 'utf8')).split('\n').filter(Boolean).map((line) => {
      const fields = line.split('\t').slice(1);
      return { args: fields.slice(0, -2), arenaMax: fields.at(-2)!.slice(6), mmapThreshold: fields.at(-1)!.slice(5) };
    }),
    become,
  };
}

/** The environment of a shell that has none of the variables the launcher looks at, with the fake node first. */
function env(node: { dir: string; cache: string }, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(MALLOC_|GANTRY_)/.test(k)));
  return { ...clean, PATH: `${node.dir}:${process.env.PATH}`, XDG_CACHE_HOME: node.cache, ...extra };
}

test('on a node with the memory balancer: one probe, then node once with the unit\'s V8 options and malloc settings', async (t) => {
  const node = await fakeNode(t, 'new');
  await run(LAUNCHER, ['serve', '--basedir', 'a dir with spaces', '--port', '0'], { env: env(node) });
  const calls = await node.calls();
  assert.deepEqual(calls.map((c) => c.args), [
    ['--memory-balancer', '--version'],
    [...serviceNodeFlags('12.4'), ENTRY, 'serve', '--basedir', 'a dir with spaces', '--port', '0'],
  ], 'the same options the systemd unit names, before the script; the arguments unchanged');
  assert.deepEqual([calls[1].arenaMax, calls[1].mmapThreshold], ['2', '65536']);
});

test('on a node that refuses --memory-balancer (Node 20): no V8 options, the malloc settings still', async (t) => {
  const node = await fakeNode(t, 'old');
  await run(LAUNCHER, ['user', 'list'], { env: env(node) });
  const calls = await node.calls();
  assert.deepEqual(calls.at(-1)!.args, [ENTRY, 'user', 'list']);
  assert.deepEqual([calls.at(-1)!.arenaMax, calls.at(-1)!.mmapThreshold], ['2', '65536']);
});

test('node\'s answer is kept for that node: the next start runs no probe, a node replaced is asked again', async (t) => {
  const node = await fakeNode(t, 'new', true);
  await run(LAUNCHER, ['serve'], { env: env(node) });
  await run(LAUNCHER, ['serve'], { env: env(node) });
  const withBalancer = [...serviceNodeFlags('12.4'), ENTRY, 'serve'];
  assert.deepEqual((await node.calls()).map((c) => c.args), [['--memory-balancer', '--version'], withBalancer, withBalancer]);

  // Replaced by a node that refuses the option (a downgrade to Node 20): asked again, and started without it.
  await node.become('old');
  await run(LAUNCHER, ['serve'], { env: env(node) });
  await run(LAUNCHER, ['serve'], { env: env(node) });
  assert.deepEqual((await node.calls()).slice(3).map((c) => c.args), [['--memory-balancer', '--version'], [ENTRY, 'serve'], [ENTRY, 'serve']]);

  // An answer file that says something else than yes or no is not believed.
  await writeFile(join(node.cache, 'gantry', 'node-has-memory-balancer'), `${(await readFile(join(node.cache, 'gantry', 'node-has-memory-balancer'), 'utf8')).split('\n')[0]}\n--evil\n`);
  await run(LAUNCHER, ['serve'], { env: env(node) });
  assert.deepEqual((await node.calls()).slice(6).map((c) => c.args), [['--memory-balancer', '--version'], [ENTRY, 'serve']]);
});

test('a small node (a version manager\'s shim, which picks a node at each start) is asked at every start', async (t) => {
  const shim = await fakeNode(t, 'new');
  await run(LAUNCHER, ['serve'], { env: env(shim) });
  await run(LAUNCHER, ['serve'], { env: env(shim) });
  const probe = ['--memory-balancer', '--version'];
  const start = [...serviceNodeFlags('12.4'), ENTRY, 'serve'];
  assert.deepEqual((await shim.calls()).map((c) => c.args), [probe, start, probe, start]);
});

test('GANTRY_V8_FLAGS leaves V8 to the caller (no probe), GANTRY_MALLOC_TUNING=0 leaves malloc alone, set variables win', async (t) => {
  const node = await fakeNode(t, 'new');
  await run(LAUNCHER, ['serve'], { env: env(node, { GANTRY_V8_FLAGS: '', GANTRY_MALLOC_TUNING: '0' }) });
  let calls = await node.calls();
  assert.deepEqual(calls.map((c) => c.args), [[ENTRY, 'serve']]);
  assert.deepEqual([calls[0].arenaMax, calls[0].mmapThreshold], ['unset', 'unset']);

  const other = await fakeNode(t, 'new');
  await run(LAUNCHER, ['serve'], { env: env(other, { MALLOC_ARENA_MAX: '4' }) });
  calls = await other.calls();
  assert.deepEqual([calls.at(-1)!.arenaMax, calls.at(-1)!.mmapThreshold], ['4', '65536']);
});

test('run through a link elsewhere (as npm installs the command), it finds bin/gantry.js beside its own file', async (t) => {
  const node = await fakeNode(t, 'new');
  const bin = join(await tempDir(t, 'gantry-prefix-'), 'bin');
  await mkdir(bin);
  await symlink(LAUNCHER, join(bin, 'gantry'));
  await run(join(bin, 'gantry'), ['--version'], { env: env(node) });
  assert.equal((await node.calls()).at(-1)!.args.at(-2), ENTRY);
});

test('the real command: the server it starts has the options on node\'s command line and the settings in its environment', async (t) => {
  await ensureBuilt();
  const base = await tempDir(t, 'gantry-command-');
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^MALLOC_/.test(k)));
  // This node first on PATH, as the launcher runs whatever `node` is there.
  const g = await startGantryProcess(LAUNCHER, ['serve', '--port', '0', '--basedir', base],
    { ...clean, PATH: `${join(process.execPath, '..')}:${process.env.PATH}` });
  t.after(() => g.stop());
  assert.equal((await fetch(`${g.url}/api/version`, { headers: { 'X-Api-Key': g.apiKey } })).status, 200);
  const pid = g.child.pid!;
  const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter(Boolean);
  assert.deepEqual(cmdline, ['node', ...serviceNodeFlags(), ENTRY, 'serve', '--port', '0', '--basedir', base],
    'the shell replaced itself with node (same process), the options before the script; node booted once: bin/gantry.js re-executing would name node by its full path');
  const environ = (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0');
  assert.ok(environ.includes('MALLOC_ARENA_MAX=2') && environ.includes('MALLOC_MMAP_THRESHOLD_=65536'));
  assert.equal(await g.stop(), 0);
});
