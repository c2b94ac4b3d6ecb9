// Test helper: a fresh temporary folder that is removed again when the test (or suite) that asked for it ends.
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What `tempDir` needs of a test or suite context: somewhere to register the removal. */
interface Cleanup {
  after(fn: () => Promise<unknown>): void;
}

const made: string[] = [];
// After-hooks run in the order they were added, so a removal registered before a server's stop runs first, and
// the stopping server may write into the folder again (its log, a last save): what is left then goes at exit.
// The exit handler must be synchronous: an exit handler's promises never settle.
process.once('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 20 });
});

/**
 * Makes `<tmp>/<prefix>XXXXXX`, removed only when the process exits: for a folder whose users stop in after-hooks added
 * later than the test's own (servers started on it by helpers), which a per-test removal would precede.
 */
export async function tempDirUntilExit(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Makes `<tmp>/<prefix>XXXXXX` and removes it, whatever is in it, after `t` ends (and again at exit). */
export async function tempDir(t: Cleanup, prefix: string): Promise<string> {
  const dir = await tempDirUntilExit(prefix);
  // A server stopped in a later after-hook may still write into it (a metadata write waits up to a second for others
  // to join it): then the exit sweep removes what is left.
  t.after(() => rm(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 }).catch(() => {}));
  return dir;
}
