// How a worker thread of the server gets its code: dist/<name>.js in the built server; run from the sources (tests,
// tsx), its TypeScript entry bundled in memory once per process (a worker thread does not inherit tsx's loader).
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { PACKAGE_ROOT } from './package-root.ts';

/** Native and optional packages stay outside the bundle, required from the package's own node_modules. */
const EXTERNAL = ['serialport', '@serialport/*', 'bufferutil', 'utf-8-validate'];

/** A thread's code, ready to start any number of threads from without waiting. */
export type ThreadCode = { kind: 'built'; url: URL } | { kind: 'bundle'; code: string };

const bundles = new Map<string, Promise<ThreadCode>>();

/**
 * The code for `entry` (a .ts file beside the caller, run from the sources) or `dist/<built>` (the built server).
 * From the sources, esbuild (which tsx runs on anyway) bundles the entry and its imports into one CommonJS script in
 * ~20 ms, off the event loop, once per process: a thread that registered tsx itself spent 0.3–0.5 s compiling
 * TypeScript before its first message. Built from the sources, never from a file on disk, so it cannot go stale.
 */
export function prepareThread(entry: URL, built: string): Promise<ThreadCode> {
  if (!import.meta.url.endsWith('.ts')) return Promise.resolve({ kind: 'built', url: new URL(`dist/${built}`, PACKAGE_ROOT) });
  let code = bundles.get(entry.href);
  if (!code) {
    code = bundle(entry);
    bundles.set(entry.href, code);
  }
  return code;
}

/**
 * Starts a thread from prepared code. A bundle runs as an eval worker with `require` rooted at the package, so
 * externals resolve whatever the working directory is (and stack traces name "[worker eval]", not a long URL).
 */
export function spawnThread(code: ThreadCode, opts: WorkerOptions): Worker {
  return code.kind === 'built' ? new Worker(code.url, opts) : new Worker(code.code, { ...opts, eval: true });
}

export async function startThread(entry: URL, built: string, opts: WorkerOptions): Promise<Worker> {
  return spawnThread(await prepareThread(entry, built), opts);
}

async function bundle(entry: URL): Promise<ThreadCode> {
  const esbuild = await import('esbuild');
  const out = await esbuild.build({
    entryPoints: [fileURLToPath(entry)], bundle: true, platform: 'node', format: 'cjs', target: 'node20',
    external: EXTERNAL, write: false, logLevel: 'silent',
  });
  const text = out.outputFiles[0]?.text ?? '';
  const root = JSON.stringify(new URL('package.json', PACKAGE_ROOT).href);
  return { kind: 'bundle', code: `(function (require) {\n${text}\n})(require('node:module').createRequire(${root}));` };
}
