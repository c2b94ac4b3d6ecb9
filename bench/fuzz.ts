// Long fuzz run (`npm run bench -- fuzz`, FUZZ_SECONDS default 600, FUZZ_SEED to replay): the CI fuzzer's engine against
// a fresh server on loopback; prints requests, statuses and every distinct 5xx, and exits 1 when it found any.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../test/helpers/server.ts';
import { fuzz, describeFindings } from '../test/http/fuzz-engine.ts';

const seconds = Number(process.env.FUZZ_SECONDS ?? 600);
const s = await startTestServer(undefined);
await mkdir(join(s.paths.uploads, 'parts'), { recursive: true });
await writeFile(join(s.paths.uploads, 'cube.gcode'), 'G28\nG1 X10 E1\n');
let last = Date.now();
const result = await fuzz(s, {
  seconds,
  seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined,
  concurrency: Number(process.env.FUZZ_CONCURRENCY ?? 4),
  onProgress: (r) => {
    if (Date.now() - last < 30_000) return;
    last = Date.now();
    const mem = process.memoryUsage();
    console.log(`${r.requests} requests, ${r.findings.size} findings, rss ${Math.round(mem.rss / 1e6)} MB heap ${Math.round(mem.heapUsed / 1e6)} MB`);
  },
});
const alive = (await fetch(`${s.url}/api/version`, { headers: { 'X-Api-Key': s.config.current.api.key ?? '' } })).status;
console.log(`seed ${result.seed}: ${result.requests} requests in ${(result.ms / 1000).toFixed(0)} s (${Math.round(result.requests / (result.ms / 1000))}/s); server still answers: ${alive}`);
console.log(`statuses: ${JSON.stringify(Object.fromEntries(result.statuses))}`);
console.log(result.findings.size === 0 ? 'no 5xx found' : `${result.findings.size} distinct 5xx:\n${describeFindings(result)}`);
await s.stop();
process.exit(result.findings.size === 0 && alive === 200 ? 0 : 1);
