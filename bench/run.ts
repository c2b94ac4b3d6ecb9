// `npm run bench [-- name ...]`: runs every benchmark module below, one child process each, in order.
// Add a benchmark by adding its file name here; each module is a standalone script that prints its own figures.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BENCHMARKS = [
  'streaming.ts',
  'push.ts',
  'analysis.ts',
  'upload.ts',
  'memory.ts',
  'api.ts',
  'mqtt-scale.ts',
  'recovery-journal.ts',
  'library.ts',
  'busy-heap.ts',
  'moonraker-clients.ts',
];

/** Long runs (attacks, the plugin and timelapse pairs): only when named (`npm run bench -- fuzz`, `-- plugins-stream`). */
const ON_REQUEST = ['fuzz.ts', 'memory-load.ts', 'plugins-stream.ts', 'timelapse.ts'];

const wanted = process.argv.slice(2);
let failed = 0;
for (const file of [...BENCHMARKS, ...ON_REQUEST.filter((f) => wanted.some((w) => f.includes(w)))]) {
  if (wanted.length && !wanted.some((w) => file.includes(w))) continue;
  console.log(`\n=== bench/${file}`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL(file, import.meta.url))], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
