// Runs several test files in one Node process (scripts/test.mjs makes the groups): each file becomes a suite named by
// its path, so its hooks stay its own and a failure still names the file. Why: a process that loads tsx and the src
// tree costs ~1.6 s of CPU before its first test; a group pays that once instead of once per file.
// TEST_CPU=1 prints each file's CPU time (this process and its reaped children) as a `# cpu` line.
import { after, before, describe } from 'node:test';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** User+system ms of this process and of the child processes it has waited for (the CLI, socat, chromium). */
function cpuMs() {
  const own = process.cpuUsage();
  let children = 0;
  try {
    // /proc/self/stat: fields 16 and 17 (cutime, cstime) in clock ticks, counted after the command name's ')'.
    const fields = readFileSync('/proc/self/stat', 'utf8').split(')').pop().trim().split(' ');
    children = (Number(fields[13]) + Number(fields[14])) * 10;
  } catch { /* not Linux: own time only */ }
  return (own.user + own.system) / 1000 + children;
}

export function runFiles(files) {
  for (const file of files) {
    // No suite timeout: --test-timeout bounds each test inside, as when the file ran alone.
    describe(file, { timeout: Infinity }, async () => {
      if (process.env.TEST_CPU === '1') {
        let start = 0;
        before(() => { start = cpuMs(); });
        after(() => { console.log(`cpu ${file} ${Math.round(cpuMs() - start)}`); });
      }
      await import(pathToFileURL(resolve(file)).href);
    });
  }
}
