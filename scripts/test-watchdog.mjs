// Loaded into every test process (scripts/test.mjs): a process still alive well after its last test ends with a failure naming what keeps it alive, instead of stalling the run.
import { after } from 'node:test';

/** Time allowed after the last test for cleanup that is still under way (servers closing, child processes reaped). */
const GRACE_MS = Number(process.env.TEST_EXIT_GRACE_MS ?? 30_000);

// Only in the processes that run test files (the runner marks them), not in the runner that starts them.
if (process.env.NODE_TEST_CONTEXT) {
  after(() => {
    // Unref'd: a process that ends by itself never sees it. One kept alive by a leaked socket, timer, child or thread
    // would otherwise hang the whole run; --test-force-exit would hide the leak instead.
    setTimeout(() => {
      process.stderr.write(`test process ${process.argv.slice(1).join(' ')} still alive ${GRACE_MS / 1000} s after its last test, kept by: ${process.getActiveResourcesInfo().join(', ')}\n`);
      process.exit(1);
    }, GRACE_MS).unref();
  });
}
