// Analysis queue: worker threads in parallel, progress callbacks, cancel (queued and running), missing files and crashing workers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AnalysisCancelledError, AnalysisQueue } from '../../../src/files/analysis/index.ts';
import { DomainError } from '../../../src/core/errors.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { prepareThread } from '../../../src/core/thread-code.ts';
import { needs } from '../../helpers/tools.ts';
import { GCODE_DIR } from '../../helpers/shared-data.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const BIG = join(GCODE_DIR, 'prusaslicer-2.5.0-debian_vase_0.1mm_generated.gcode');

async function tempGcode(t: test.TestContext, files: Record<string, string>): Promise<Record<string, string>> {
  const dir = await tempDir(t, 'gantry-queue-');
  const out: Record<string, string> = {};
  for (const [name, body] of Object.entries(files)) {
    out[name] = join(dir, name);
    await writeFile(out[name], body);
  }
  return out;
}

function startQueue(t: test.TestContext, opts: Partial<ConstructorParameters<typeof AnalysisQueue>[0]> = {}): AnalysisQueue {
  const q = new AnalysisQueue({ logger: silentLogger, ...opts });
  q.start();
  t.after(() => q.stop());
  return q;
}

test('jobs run in parallel workers and each gets its own result and progress ending at 1', async (t) => {
  const paths = await tempGcode(t, {
    'a.gcode': 'M83\nG1 X10 E1 F600\n',
    'b.gcode': 'M83\nG1 X10 E2 F600\n',
    'c.gcode': 'M83\nG1 X10 E3 F600\n',
  });
  const q = startQueue(t, { workers: 2 });
  const progress: Record<string, number[]> = { a: [], b: [], c: [] };
  const results = await Promise.all((['a', 'b', 'c'] as const).map((n) =>
    q.analyse(paths[`${n}.gcode`], {}, (f) => progress[n].push(f))));
  assert.deepEqual(results.map((r) => r.filament.tool0.length), [1, 2, 3]);
  for (const n of ['a', 'b', 'c']) {
    assert.equal(progress[n].at(-1), 1, `${n} progress ends at 1`);
    assert.deepEqual([...progress[n]].sort((x, y) => x - y), progress[n], `${n} progress never goes back`);
  }
  assert.equal(q.queued, 0);
});

test('a long analysis reports progress along the way; cancel ends it and the queued job behind it', { skip: needs('shared-data') }, async (t) => {
  const paths = await tempGcode(t, { 'small.gcode': 'M83\nG1 X10 E1 F600\n' });
  const q = startQueue(t, { workers: 1 });
  let cancelledRunning = false;
  const fractions: number[] = [];
  const running = q.analyse(BIG, {}, (f) => {
    fractions.push(f);
    if (f < 1 && !cancelledRunning) {
      cancelledRunning = true;
      assert.equal(q.cancel(BIG), 1);
    }
  });
  const queued = q.analyse(paths['small.gcode']);
  const queuedToo = q.analyse(paths['small.gcode']);
  assert.equal(q.cancel(paths['small.gcode']), 2);
  await assert.rejects(queued, AnalysisCancelledError);
  await assert.rejects(queuedToo, AnalysisCancelledError);
  await assert.rejects(running, AnalysisCancelledError);
  assert.ok(fractions.length > 0 && fractions[0] > 0 && fractions[0] < 1, `partial progress seen: ${fractions}`);
  // The queue carries on with a fresh worker.
  const after = await q.analyse(paths['small.gcode']);
  assert.equal(after.filament.tool0.length, 1);
});

test('a missing file rejects with NOT_FOUND and the queue keeps working', async (t) => {
  const paths = await tempGcode(t, { 'ok.gcode': 'M83\nG1 X10 E1 F600\n' });
  const q = startQueue(t);
  await assert.rejects(q.analyse(join(tmpdir(), 'gantry-no-such-file.gcode')),
    (err: unknown) => err instanceof DomainError && err.code === 'NOT_FOUND');
  assert.equal((await q.analyse(paths['ok.gcode'])).filament.tool0.length, 1);
});

test('a crashing worker rejects its job, not the process; the next job gets a new worker', async (t) => {
  const paths = await tempGcode(t, { 'ok.gcode': 'M83\nG1 X10 E1 F600\n' });
  // A heap cap too small to even load the analyser kills the worker outright. Not smaller: from Node 24 on, a cap
  // too small to boot the thread's isolate (2 MB) aborts the whole process; 3 MB boots on Node 20–26.
  const starved = startQueue(t, { resourceLimits: { maxOldGenerationSizeMb: 3, maxYoungGenerationSizeMb: 1 } });
  await assert.rejects(starved.analyse(paths['ok.gcode']),
    (err: unknown) => err instanceof DomainError && err.code === 'INTERNAL' && /crashed/.test(err.message));
  await assert.rejects(starved.analyse(paths['ok.gcode']), DomainError);
  const healthy = startQueue(t);
  assert.equal((await healthy.analyse(paths['ok.gcode'])).filament.tool0.length, 1);
});

test('stop() rejects pending jobs; a stopped queue refuses new ones', async (t) => {
  const paths = await tempGcode(t, { 'ok.gcode': 'M83\nG1 X10 E1 F600\n' });
  const q = new AnalysisQueue({ logger: silentLogger, workers: 1 });
  q.start();
  const a = assert.rejects(q.analyse(paths['ok.gcode']), AnalysisCancelledError);
  const b = assert.rejects(q.analyse(paths['ok.gcode']), AnalysisCancelledError);
  await q.stop();
  await Promise.all([a, b]);
  await assert.rejects(q.analyse(paths['ok.gcode']), DomainError);
});

async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), what);
}

test('start() boots a warm worker before any upload and keeps it while idle; extra workers still retire', async (t) => {
  const paths = await tempGcode(t, { 'a.gcode': 'M83\nG1 X10 E1 F600\n', 'b.gcode': 'M83\nG1 X10 E2 F600\n' });
  const q = startQueue(t, { workers: 2, idleTimeoutMs: 20 });
  await until('a warm worker started with the queue', () => q.workers === 1);
  const results = await Promise.all([q.analyse(paths['a.gcode']), q.analyse(paths['b.gcode'])]);
  assert.deepEqual(results.map((r) => r.filament.tool0.length), [1, 2]);
  await until('the extra worker retired after the idle timeout', () => q.workers === 1);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(q.workers, 1, 'the warm one stays');

  const cold = startQueue(t, { warmWorkers: 0, idleTimeoutMs: 20 });
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(cold.workers, 0, 'warmWorkers: 0 starts workers on demand only');
  assert.equal((await cold.analyse(paths['a.gcode'])).filament.tool0.length, 1);
  await until('an on-demand worker retires', () => cold.workers === 0);
});

test('workers run a plain-JavaScript bundle of the analyser, not TypeScript through the loader', async () => {
  const source = await prepareThread(new URL('../../../src/files/analysis/worker.ts', import.meta.url), 'analysis-worker.js');
  assert.equal(source.kind, 'bundle');
  // Plain JavaScript: no type annotations left, and the analyser's own code is in it.
  assert.ok(source.kind === 'bundle' && !/\bimport type\b|: number\b/.test(source.code) && source.code.includes('parentPort'));
});
