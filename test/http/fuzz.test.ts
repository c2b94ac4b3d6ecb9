// Route-table fuzzer in CI: every registered route gets hostile shapes for FUZZ_SECONDS (default 20; `npm run bench --
// fuzz` runs long); any 5xx, dropped request or crash fails, nothing outside the uploads folder may be touched, and
// every route must have been reached. FUZZ_SEED replays a run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { fuzz, describeFindings } from './fuzz-engine.ts';

const SECONDS = Number(process.env.FUZZ_SECONDS ?? 20);

test(`fuzzing every route for ${SECONDS} s finds no 5xx and no crash`, { timeout: (SECONDS + 120) * 1000 }, async (t) => {
  const s = await startTestServer(t);
  await writeFile(join(s.baseDir, 'canary.gcode'), 'canary\n');
  await mkdir(join(s.paths.uploads, 'parts'), { recursive: true });
  await writeFile(join(s.paths.uploads, 'cube.gcode'), 'G28\nG1 X10 E1\n');
  await writeFile(join(s.paths.uploads, 'parts', 'cube.gcode'), 'G28\n');
  // Links out of every served folder (uploads, timelapse, logs) to a file whose content no answer may hold; named as
  // the segments and bodies the fuzzer draws name files ('x', a movie, a log, a G-code file).
  const SECRET = 'gantry-fuzz-secret-7f3a';
  const secret = join(s.baseDir, 'secret.txt');
  await writeFile(secret, `${SECRET}\n`);
  await mkdir(s.paths.timelapse, { recursive: true });
  for (const [folder, names] of [[s.paths.uploads, ['x', 'x.gcode', 'link.gcode']], [join(s.paths.uploads, 'parts'), ['x']],
    [s.paths.timelapse, ['x', 'x.mp4', 'link.mp4', 'x.jpg']], [s.paths.logs, ['x', 'x.log', 'link.log']]] as const) {
    for (const name of names) await symlink(secret, join(folder, name));
  }

  const result = await fuzz(s, { seconds: SECONDS, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined,
    maxBodyBytes: 1024 * 1024, secret: SECRET });
  t.diagnostic(`seed ${result.seed}: ${result.requests} requests in ${result.ms} ms; ${JSON.stringify(Object.fromEntries(result.statuses))}`);

  // Still alive and still answering, and the file outside the uploads folder is untouched.
  assert.equal((await fetch(`${s.url}/api/version`, { headers: { 'X-Api-Key': s.config.current.api.key ?? '' } })).status, 200);
  assert.equal(await readFile(join(s.baseDir, 'canary.gcode'), 'utf8'), 'canary\n');
  assert.equal(await readFile(secret, 'utf8'), `${SECRET}\n`, 'nothing wrote through a link');
  assert.ok(result.requests > SECONDS * 20, `only ${result.requests} requests`);
  assert.equal(result.findings.size, 0, `seed ${result.seed} found:\n${describeFindings(result)}`);
  assert.deepEqual(result.routes.filter((r) => !result.perRoute.has(r)), [], 'routes the run never reached');
});
