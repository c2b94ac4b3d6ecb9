#!/usr/bin/env node
// Launcher for the `gantry` command: runs the server built into dist/ by `npm run build` with plain node, no TypeScript loader.
// Built-ins are taken after the re-execution below, so that the process image it replaces loads none of them for nothing
// (Node 24: that image runs 117 → 89 million instructions, valgrind).

// glibc's malloc keeps what it once held: the 64 KB buffers of one 36 MB upload grew the process by ≈ 20 MB for good
// (freed, but pinned by smaller allocations above them), and each thread's arena keeps its own. Allocations of 64 KB
// and up get their own mappings instead (returned at free), and threads share two arenas: idle 70 → 67 MB, streaming
// a print after an upload 106 → 78 MB (bench/memory.ts). glibc reads these only at process start, so the launcher
// re-executes itself once with them set (process.execve, Node ≥ 22.15: the same process, no second one), unless they
// are set already or GANTRY_MALLOC_TUNING=0. Older Nodes run without (set them in the environment to get them). The
// `gantry` command (bin/gantry) and the systemd unit start node with them, and with the V8 options below: one boot.
const MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: '65536', MALLOC_ARENA_MAX: '2' };
const tuneMalloc = process.platform === 'linux' && process.env.GANTRY_MALLOC_TUNING !== '0'
  && Object.keys(MALLOC_ENV).some((k) => process.env[k] === undefined);
// After each full GC V8 lets a heap grow by at least 8 MB before the next, however small its live data: while printing,
// the link thread's heap (≈ 7 MB live) sawed 7 → 15 MB every 30–40 s, and RSS with it. V8's memory balancer (V8 ≥ 12.4:
// Node ≥ 22) sizes that headroom from the heap's allocation rate and GC speed instead, 2 MB at least. Printing to a 200
// µs/line firmware, RSS median / highest on Node 24: 95.5 / 102.2 → 93.6 / 94.8 MB (bench/memory.ts); API throughput
// without a print the same within the bench's noise (bench/api.ts), but while a print runs GET /api/printer under wrk
// -c64 answered ≈ 30 % fewer requests (≈ 21,000 against 27,000–31,000 req/s; the print kept its pace). Real clients
// poll a few times a second; a small board's memory counts more. Where allocation is fast the balancer gives more room,
// not less: streaming to the virtual printer at 100,000 lines/s peaked higher (Node 24 108 → 145–157 MB). Its constant
// at 10× V8's default cut that peak to 111 MB but cost ≈ 30 % of the mixed API workload's throughput, so it stays at
// V8's default. V8 reads the switch only when a heap is set up (set at run time, it crashes), so it goes on node's
// command line by the same re-execution, with --expose-gc for the heap shrinking below.
// The systemd unit that `gantry install-service` writes names both on node's command line (and sets the malloc
// variables), so a service starts without the re-execution, a second boot of node.
// With them goes a ceiling on the young generation's semi-spaces, which may grow while requests keep the main thread
// busy (below): 2 MB, twice what it holds otherwise.
const SEMI_SPACE_MB = 2;
/** The memory balancer's constant while the server is busy (below), and V8's own (the same in V8 12 to 14). */
const BUSY_BALANCER_C = 3e-13;
const V8_BALANCER_C = 3e-10;
const [v8Major, v8Minor] = process.versions.v8.split('.').map(Number);
const nodeFlagsAtStart = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
const balancerNamed = /--(no-)?memory[-_]balancer(?![-_\w])/.test(nodeFlagsAtStart);
const addBalancer = process.env.GANTRY_V8_FLAGS === undefined && v8Major * 100 + v8Minor >= 1204 && !balancerNamed;
if (process.platform === 'linux' && typeof process.execve === 'function' && (tuneMalloc || addBalancer)) {
  const semiSpaceNamed = /--max[-_]semi[-_]space[-_]size\b/.test(nodeFlagsAtStart);
  const v8Options = addBalancer ? ['--memory-balancer', '--expose-gc', ...(semiSpaceNamed ? [] : [`--max-semi-space-size=${SEMI_SPACE_MB}`])] : [];
  process.execve(process.execPath, [process.execPath, ...v8Options, ...process.execArgv, ...process.argv.slice(1)],
    tuneMalloc ? { ...MALLOC_ENV, ...process.env } : process.env);
}
const { existsSync } = process.getBuiltinModule('node:fs');
const { subscribe, unsubscribe } = process.getBuiltinModule('node:diagnostics_channel');
const module = process.getBuiltinModule('node:module');
const { constants: perfConstants, PerformanceObserver } = process.getBuiltinModule('node:perf_hooks');
const { setFlagsFromString } = process.getBuiltinModule('node:v8');

// Without the balancer (Node 20's V8 has none; Node < 22.15 cannot re-execute), each thread of the server keeps its
// heap within 4 MB above its live data itself, with a full GC when it grew past that (src/core/gc.ts). Printing to a
// 200 µs/line firmware on Node 20, RSS lowest / median / highest 90.2 / 98.3 / 105.5 → 89.4 / 94.4 / 98.2 MB, and
// 82–83 / 88 / 91.5 MB with the systemd unit's malloc settings (bench/memory.ts). API throughput without a print the
// same (bench/api.ts: the main thread does not collect while its event loop is busy); GET /api/printer under wrk -c64
// while printing answered ≈ 15 % fewer requests (medians of 4: 20,500 against 23,900 req/s; the print kept its pace),
// the same kind of trade as the balancer's. GANTRY_HEAP_HEADROOM_MB set beforehand wins (0: off).
// (In the re-executed process, the balancer the launcher added counts as named.)
if (process.env.GANTRY_V8_FLAGS === undefined && !balancerNamed) {
  process.env.GANTRY_HEAP_HEADROOM_MB ??= '4';
}

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('gantry: the server is not built (dist/cli.js is missing): run `npm run build` in the checkout\n');
  process.exit(1);
}
// What must run once the server answers while V8's flags are still those of the start (dist/'s code caches, at the
// end): subscribed before the handlers below that change them.
const whileStartFlags = [];
const atServing = () => {
  unsubscribe('gantry:serving', atServing);
  for (const run of whileStartFlags) run();
};
subscribe('gantry:serving', atServing);
// Node's built-in modules come with V8 code caches made under V8's default flags, and V8 rejects a cache made under
// other flags: once the flags below are set, each built-in that loads is compiled from its source. The built-ins a
// server loads as it starts are loaded here first, before any flag: start to first answer ≈ 3 % fewer instructions
// (Node 20: 1.88 → 1.82 billion, valgrind), idle RSS unchanged. Not where node's command line holds V8 flags (the
// re-execution above, Node ≥ 22.15): Node's module loader and the launcher's imports load without their caches
// there whatever it does, and loading the rest with theirs (the flags switched off for that moment) kept 2.5 MB more
// of node's binary resident at idle (Node 26: 62.4 → 64.9 MB: the caches' data), more than that line can spare.
// `cluster` comes with every listening server (node:net loads it), and with it child_process, dgram and dns.
const STARTUP_BUILTINS = ['events', 'buffer', 'util', 'util/types', 'async_hooks', 'timers', 'path', 'querystring', 'url', 'string_decoder',
  'os', 'stream', 'stream/promises', 'fs/promises', 'crypto', 'worker_threads', 'assert', 'net', 'http', 'cluster', 'dns', 'process'];
if (process.argv.slice(2).includes('serve') && !balancerNamed) {
  for (const id of STARTUP_BUILTINS) process.getBuiltinModule(`node:${id}`);
  // Exports whose code Node loads on first access: the command line's parser, and what a listening socket reads.
  void [process.getBuiltinModule('node:util').parseArgs, process.getBuiltinModule('node:net').BlockList, process.getBuiltinModule('node:net').SocketAddress];
}
// Node's own options naming one of V8's compilers leave the compilers (below) to them.
const nodeFlags = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
const compilersNamed = /--(no-)?(turbofan|opt|maglev|max-opt|sparkplug)\b/.test(nodeFlags);
// Sized for a small board: V8 favours memory over peak speed (smaller compiled code, a young generation shrunk when
// idle): ≈ 13 MB less idle RSS (bench/memory.ts); and the young generation never grows past its first 2 MB
// (--semi-space-growth-factor=1; V8 doubles it up to 16 MB under allocation, as while streaming a print, and keeps it).
// V8's memory reducer (the idle-time GCs that shrink the heap after start) waits 8 s up to Node 24, 30 s from Node 26
// (V8 14): it starts after 8 s on every line (--gc-memory-reducer-start-delay-ms). Node 26 idle RSS 15 s after start
// 69.5 → 65.5 MB, 35 s after 66.7 → 65.5 MB (bench/memory.ts).
// Set at run time, before anything allocates much, so `node bin/gantry.js`, the systemd unit and `npm start` all get it.
// GANTRY_V8_FLAGS replaces the list (empty: V8's defaults). Heap sizes (--max-semi-space-size, --max-old-space-size)
// are fixed when V8 starts and only work on node's command line or in NODE_OPTIONS.
// Maglev, V8's mid-tier compiler (built into Node ≥ 24), stays off: TurboFan alone, as on Node 22. It compiles hot code
// a second time (its code and the malloc of its compile jobs stay), for speed only in the first seconds of a workload:
// on Node 24, streaming a print 117 → 108 MB (median), 3 s after an analysis 93 → 87 MB (bench/memory.ts); API
// throughput over 10 s runs the same (bench/api.ts, without / with: /api/version 35,138 / 34,642 req/s, mixed 27,611 /
// 26,817); only a 3 s run right after start is slower (mixed 16,764 / 26,416).
const maglevBuiltIn = process.config.variables.v8_enable_maglev === 1;
const V8_FLAGS = process.env.GANTRY_V8_FLAGS ?? `--optimize-for-size --semi-space-growth-factor=1 --gc-memory-reducer-start-delay-ms=8000${maglevBuiltIn && !compilersNamed ? ' --no-maglev' : ''}`;
// --optimize-for-size waits until the server answers (as the compilers do, below): under it V8 ran a memory-reducing
// full GC in the middle of the start, and the start's CPU time was larger by more than that GC. Start to first answer,
// medians of 7–9 alternating restarts, wall / CPU ms: Node 20 475 → 430 / 520 → 440, Node 22 631 → 561 / 670 → 560,
// Node 24 507 → 478 / 530 → 490, Node 26 508 → 473 / 540 → 480; idle RSS 15 and 35 s after start the same or lower
// (Node 24 63.1 → 62.3 MB, Node 26 64.0 → 62.9, Node 22 60.7 → 59.7, Node 20 57.1 → 57.0).
// The young generation's cap waits too: a start allocates ≈ 10 MB that nearly all lives on (modules, schemas, routes),
// and held at 1 MB the young generation was scavenged 20 times on the way, copying the same objects again and again.
// Allowed to grow (up to the ceiling on node's command line, or V8's own on Node 20), it is scavenged 10 times. Start
// to first answer, Node 24: 1.255 → 1.112 billion instructions (valgrind); idle RSS the same (bench/memory.ts: the
// reducing GCs after start shrink it back).
const untilServing = new Set(process.env.GANTRY_V8_FLAGS === undefined ? ['--optimize-for-size', '--semi-space-growth-factor=1'] : []);
const applyV8Flags = () => {
  for (const flag of V8_FLAGS.split(/\s+/).filter(Boolean)) if (!untilServing.has(flag)) setFlagsFromString(flag);
};
applyV8Flags();
if (untilServing.size) {
  const serving = () => {
    unsubscribe('gantry:serving', serving);
    untilServing.clear();
    applyV8Flags();
  };
  subscribe('gantry:serving', serving);
}
// Starting a worker thread (the G-code analyser) puts some of them back to V8's defaults (the young generation grew
// to 16 MB again afterwards): set them again once each worker runs.
process.on('worker', (worker) => worker.once('online', applyV8Flags));
// Start-up code (module bodies, plugin and route registration) runs once, but V8 drops a function's bytecode only
// after it went unused through 5–6 full GCs, which an idle server does not reach: for the first 45 s one unused full
// GC is enough. The idle-time GCs of V8's memory reducer fall in it (≈ 8 s after start; Node 26 left alone starts them
// at ≈ 30 s): idle RSS after them 67.3 → 65.3 MB (Node 20), 70.3 → 68.9 MB (Node 26, where a 20 s window missed them). Then
// back to V8's usual age, so that what a busy server calls only now and then is not recompiled again and again (with
// age 1 for good, GET /api/settings cost ≈ 8 % more CPU per request: bench/api.ts).
if (process.env.GANTRY_V8_FLAGS === undefined) {
  setFlagsFromString('--bytecode-old-age=1');
  setTimeout(() => setFlagsFromString('--bytecode-old-age=5'), 45_000).unref();
}
// Start-up code is hot only once (schema compilation, config validation, YAML, route registration), yet V8's compilers
// compiled it: TurboFan for speed, Sparkplug into baseline code: code and compiler memory nothing used again, and the
// compilers' own pages of the node binary faulted in. Until the server answers (src/cli.ts publishes on
// 'gantry:serving') both are off and Ignition alone runs it; from then on V8 compiles what serving makes hot as usual.
// Idle RSS 15 s after start, Node 20: 64.3 → 59.5 MB holding TurboFan, → 58.4 holding Sparkplug too (Node 22: 67.0 →
// 65.4); first answer (medians of 7 restarts) Node 20 293 → 300 ms, Node 22 and 26 unchanged. Other commands (user,
// apikey) end before compiling would pay.
if (process.env.GANTRY_V8_FLAGS === undefined && !compilersNamed) {
  setFlagsFromString('--no-turbofan');
  setFlagsFromString('--no-sparkplug');
  const serving = () => {
    setFlagsFromString('--turbofan');
    setFlagsFromString('--sparkplug');
    unsubscribe('gantry:serving', serving);
  };
  subscribe('gantry:serving', serving);
}
// Compiling Sparkplug code on a background thread (V8's default from Node 24) is what left a stopping server hung in
// its exit: the compile job waited for a GC that the exiting main thread never ran (src/core/process-end.ts). Compiled
// on the main thread, as up to Node 22: API throughput the same within the bench's noise (Node 24, bench/api.ts, two
// runs each way). Unless node's own options name it.
if (!/--(no-)?concurrent[-_]sparkplug\b/.test(nodeFlags)) setFlagsFromString('--no-concurrent-sparkplug');
// The memory balancer turns V8's memory reducer off (V8 implies it): the GCs that shrink a heap once the process has
// gone quiet, after start and after a print, an upload or a burst of requests. Without them idle RSS stayed ≈ 4 MB
// higher (Node 24, 15 s after start: 63.8 → 67.9 MB). The launcher stands in for them on the main thread with V8's
// last-resort GC (it compacts and returns free pages, as the reducer's did; 10–40 ms at idle): 8 s after the server
// answers, and 8 s after any other full GC once those 8 s were quiet (no full GC in them, the event loop under 5 %
// busy; else it waits 8 s more). An idle server does no full GC, so nothing wakes it. The function is the global `gc`
// that --expose-gc defines (V8 makes it undeletable; nothing else calls it).
const v8Gc = globalThis.gc;
if (/--memory[-_]balancer(?![-_\w])/.test(process.execArgv.join(' ')) && typeof v8Gc === 'function') {
  const QUIET_MS = 8_000;
  let lastFullGc = 0;
  let waiting = false;
  const own = { from: -1, to: -1 };
  const shrinkHeap = () => {
    own.from = performance.now();
    v8Gc({ type: 'major', flavor: 'last-resort' });
    own.to = performance.now();
  };
  const shrinkOnceQuiet = (afterStart = false) => {
    if (waiting) return;
    waiting = true;
    const since = performance.now();
    const loop = performance.eventLoopUtilization();
    setTimeout(() => {
      waiting = false;
      // A full GC of V8's own right after start (as the balancer's first limits make) is no sign of work going on.
      if ((afterStart || lastFullGc < since) && performance.eventLoopUtilization(loop).utilization < 0.05) shrinkHeap();
      else shrinkOnceQuiet();
    }, QUIET_MS).unref();
  };
  // While the main thread's event loop is at least half busy (looked at once a second, on a scavenge: an idle server
  // is not woken), two of V8's settings make room for requests answered as fast as they come:
  // - The young generation, held at 1 MB (--semi-space-growth-factor=1, above), may grow again, up to the ceiling on
  //   node's command line (SEMI_SPACE_MB). At 1 MB a scavenge ran every 2–3 ms (≈ 5 % of the CPU). Mixed API workload
  //   on Node 24, 6 alternating rounds: 17,500 → 19,400 req/s (medians; scavenges 400 → 170 a second); the static
  //   ceiling alone (growth always allowed) did +21 % but printing to a 200 µs/line firmware took 3–4 MB more RSS; this
  //   way lowest / median / highest 91.4 / 93.5 / 94.3 MB, as without (bench/memory.ts). V8 14 (Node 26) does not grow
  //   a young generation under --optimize-for-size whatever the factor. Only under a ceiling: a unit written by an
  //   older install-service has none, and V8's own is 16 MB or more.
  // - The balancer's constant drops to a thousandth of V8's (BUSY_BALANCER_C). Once a second the balancer recomputes
  //   each heap's limit, and there (V8 12, 13 and 14 alike, --trace-memory-balancer) it rates the full GC at 57–113
  //   MB/ms against the 0.4–1 MB/ms it measured at the GC itself, so the limit falls to its floor, 2 MB over what the
  //   last full GC kept. Objects of requests in flight reach the old generation at ≈ 1 MB/s, so a full GC followed
  //   every second: a 5–11 ms pause each, and ≈ 100 ms of marking on the other core, where wrk ran. That was the mixed
  //   workload's p99. With the lower constant that floor is ≈ 13 MB up: 0–2 full GCs in 8 s. Node 24, 4–5 alternating
  //   rounds each, medians: mixed p99 7.0 → 3.4 ms and 6.8 → 4.3 ms in two runs, req/s the same; while printing to
  //   the virtual printer 8.2 → 5.3 ms, 12,600 → 15,100 req/s, RSS 98–105 → 105–113 MB. V8's flags are the process's,
  //   so the printer link's and the analyser's heaps get the same room meanwhile. 20 s after the load the process is
  //   back where it was (74.7 against 74.2 MB); bench/memory.ts (idle, an analysis, printing at a printer's pace) the
  //   same.
  // A print at a printer's pace leaves the loop under half busy: both stay as they were.
  const growthCapped = /--max[-_]semi[-_]space[-_]size\b/.test(nodeFlags);
  const balancerCNamed = /--memory[-_]balancer[-_]c[-_]value\b/.test(nodeFlags);
  let busyWindow = { from: 0, loop: performance.eventLoopUtilization() };
  let busyNow = false;
  const afterScavenge = (at) => {
    if (at - busyWindow.from < 1_000) return;
    const busy = performance.eventLoopUtilization(busyWindow.loop).utilization >= 0.5;
    if (busy !== busyNow && process.env.GANTRY_V8_FLAGS === undefined) {
      busyNow = busy;
      applyBusyFlags();
    }
    busyWindow = { from: at, loop: performance.eventLoopUtilization() };
  };
  const applyBusyFlags = () => {
    if (growthCapped) setFlagsFromString(`--semi-space-growth-factor=${busyNow ? 2 : 1}`);
    if (!balancerCNamed) setFlagsFromString(`--memory-balancer-c-value=${busyNow ? BUSY_BALANCER_C : V8_BALANCER_C}`);
  };
  // A worker that comes online has the launcher's flags set again (above), the idle growth factor among them.
  process.on('worker', (worker) => worker.once('online', () => { if (busyNow) applyBusyFlags(); }));
  // Its own GCs (known by their time: V8 flags them like any other) do not start another wait.
  const gcs = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.detail.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) afterScavenge(entry.startTime);
      if (entry.detail.kind !== perfConstants.NODE_PERFORMANCE_GC_MAJOR || (entry.startTime >= own.from && entry.startTime <= own.to)) continue;
      lastFullGc = entry.startTime;
      shrinkOnceQuiet();
    }
  });
  const servingThenShrink = () => {
    unsubscribe('gantry:serving', servingThenShrink);
    // The start itself kept the loop busy: that is no sign of requests.
    busyWindow = { from: performance.now(), loop: performance.eventLoopUtilization() };
    shrinkOnceQuiet(true);
    gcs.observe({ entryTypes: ['gc'] });
  };
  subscribe('gantry:serving', servingThenShrink);
}
// Node ≥ 22.1 keeps compiled code of dist/ on disk between starts; older Nodes lack the call. A start without it
// compiles every module again: Node 24, medians of 7, 424 → 471 ms to the first answer; Node 26 idle RSS 15 s after
// start 63.1–63.4 MB with it, 63.1–65.2 without (three starts each). Node's own place for it is the temp folder,
// which Debian and Ubuntu empty at every boot, so a service's start after a boot, the start that matters most, never
// had it. It goes to the user's cache folder instead ($XDG_CACHE_HOME or ~/.cache, gantry/compile-cache), one folder
// per install and build: an install's folders of earlier builds are removed when a new build first starts (their
// entries would only pile up: each build's chunks have new names). NODE_COMPILE_CACHE set, or no usable cache
// folder: Node's own choice.
const cacheFolder = compileCacheFolder();
if (module.enableCompileCache) {
  const { status } = module.enableCompileCache(cacheFolder) ?? {};
  if (status === module.constants.compileCacheStatus.FAILED) module.enableCompileCache();
}
function compileCacheFolder() {
  if (process.env.NODE_COMPILE_CACHE) return undefined;
  const { readFileSync, readdirSync, rmSync } = process.getBuiltinModule('node:fs');
  const { join } = process.getBuiltinModule('node:path');
  const { createHash } = process.getBuiltinModule('node:crypto');
  let home = '';
  try {
    home = process.getBuiltinModule('node:os').homedir();
  } catch { /* no home directory: XDG_CACHE_HOME or nothing */ }
  const base = process.env.XDG_CACHE_HOME || (home && join(home, '.cache'));
  if (!base) return undefined;
  const short = (data) => createHash('sha1').update(data).digest('hex').slice(0, 12);
  const install = short(cli.pathname);
  // cli.js names the chunks it imports, whose names are hashes of their content (and of the chunks they import).
  const build = `${install}-${short(readFileSync(cli))}`;
  const folders = join(base, 'gantry', 'compile-cache');
  if (!existsSync(join(folders, build))) {
    try {
      // Not this build's, which a server started beside this one may be making now.
      for (const name of readdirSync(folders)) {
        if (name.startsWith(`${install}-`) && name !== build) rmSync(join(folders, name), { recursive: true, force: true });
      }
    } catch { /* no cache folder yet */ }
  }
  return join(folders, build);
}
// Node holds the cache's data for every module it loaded until it writes the cache, at exit: written once the server
// answers (right after, not in the way of the first request), that memory is freed. Idle RSS 15 s after start: Node 22
// 61.9 → 60.9 MB, Node 26 65.4 → 64.2 (bench/memory.ts); what loads later (MQTT, archives) is still cached at exit.
if (module.flushCompileCache) {
  const flushCompileCache = () => {
    unsubscribe('gantry:serving', flushCompileCache);
    setImmediate(() => module.flushCompileCache());
  };
  subscribe('gantry:serving', flushCompileCache);
}
// Source-mapped stack traces (src/*.ts lines) only when asked for: Node reads and decodes each chunk's map as the chunk
// loads, ≈ 4 MB of heap held all day and ≈ 40 ms of start (bench/memory.ts). Without them traces still name the
// functions (the bundle keeps names) at dist/ lines. GANTRY_SOURCE_MAPS=1, a debug/trace log level or node's own
// --enable-source-maps turn them on.
const logLevel = process.argv.find((a, i) => process.argv[i - 1] === '--log-level' || a.startsWith('--log-level='))?.replace(/^--log-level=/, '') ?? process.env.GANTRY_LOG_LEVEL;
const sourceMaps = process.env.GANTRY_SOURCE_MAPS === '1' || logLevel === 'debug' || logLevel === 'trace';
if (sourceMaps) process.setSourceMapsEnabled(true);
// dist/ is CommonJS (scripts/build.mjs): each file a script, whose V8 code cache can be made after it ran. Node's
// compile cache makes a file's cache as it is compiled, before it runs: its top-level code only, and every function a
// start calls was compiled again at every start. Until the server answers, dist/'s files are compiled here instead,
// each with the code cache this launcher made at an earlier start; once the server answers (V8's flags still those of
// the start: V8 rejects a cache made under other flags), each file compiled without an accepted cache has its cache
// made, with every function compiled so far, and written beside Node's (one per file and V8 version). Start to first
// answer, Node 24: 1.02–1.07 → 0.84 billion instructions (valgrind); medians of 11 alternating restarts 378 → 339 ms
// (bare Fastify 258), Node 26 368 → 329 ms, Node 22 367 → 341 ms (7 each); idle RSS the same or 0.2–0.5 MB lower. The
// start that makes the caches (the first of a build) costs ≈ 0.4 billion more. Files loaded later (MQTT, archives),
// worker threads and other commands are compiled by Node as before, and so is everything with source maps on (Node's
// own loader applies them).
const serveCommand = process.argv.slice(2).includes('serve');
if (serveCommand && !sourceMaps && cacheFolder !== undefined && module.prototype?._compile) keepDistCodeCaches(cacheFolder);
module.createRequire(import.meta.url)(process.getBuiltinModule('node:url').fileURLToPath(cli));

function keepDistCodeCaches(folder) {
  const vm = process.getBuiltinModule('node:vm');
  const { basename, dirname } = process.getBuiltinModule('node:path');
  const fs = process.getBuiltinModule('node:fs');
  const distDir = dirname(process.getBuiltinModule('node:url').fileURLToPath(cli));
  const compile = module.prototype._compile;
  const toCache = [];
  const cacheFile = (filename) => `${folder}/gantry-${basename(filename)}-v8-${process.versions.v8}.cache`;
  module.prototype._compile = function compileWithCodeCache(content, filename, format) {
    if (dirname(filename) !== distDir || (format !== undefined && format !== 'commonjs')) return Reflect.apply(compile, this, arguments);
    let cachedData;
    try {
      cachedData = fs.readFileSync(cacheFile(filename));
    } catch { /* none yet */ }
    const script = new vm.Script(module.wrap(content), { filename, cachedData, importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER });
    if (cachedData === undefined || script.cachedDataRejected) toCache.push({ script, filename });
    const wrapper = script.runInThisContext({ displayErrors: true });
    return Reflect.apply(wrapper, this.exports, [this.exports, module.createRequire(filename), this, filename, distDir]);
  };
  whileStartFlags.push(() => {
    module.prototype._compile = compile;
    if (toCache.length === 0) return;
    try {
      fs.mkdirSync(folder, { recursive: true });
      for (const { script, filename } of toCache.splice(0)) {
        const to = cacheFile(filename);
        const tmp = `${to}.${process.pid}.tmp`;
        try {
          fs.writeFileSync(tmp, script.createCachedData());
          fs.renameSync(tmp, to);
        } catch (err) {
          fs.rmSync(tmp, { force: true });
          throw err;
        }
      }
    } catch { /* a read-only or full disk: the next start compiles as this one did */ }
  });
}
