// Test entry point: finds every *.test.ts under test/ and src/ and runs them with Node's test runner through tsx.
// Usage: npm test [-- path-or-substring ...]   (arguments narrow the set of files)
// Files that fail are run once more, alone (TEST_RETRY=0 turns that off): on a loaded 2-core machine a timing-bound
// end-to-end test can miss once; a test that really fails fails again, and every retried file is named in the output.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
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

/** Runs the files; resolves to the exit code and the test files that reported a failure. */
function run(files, concurrency) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-timeout=180000', ...files], {
      stdio: ['inherit', 'pipe', 'inherit'],
    });
    let tail = '';
    const failed = new Set();
    let inFailure = false;
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      const lines = (tail + chunk.toString()).split('\n');
      tail = lines.pop() ?? '';
      for (const line of lines) {
        const trimmed = line.trimStart();
        if (/^not ok \d+ - /.test(trimmed)) {
          inFailure = true;
          // A file-level failure names the file itself.
          const file = files.find((f) => trimmed.endsWith(f) || trimmed.endsWith(join(process.cwd(), f)));
          if (file) failed.add(file);
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

// The longest files start first, so the run does not end with one of them alone on a core while the rest is done.
const SLOW_FIRST = ['test/http/fuzz', 'test/e2e/runtime/install', 'test/access/cli', 'test/system/languages', 'test/http/permission-matrix',
  'test/files/analysis/machine-limits', 'test/e2e/', 'test/import/', 'test/mqtt/', 'test/timelapse/', 'test/slicing/', 'test/files/upload-stream',
  'test/transports/'];
const rank = (f) => {
  const i = SLOW_FIRST.findIndex((p) => f.includes(p));
  return i === -1 ? SLOW_FIRST.length : i;
};

const filters = process.argv.slice(2);
let files = [...walk('src'), ...walk('test')].sort();
if (filters.length) files = files.filter((f) => filters.some((x) => f.includes(x)));
files = files.map((f, i) => [rank(f), i, f]).sort((a, b) => a[0] - b[0] || a[1] - b[1]).map(([, , f]) => f);
if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
// Three files at a time on two cores: most tests wait on sockets, ptys, child processes and timers, not the CPU.
const concurrency = process.env.TEST_CONCURRENCY ?? '3';
const first = await run(files, concurrency);
if (first.code === 0 || process.env.TEST_RETRY === '0') process.exit(first.code);
if (first.failed.length === 0 || first.failed.length > 5) {
  console.log(`# ${first.failed.length || 'no'} failing test files identified: not retrying`);
  process.exit(first.code);
}
console.log(`# retrying ${first.failed.length} failed test file(s) once, alone: ${first.failed.join(', ')}`);
const second = await run(first.failed, '1');
console.log(second.code === 0
  ? `# the retried files passed on their second run (flaky under load): ${first.failed.join(', ')}`
  : '# the retried files failed again');
process.exit(second.code);
