// Test entry point: finds every *.test.ts under test/ and src/ and runs them with Node's test runner through tsx.
// Usage: npm test [-- path-or-substring ...]   (arguments narrow the set of files)
// Files run in TEST_GROUPS groups (18), several to a process (scripts/test-group.mjs), TEST_CONCURRENCY (6) processes
// at a time: that spares each file the ~1.6 s of CPU a process spends loading tsx and the src tree. TEST_ISOLATE=1
// gives every file its own process, as before; TEST_CPU=1 prints the CPU time of each file run in a group;
// TEST_LIST_GROUPS=1 prints the groups and runs nothing.
// Files that fail are run once more, alone (TEST_RETRY=0 turns that off): on a loaded 2-core machine a timing-bound
// end-to-end test can miss once; a test that really fails fails again, and every retried file is named in the output.
// A test process still alive 30 s after its last test (TEST_EXIT_GRACE_MS) fails, naming what keeps it alive
// (scripts/test-watchdog.mjs): a leak fails the run instead of hanging it.
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawn } from 'node:child_process';

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

// The tests' temporary files go to a folder of this run's own (TMPDIR), removed when the run ends: whatever a test
// left behind there is named, so a leak shows instead of piling up in /tmp run after run.
const RUN_TMP = mkdtempSync(join(tmpdir(), 'gantry-test-run-'));
const GROUP_DIR = join(RUN_TMP, '.groups');
mkdirSync(GROUP_DIR);
// Except the compile caches, which stay where they were, so a run starts as warm as the last one left them: tsx's
// (tsx-<uid>) and Node's (node-compile-cache, enabled by bin/gantry.js for the servers the tests start).
const CACHES = [`tsx-${process.getuid?.() ?? 'user'}`, 'node-compile-cache'];
for (const name of CACHES) {
  mkdirSync(join(tmpdir(), name), { recursive: true, mode: 0o700 });
  symlinkSync(join(tmpdir(), name), join(RUN_TMP, name));
}
process.on('exit', () => {
  const left = readdirSync(RUN_TMP).filter((name) => name !== '.groups' && !CACHES.includes(name));
  if (left.length) console.log(`# ${left.length} temporary file(s) the tests left behind, now removed: ${left.slice(0, 20).join(', ')}${left.length > 20 ? ', …' : ''}`);
  rmSync(RUN_TMP, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 });
});
const WATCHDOG = pathToFileURL(join(import.meta.dirname, 'test-watchdog.mjs')).href;
const groupModule = pathToFileURL(join(import.meta.dirname, 'test-group.mjs')).href;
let groupCount = 0;

/** An entry file that runs `files` in one process; node --test takes it for one test file. */
function groupEntry(files) {
  const path = join(GROUP_DIR, `group-${++groupCount}.mjs`);
  writeFileSync(path, `import { runFiles } from ${JSON.stringify(groupModule)};\nrunFiles(${JSON.stringify(files)});\n`);
  return path;
}

/** Runs the groups (arrays of files); resolves to the exit code and the test files that reported a failure. */
function run(groups, concurrency) {
  const files = groups.flat();
  const entries = groups.map((g) => (g.length === 1 ? g[0] : groupEntry(g)));
  return new Promise((resolve) => {
    // TAP on every Node: the failed files to retry are read from it, and Node ≥ 23 would otherwise print its spec format.
    // Node 20 bounds each test file's process by --test-timeout as a whole (Node 24: each test in it): a group is
    // several files, up to ≈ 140 s of them on a loaded 2-core machine (with 12 groups, 160–180 s: a fresh clone's
    // first run timed out at 180 s).
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', WATCHDOG, '--test', '--test-reporter=tap', `--test-concurrency=${concurrency}`, '--test-timeout=600000', ...entries], {
      stdio: ['inherit', 'pipe', 'inherit'],
      env: { ...process.env, TMPDIR: RUN_TMP },
    });
    let tail = '';
    const failed = new Set();
    let inFailure = false;
    let lastFile = null;
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      const lines = (tail + chunk.toString()).split('\n');
      tail = lines.pop() ?? '';
      for (const line of lines) {
        const trimmed = line.trimStart();
        const top = /^(?:not )?ok \d+ - (\S+\.test\.ts)$/.exec(line);
        if (top) lastFile = top[1];
        const took = /^ {2}duration_ms: ([\d.]+)/.exec(line);
        if (took && lastFile) {
          measured[lastFile] = Math.round(Number(took[1]) / 100) / 10;
          lastFile = null;
        }
        if (/^not ok \d+ - /.test(trimmed)) {
          inFailure = true;
          // A file-level failure names the file itself (its suite in a group), a group's failure its entry.
          const file = files.find((f) => trimmed.endsWith(f) || trimmed.endsWith(join(process.cwd(), f)));
          if (file) failed.add(file);
          const group = entries.findIndex((e) => trimmed.endsWith(e));
          if (group !== -1) for (const f of groups[group]) failed.add(f);
        } else if (/^ok \d+ - /.test(trimmed)) {
          inFailure = false;
        } else if (inFailure) {
          const m = /location: '([^']+?\.test\.ts):\d+:\d+'/.exec(trimmed);
          if (m) {
            const file = files.find((f) => m[1].endsWith(f) || relative(process.cwd(), m[1]) === f);
            if (file) failed.add(file);
          }
        }
      }
    });
    child.on('exit', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), failed: [...failed] }));
  });
}

// Each file's time in a whole run (seconds, scripts/test-times.json, from a full run on 2 cores; TEST_TIMES=PATH
// writes the table with this run's times, of files run in a group of several, to PATH): the groups are filled longest
// file first into the group with the least time so far, and the longest groups start first, so the run does not end
// with one slow group alone on the cores while the rest is done.
// A file not in the table counts as the table's median.
const TIMES = JSON.parse(readFileSync(join(import.meta.dirname, 'test-times.json'), 'utf8'));
const known = Object.values(TIMES).sort((x, y) => x - y);
const typical = known.length ? known[Math.floor(known.length / 2)] : 5;
const timeOf = (f) => TIMES[f] ?? typical;

const filters = process.argv.slice(2);
let files = [...walk('src'), ...walk('test')].sort();
if (filters.length) files = files.filter((f) => filters.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
// Six processes at a time on two cores: most tests wait on sockets, ptys, child processes and timers, not the CPU.
// With six the two cores stay busy but for the last seconds (vmstat; ≈ 540 s of CPU in a 291 s run): whole suite
// Node 20 346–371 → 296 s, Node 24 308 → 279–291 s against four (2 cores, 2026-11).
const concurrency = process.env.TEST_CONCURRENCY ?? '6';
/**
 * A file that imports other test files re-runs their tests under its own setup (test/import/compat-sequences.test.ts);
 * in a shared process those modules would already be loaded, so it gets a process of its own.
 */
const importsTests = (f) => /(?:import\(|from )\s*['"][^'"]+\.test\.ts['"]/.test(readFileSync(f, 'utf8'));
/**
 * A file that drives Chromium: each such file runs a browser beside its server, the heaviest load in the suite. They
 * share TEST_BROWSER_GROUPS (3) groups of their own, so at most that many browsers run at once, whatever the order:
 * with the longest groups first, the six longest files (all browser tests) used to start together, and on the slower
 * CI machine their pages then timed out.
 */
const drivesBrowser = (f) => /\b(?:launchBrowser|openPage)\(/.test(readFileSync(f, 'utf8'));
/** Longest file first into the group with the least time so far. */
function pack(list, count) {
  const sorted = [...list].sort((x, y) => timeOf(y) - timeOf(x) || (x < y ? -1 : 1));
  const groups = Array.from({ length: Math.min(count, sorted.length) }, () => ({ files: [], time: 0 }));
  for (const f of sorted) {
    const least = groups.reduce((m, g) => (g.time < m.time ? g : m));
    least.files.push(f);
    least.time += timeOf(f);
  }
  return groups;
}
/** The groups (browser files in their own few), ordered longest first. */
function makeGroups(list, count) {
  const alone = list.filter(importsTests);
  const browser = list.filter((f) => !alone.includes(f) && drivesBrowser(f));
  const shared = list.filter((f) => !alone.includes(f) && !browser.includes(f));
  const browserGroups = Number(process.env.TEST_BROWSER_GROUPS ?? 3);
  return [...alone.map((f) => ({ files: [f], time: timeOf(f) })), ...pack(browser, browserGroups), ...pack(shared, Math.max(1, count - browserGroups))]
    .sort((x, y) => y.time - x.time).map((g) => g.files);
}
const groups = process.env.TEST_ISOLATE === '1' ? files.map((f) => [f]) : makeGroups(files, Number(process.env.TEST_GROUPS ?? 18));
if (process.env.TEST_LIST_GROUPS === '1') {
  // The plan only (each group's files and their expected seconds), to see how a run will be packed.
  for (const g of groups) console.log(`${Math.round(g.reduce((t, f) => t + timeOf(f), 0))} s: ${g.join(' ')}`);
  process.exit(0);
}
const measured = {};
const first = await run(groups, concurrency);
if (process.env.TEST_TIMES) {
  const sorted = Object.fromEntries(Object.entries({ ...TIMES, ...measured }).sort(([x], [y]) => (x < y ? -1 : 1)));
  writeFileSync(process.env.TEST_TIMES, JSON.stringify(sorted, null, 0).replace(/,"/g, ',\n"').replace('{', '{\n').replace(/}$/, '\n}') + '\n');
}
if (first.code === 0 || process.env.TEST_RETRY === '0') process.exit(first.code);
if (first.failed.length === 0 || first.failed.length > 20) {
  console.log(`# ${first.failed.length || 'no'} failing test files identified: not retrying`);
  process.exit(first.code);
}
console.log(`# retrying ${first.failed.length} failed test file(s) once, alone: ${first.failed.join(', ')}`);
const second = await run(first.failed.map((f) => [f]), '1');
console.log(second.code === 0
  ? `# the retried files passed on their second run (flaky under load): ${first.failed.join(', ')}`
  : '# the retried files failed again');
process.exit(second.code);
