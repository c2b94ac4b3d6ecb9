// The built server idles lean: it loads only what an idle server needs (MQTT, archives, serial, SockJS, argon2, glob, TLS and compression wait for their first use; the printer link's engine loads in its own thread), does not compile its one-off start-up code nor shrink its heap while it starts, runs without V8's Maglev tier and does not wake up while nobody uses it.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { ROOT, descendants, ensureBuilt, startGantryProcess } from '../../helpers/built-server.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

before(ensureBuilt);

const LOAD_LOG_HOOK = fileURLToPath(new URL('../../helpers/load-log.mjs', import.meta.url));
/** Each bundled package leaves its path in its chunk (esbuild's CommonJS wrappers are keyed by it). */
const LAZY_BUNDLED = ['node_modules/mqtt/', 'node_modules/yauzl/', 'node_modules/tar/', 'node_modules/glob/', 'node_modules/yazl/', 'node_modules/pino-pretty/', 'node_modules/ws/'];
const LAZY_EXTERNAL = ['/node_modules/serialport/', '/node_modules/@node-rs/argon2/', '/node_modules/sockjs/', '/node_modules/re2js/'];
/** What only the printer link's thread runs (src/printer/link/link-thread.ts): the main thread loads it only for serial.linkThread: main. */
const LINK_THREAD_CLASSES = ['ProtocolEngine', 'VirtualPrinter', 'SerialTransport', 'LoopbackTransport'];
/**
 * Built-ins only some requests use (scripts/build.mjs, LAZY_BUILTINS): Fastify's https and http2, TLS, compression.
 * Not node:vm: bin/gantry.js compiles dist/ through it (its code caches).
 */
const LAZY_NODE = ['node:https', 'node:http2', 'node:tls', 'node:zlib', 'node:readline'];

test('an idle server that answered API calls has loaded no MQTT, archive, serial, SockJS, argon2, glob, TLS or compression code, nor the printer link\'s engine', async (t) => {
  const dir = await tempDir(t, 'gantry-lean-');
  const log = join(dir, 'loaded.txt');
  const g = await startGantryProcess(process.execPath, ['--import', LOAD_LOG_HOOK, join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', join(dir, 'base')], { GANTRY_LOAD_LOG: log });
  t.after(() => g.stop());
  const headers = { 'X-Api-Key': g.apiKey };
  for (const path of ['/api/version', '/api/settings', '/api/connection', '/api/files?recursive=true', '/api/printerprofiles', '/api/job', '/']) {
    const res = await fetch(`${g.url}${path}`, { headers });
    assert.equal(res.status, 200, path);
    await res.arrayBuffer();
  }
  const loaded = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
  const chunks = loaded.filter((u) => /\/dist\/(cli|chunk-\w+)\.js$/.test(u));
  // The hook itself works: it saw the entry and the server's chunks (else this test could not fail).
  assert.ok(chunks.some((u) => u.endsWith('/dist/cli.js')) && chunks.length > 2, `chunks seen: ${chunks.join(', ')}`);
  let wrapped = 0;
  for (const url of chunks) {
    const code = await readFile(fileURLToPath(url), 'utf8');
    for (const pkg of LAZY_BUNDLED) assert.ok(!code.includes(`"${pkg}`), `${url} (loaded at idle) bundles ${pkg}`);
    // The printer link runs in its own thread: its engine and transports load there, on connect (esbuild writes a
    // class as `Name=class`).
    for (const cls of LINK_THREAD_CLASSES) assert.ok(!code.includes(`${cls}=class`), `${url} (loaded at idle) defines ${cls}`);
    wrapped += code.match(/__toESM\(require_(fs|promises|path|crypto|os)\d*\(\)/g)?.length ?? 0;
  }
  // src/'s imports of built-ins share one module object each (scripts/build.mjs, builtinsViaRequire), instead of a
  // copy with a getter per export in every importing file (≈ 170 copies, ≈ 1 MB of heap); the few left are ES
  // dependencies' own imports.
  assert.ok(wrapped < 25, `${wrapped} per-file copies of fs, fs/promises, path, crypto or os in the chunks loaded at idle`);
  for (const pkg of LAZY_EXTERNAL) assert.ok(!loaded.some((u) => u.includes(pkg)), `${pkg} was loaded at idle`);
  assert.equal(await g.stop(), 0);
  // Written at exit: the built-ins the server had loaded (node:http shows that the list is there).
  const builtins = (await readFile(log, 'utf8')).split('\n').filter((l) => l.startsWith('node:'));
  assert.ok(builtins.includes('node:http'), `built-ins seen: ${builtins.length}`);
  for (const name of LAZY_NODE) assert.ok(!builtins.includes(name), `${name} was loaded at idle`);
});

test('an idle server sleeps: no timer wakes its event loop while nobody is connected and nothing is printing', async (t) => {
  const dir = await tempDir(t, 'gantry-lean-');
  const g = await startGantryProcess(process.execPath, [join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', dir]);
  t.after(() => g.stop());
  const res = await fetch(`${g.url}/api/printer`, { headers: { 'X-Api-Key': g.apiKey } });
  assert.equal(res.status, 409, 'no printer connected');
  await res.arrayBuffer();
  // Each return from the loop's poll (a timer due, I/O) is one voluntary context switch of the main thread; a busy
  // machine adds involuntary ones only. A loop-delay histogram sampling all day (as @fastify/under-pressure did) is
  // ≈ 100 a second; the push channel's status rounds and the app-key sweep running without clients or requests were
  // ≈ 3 a second; without them a few are left (V8 finishing compiles, the compile cache written). On a loaded machine
  // those stragglers reach further (9 in the first window of a run beside five other test files, Node 26): the
  // quieter of two windows counts, as a timer wakes every window. Both end before V8's idle-time GCs (≈ 8 s after
  // start), which wake it a dozen times.
  const switches = async () => Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(await readFile(`/proc/${g.child.pid}/task/${g.child.pid}/status`, 'utf8'))?.[1]);
  const wakes = async (ms: number) => {
    const before = await switches();
    await new Promise((r) => setTimeout(r, ms));
    return (await switches()) - before;
  };
  await new Promise((r) => setTimeout(r, 1000));
  const woke = Math.min(await wakes(2500), await wakes(2500));
  assert.ok(woke <= 4, `the main thread woke ${woke} times in 2.5 s of idling (the quieter of two windows)`);
  assert.equal(await g.stop(), 0);
});

test('V8 compiles nothing and runs no memory-reducing full GC while the server starts (no TurboFan, no Sparkplug, no --optimize-for-size), and what serving makes hot once it answers (TurboFan only: Maglev stays off)', async (t) => {
  const dir = await tempDir(t, 'gantry-lean-');
  // V8 prints each optimised compile as it completes and each function it queues for baseline (Sparkplug) code, to
  // stdout, in order with the server's own lines.
  const trace = ['--trace-opt', '--trace-baseline-batch-compilation'];
  // And each GC: under --optimize-for-size a full GC of the start was a memory-reducing one ("Mark-Compact (reduce)").
  const g = await startGantryProcess(process.execPath, [...trace, '--trace-gc', join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', dir]);
  t.after(() => g.stop());
  const optimised = (text: string) => text.split('\n').filter((l) => /^\[completed (?:compiling|optimizing) .*\(target (?:TURBOFAN|MAGLEV)/.test(l));
  const baseline = (text: string) => text.split('\n').filter((l) => l.startsWith('[Baseline batch compilation] Enqueued SFI '));
  const compiled = (text: string) => [...optimised(text), ...baseline(text)];
  const name = (line: string) => /<JSFunction (\S+)/.exec(line)?.[1] ?? /Enqueued SFI (\S+)/.exec(line)?.[1] ?? line;
  // What V8 compiles while Node boots and loads the launcher's file, before its first line can hold anything, is out
  // of its reach (on Node 24, Maglev compiled node:path's isPosixPathSeparator there when the checkout's path was long
  // enough), and so is what it compiles of Node's own code while the launcher loads the built-ins before setting any
  // flag (see the next test): a run that only prints the usage of `serve` goes through the same and shows those.
  const probe = await promisify(execFile)(process.execPath, [...trace, join(ROOT, 'bin/gantry.js'), 'serve', '--help']);
  const beforeLauncher = new Set(compiled(probe.stdout).map(name));
  assert.ok(beforeLauncher.size > 0, 'the trace shows what Node compiles while it boots (else this test could not fail)');
  const upAt = g.stdout().indexOf('is up at');
  const startUp = g.stdout().slice(0, upAt);
  assert.deepEqual(optimised(startUp).filter((l) => !beforeLauncher.has(name(l))), [], 'start-up code was optimised');
  assert.deepEqual(baseline(startUp).filter((l) => !beforeLauncher.has(name(l))), [], 'start-up code was compiled by Sparkplug');
  assert.ok(/ms: Scavenge/.test(startUp), 'the trace shows the start\'s GCs (else the next check could not fail)');
  assert.deepEqual(startUp.split('\n').filter((l) => /ms: Mark-Compact \(reduce\)/.test(l)), [], `a memory-reducing full GC while the server started: ${startUp.split('\n').filter((l) => /Mark-Compact/.test(l)).join(' / ')}`);
  // Requests make the request path hot: the compilers are on again (bounded: a few thousand requests at most).
  const headers = { 'X-Api-Key': g.apiKey };
  let served = 0;
  while (optimised(g.stdout().slice(upAt)).length === 0 && served < 20_000) {
    for (let i = 0; i < 200; i++, served++) {
      const res = await fetch(`${g.url}/api/version`, { headers });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
    }
  }
  assert.ok(served < 20_000, `nothing optimised after ${served} requests`);
  assert.ok(baseline(g.stdout().slice(upAt)).length > 0, 'Sparkplug is on again once the server answers');
  // Maglev (built into Node ≥ 24) stays off for good: TurboFan alone compiles what serving makes hot.
  assert.deepEqual(optimised(g.stdout().slice(upAt)).filter((l) => l.includes('(target MAGLEV)')), [], 'Maglev compiled while serving');
  assert.equal(await g.stop(), 0);
});

test('the built-ins a server loads as it starts come from Node\'s code caches, which V8 rejects once the launcher\'s flags are set', {
  skip: typeof (process as { execve?: unknown }).execve === 'function' && process.platform === 'linux'
    ? 'node\'s command line holds V8 flags here (the launcher re-executes with them), which reject the caches from the start (bin/gantry.js)' : false,
}, async (t) => {
  const dir = await tempDir(t, 'gantry-lean-');
  // Node reports on stderr, for each built-in it compiles, whether V8 took the module's cache.
  const g = await startGantryProcess(process.execPath, [join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', dir], { NODE_DEBUG_NATIVE: 'CODE_CACHE' });
  t.after(() => g.stop());
  assert.equal((await fetch(`${g.url}/api/version`, { headers: { 'X-Api-Key': g.apiKey } })).status, 200);
  assert.equal(await g.stop(), 0);
  const verdicts = new Map<string, string>();
  for (const m of g.stderr().matchAll(/^Code cache of (\S+) \(\w+\) is (accepted|rejected)$/gm)) verdicts.set(m[1], verdicts.get(m[1]) === 'rejected' ? 'rejected' : m[2]);
  // A flag set otherwise than V8's default does make V8 reject the caches (else this test could not fail).
  const { stderr } = await promisify(execFile)(process.execPath, ['-e', "require('v8').setFlagsFromString('--optimize-for-size'); require('net')"], { env: { ...process.env, NODE_DEBUG_NATIVE: 'CODE_CACHE' } });
  assert.match(stderr, /^Code cache of net \(\w+\) is rejected$/m, 'V8 takes a cache made under other flags');
  const server = ['http', '_http_server', 'net', 'crypto', 'internal/crypto/hash', 'worker_threads', 'cluster', 'child_process', 'fs/promises', 'assert'];
  assert.deepEqual(server.filter((id) => verdicts.get(id) !== 'accepted'), [], `built-ins compiled without their cache: ${[...verdicts].filter(([, v]) => v === 'rejected').map(([k]) => k).join(' ')}`);
});

test('where Node has process.execve, the launcher runs the server with glibc malloc tuned and V8\'s memory balancer, as one process', {
  skip: typeof (process as { execve?: unknown }).execve !== 'function' || process.platform !== 'linux' ? 'needs Linux and Node ≥ 22.15' : false,
}, async (t) => {
  const dir = await tempDir(t, 'gantry-lean-');
  const env = { MALLOC_ARENA_MAX: undefined, MALLOC_MMAP_THRESHOLD_: undefined };
  const g = await startGantryProcess(process.execPath, [join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', dir], env);
  t.after(() => g.stop());
  const environ = (await readFile(`/proc/${g.child.pid}/environ`, 'utf8')).split('\0');
  assert.ok(environ.includes('MALLOC_ARENA_MAX=2') && environ.includes('MALLOC_MMAP_THRESHOLD_=65536'), 'the server process has the malloc settings');
  // Every Node with process.execve has V8 ≥ 12.4, which has the balancer; V8 takes it only on the command line.
  const cmdline = (await readFile(`/proc/${g.child.pid}/cmdline`, 'utf8')).split('\0');
  assert.equal(cmdline[1], '--memory-balancer', `node runs with V8's memory balancer: ${cmdline.join(' ')}`);
  assert.deepEqual(await descendants(g.child.pid!), [], 'no second process');
  assert.equal((await fetch(`${g.url}/api/version`, { headers: { 'X-Api-Key': g.apiKey } })).status, 200);
  assert.equal(await g.stop(), 0);
});

test('with V8\'s memory balancer (which turns V8\'s memory reducer off) the launcher shrinks the heap once the server has answered and gone quiet, and not again while it stays idle', {
  skip: typeof (process as { execve?: unknown }).execve !== 'function' || process.platform !== 'linux' ? 'needs Linux and Node ≥ 22.15 (the launcher adds the balancer by re-executing itself)' : false,
}, async (t) => {
  const dir = await tempDir(t, 'gantry-lean-');
  // V8 prints each GC with its reason; the launcher's are requested through V8's gc function ("testing").
  const g = await startGantryProcess(process.execPath, ['--trace-gc', join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', dir]);
  t.after(() => g.stop());
  const upAt = g.stdout().indexOf('is up at');
  const shrinks = () => g.stdout().slice(upAt).split('\n').filter((l) => /Mark-Compact.*\btesting\b/.test(l));
  assert.deepEqual(shrinks(), [], 'no GC was requested before the server answered');
  // Event-driven: each chunk of output is checked as it arrives (it is due 8 s after the server answered).
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no GC requested 30 s after the server answered')), 30_000);
    const check = () => { if (shrinks().length > 0) { g.child.stdout!.off('data', check); clearTimeout(timer); resolve(); } };
    g.child.stdout!.on('data', check);
    check();
  });
  assert.match(shrinks()[0], /Mark-Compact \(reduce\)/, 'a memory-reducing full GC');
  // Nothing allocates at idle, so no full GC of V8's own starts another wait, and its own GCs must not either: after
  // 10 s (> its 8 s wait) every requested GC still belongs to the first shrink (V8 runs it as a few GCs in a row).
  await new Promise((r) => setTimeout(r, 10_000));
  const at = shrinks().map((l) => Number(/(\d+) ms: /.exec(l)?.[1]));
  assert.ok(at.every((ms) => ms - at[0] < 1_000), `GCs requested while idle:\n${shrinks().join('\n')}`);
  assert.equal(await g.stop(), 0);
});
