// A stop that hangs does not hold the process for ever: a second signal, or the stop's bound, ends it, naming what the stop waited for.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from '../helpers/built-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Runs stopOnSignals in a child over a server whose stop takes `stopMs` (never, when undefined), held open by a
 * timer as a running server is by its sockets. Returns the child, its output so far, and its exit.
 */
async function serving(t: TestContext, stopMs: number | undefined, stopBoundMs: number, repeatMs = 0) {
  const dir = await tempDir(t, 'gantry-signals-');
  const script = join(dir, 'serve.ts');
  await writeFile(script, `import { stopOnSignals } from ${JSON.stringify(join(ROOT, 'src/core/process-end.ts'))};
const holder = setInterval(() => {}, 1000);
const server = {
  stopStage: () => 'printer',
  stop: () => new Promise<void>((resolve) => { ${stopMs === undefined ? '' : `setTimeout(() => { clearInterval(holder); resolve(); }, ${stopMs});`} }),
};
stopOnSignals(() => Promise.resolve(server), { stopBoundMs: ${stopBoundMs}, repeatMs: ${repeatMs} });
process.stdout.write('ready\\n');
`);
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => { out.stdout += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out.stderr += d.toString(); });
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.on('exit', (code) => resolve({ code, at: Date.now() })));
  await waitFor('the child to be ready', () => out.stdout.includes('ready'), 30_000);
  return { child, out, exited };
}

test('a second signal while the stop hangs ends the process at once with 1, naming what the stop waits for', async (t) => {
  const s = await serving(t, undefined, 60_000);
  s.child.kill('SIGTERM');
  await waitFor('the shutdown line', () => s.out.stdout.includes('SIGTERM: shutting down'), 10_000);
  assert.match(s.out.stdout, /SIGTERM again to exit at once/);
  const sent = Date.now();
  s.child.kill('SIGINT');
  const { code, at } = await s.exited;
  assert.equal(code, 1, s.out.stderr);
  assert.match(s.out.stderr, /SIGINT again: exiting without waiting for the stop to finish \(stopping: printer\)/);
  assert.ok(at - sent < 10_000, `ended ${at - sent} ms after the second signal`);
});

test('a signal right after the first is taken for the same request (a terminal and npm both pass on one Ctrl-C)', async (t) => {
  const s = await serving(t, undefined, 1_500, 60_000);
  s.child.kill('SIGINT');
  await waitFor('the shutdown line', () => s.out.stdout.includes('SIGINT: shutting down'), 10_000);
  s.child.kill('SIGINT');
  const { code } = await s.exited;
  assert.equal(code, 1, s.out.stderr);
  assert.doesNotMatch(s.out.stderr, /SIGINT again/);
  assert.match(s.out.stderr, /the stop took longer than 1\.5 s/);
});

test('a stop that outlasts its bound ends the process with 1, naming what it waited for', async (t) => {
  const s = await serving(t, undefined, 400);
  s.child.kill('SIGTERM');
  const { code } = await s.exited;
  assert.equal(code, 1, s.out.stderr);
  assert.match(s.out.stderr, /the stop took longer than 0\.4 s: exiting without waiting for the stop to finish \(stopping: printer\)/);
});

test('a stop that finishes within its bound ends the process with 0 and no forced exit', async (t) => {
  const s = await serving(t, 50, 60_000);
  s.child.kill('SIGINT');
  const { code } = await s.exited;
  assert.equal(code, 0, s.out.stderr);
  assert.match(s.out.stdout, /SIGINT: shutting down/);
  assert.doesNotMatch(s.out.stderr, /exiting/);
});
