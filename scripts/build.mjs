// Builds the server into plain JavaScript in dist/ (cli.js and the analysis worker), so a running Gantry needs no TypeScript loader.
// Usage: node scripts/build.mjs [--if-stale]   (`--if-stale` skips the build when dist/ is newer than its inputs)
// Plain JavaScript itself: `npm start` runs it with node before the server, without tsx.
import { mkdir, readdir, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
/** Everything whose change must rebuild dist/; package.json because the dependency list decides what stays external. */
const INPUTS = ['src', 'package.json', 'scripts/build.mjs'];
/** The files whose presence (and age) stand for a complete build. */
export const OUTPUTS = ['cli.js', 'analysis-worker.js'];

async function newestMtime(path) {
  const s = await stat(path);
  if (!s.isDirectory()) return s.mtimeMs;
  let newest = s.mtimeMs;
  for (const name of await readdir(path)) newest = Math.max(newest, await newestMtime(join(path, name)));
  return newest;
}

export async function serverIsStale() {
  let built = Infinity;
  try {
    for (const out of OUTPUTS) built = Math.min(built, (await stat(join(DIST, out))).mtimeMs);
  } catch {
    return true;
  }
  for (const input of INPUTS) if ((await newestMtime(join(ROOT, input))) > built) return true;
  return false;
}

/**
 * Bundles src/cli.ts (with everything it imports, main.ts included) and the analysis worker's entry, each into one
 * ES module. Dependencies stay in node_modules (`packages: 'external'`): native ones (serialport, argon2) cannot be
 * bundled, and the others keep their own files for stack traces and upgrades.
 * Each output file is written beside its final name and renamed into place, so a build racing another one (tests
 * in parallel) or a server starting meanwhile never reads half a file.
 */
export async function buildServer(opts = {}) {
  if (opts.ifStale && !(await serverIsStale())) return false;
  const esbuild = await import('esbuild');
  const out = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: { cli: 'src/cli.ts', 'analysis-worker': 'src/files/analysis/worker.ts' },
    outdir: DIST,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    write: false,
    logLevel: 'warning',
  });
  await mkdir(DIST, { recursive: true });
  // Maps first: a finished .js file must never point at a map that is not there yet.
  const files = [...out.outputFiles].sort((a, b) => Number(b.path.endsWith('.map')) - Number(a.path.endsWith('.map')));
  for (const file of files) {
    const tmp = `${file.path}.${process.pid}.tmp`;
    await writeFile(tmp, file.contents);
    await rename(tmp, file.path);
  }
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  buildServer({ ifStale: process.argv.includes('--if-stale') }).then((built) => {
    console.log(built ? 'server built into dist/' : 'server build is up to date');
  }, (err) => {
    console.error('building the server failed:', err?.message ?? err);
    process.exit(1);
  });
}
