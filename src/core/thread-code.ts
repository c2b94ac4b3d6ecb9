// How a worker thread of the server gets its code: dist/<name>.js in the built server; run from the sources (tests,
// tsx), its TypeScript entry bundled in memory once per process (a worker thread does not inherit tsx's loader).
import { Worker, type WorkerOptions } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { PACKAGE_ROOT } from './package-root.ts';

/** Native and optional packages stay outside the bundle, required from the package's own node_modules. */
const EXTERNAL = ['serialport', '@serialport/*', 'bufferutil', 'utf-8-validate'];

const bundles = new Map<string, Promise<string>>();

/**
 * Starts a thread running `entry` (a .ts file beside the caller, run from the sources) or `dist/<built>` (bundled).
 * From the sources the bundle is CommonJS run as an eval worker, with `require` rooted at the package, so externals
 * resolve whatever the working directory is.
 */
export async function startThread(entry: URL, built: string, opts: WorkerOptions): Promise<Worker> {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL(`dist/${built}`, PACKAGE_ROOT), opts);
  let code = bundles.get(entry.href);
  if (!code) {
    code = bundle(entry);
    bundles.set(entry.href, code);
  }
  return new Worker(await code, { ...opts, eval: true });
}

async function bundle(entry: URL): Promise<string> {
  const esbuild = await import('esbuild');
  const out = await esbuild.build({
    entryPoints: [fileURLToPath(entry)], bundle: true, platform: 'node', format: 'cjs', target: 'node20',
    external: EXTERNAL, write: false, logLevel: 'silent',
  });
  const text = out.outputFiles[0]?.text ?? '';
  const root = JSON.stringify(new URL('package.json', PACKAGE_ROOT).href);
  return `(function (require) {\n${text}\n})(require('node:module').createRequire(${root}));`;
}
