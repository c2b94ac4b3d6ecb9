// How an analysis worker thread gets its code: dist/analysis-worker.js in the built server; run from the sources (tests, tsx), a bundle of worker.ts built in memory once per process.
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { PACKAGE_ROOT } from '../../core/package-root.ts';

/** What spawnAnalysisWorker() runs: the bundled analyser, or worker.ts through tsx when no bundle could be built. */
export type WorkerSource = { kind: 'bundle'; code: string } | { kind: 'tsx'; entry: string } | { kind: 'module'; url: URL };

const ENTRY = new URL('./worker.ts', import.meta.url);

let prepared: Promise<WorkerSource> | null = null;

/**
 * Resolves the worker's code; built on first use and shared by every queue in the process.
 * Why a bundle: a worker thread does not inherit tsx's loader, so each one used to register tsx and compile the
 * analyser's TypeScript itself — 0.3–0.5 s before the first byte was analysed, most of the 36 MB file's cold time.
 * esbuild (which tsx runs on anyway) bundles worker.ts and its imports into one script in ~20 ms, off the event
 * loop (it runs in esbuild's own process). Built from the sources at start-up, never from a file on disk, so it
 * cannot go stale after an edit. Without esbuild (or when this file is already JavaScript) the old way is kept.
 * CommonJS run as an eval worker rather than an ES module behind a data: URL: stack traces then name
 * "[worker eval]" instead of repeating a 60 kB URL in every frame of a logged error.
 */
export function prepareWorkerSource(): Promise<WorkerSource> {
  prepared ??= build();
  return prepared;
}

async function build(): Promise<WorkerSource> {
  // Bundled into dist/cli.js by scripts/build.mjs, which also writes the worker's own file beside it.
  if (!import.meta.url.endsWith('.ts')) return { kind: 'module', url: new URL('dist/analysis-worker.js', PACKAGE_ROOT) };
  try {
    const esbuild = await import('esbuild');
    const out = await esbuild.build({
      entryPoints: [fileURLToPath(ENTRY)], bundle: true, platform: 'node', format: 'cjs', target: 'node20',
      write: false, logLevel: 'silent',
    });
    const code = out.outputFiles[0]?.text;
    if (code) return { kind: 'bundle', code };
  } catch {
    // No esbuild: fall through to the TypeScript loader.
  }
  return { kind: 'tsx', entry: ENTRY.href };
}

export function spawnAnalysisWorker(source: WorkerSource, resourceLimits: ResourceLimits | undefined): Worker {
  const opts = { name: 'gcode-analysis', resourceLimits };
  if (source.kind === 'bundle') return new Worker(source.code, { ...opts, eval: true });
  if (source.kind === 'module') return new Worker(source.url, opts);
  let tsxApi: string | null;
  try { tsxApi = import.meta.resolve('tsx/esm/api'); } catch { tsxApi = null; }
  const code = tsxApi
    ? `import(${JSON.stringify(tsxApi)}).then((m) => { m.register(); return import(${JSON.stringify(source.entry)}); });`
    : `import(${JSON.stringify(source.entry)});`;
  return new Worker(code, { ...opts, eval: true });
}
