// Builds the browser UI into web/dist with Vite, adds the favicon and a gzip and a brotli copy of each text asset; `--if-stale` skips the build when web/dist is newer than the sources.
import { copyFile, mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';

const WEB = fileURLToPath(new URL('.', import.meta.url));
const INPUTS = ['index.html', 'vite.config.ts', 'src', 'favicon.svg', 'build.ts'];

async function newestMtime(path: string): Promise<number> {
  const s = await stat(path);
  if (!s.isDirectory()) return s.mtimeMs;
  let newest = s.mtimeMs;
  for (const name of await readdir(path)) newest = Math.max(newest, await newestMtime(join(path, name)));
  return newest;
}

export async function webIsStale(): Promise<boolean> {
  let built: number;
  try {
    built = (await stat(join(WEB, 'dist', 'index.html'))).mtimeMs;
  } catch {
    return true;
  }
  for (const input of INPUTS) if ((await newestMtime(join(WEB, input))) > built) return true;
  return false;
}

/**
 * Test files run in parallel and may all find the build stale; a lock directory makes them build one at a time (Vite
 * empties web/dist first, so two builds at once would delete each other's output).
 */
async function withBuildLock<T>(fn: () => Promise<T>): Promise<T> {
  const lock = join(tmpdir(), `gantry-web-build-${Buffer.from(WEB).toString('base64url').slice(-24)}.lock`);
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch {
      const age = await stat(lock).then((s) => Date.now() - s.mtimeMs, () => 0);
      if (age > 120_000) await rm(lock, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|map|txt|wasm)$/;
const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/**
 * Writes `name.gz` and `name.br` beside each text asset, compressed once at the highest levels, so the server sends
 * them as they are (@fastify/static `preCompressed`) instead of compressing per request or sending them raw to a
 * phone over Wi-Fi. A copy that would not be smaller is not written; the server then sends the original.
 */
export async function precompress(dir: string): Promise<void> {
  const jobs: Promise<void>[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !COMPRESSIBLE.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    jobs.push((async () => {
      const data = await readFile(path);
      const [gz, br] = await Promise.all([
        gzipAsync(data, { level: 9 }),
        brotliAsync(data, { params: { [zlib.BROTLI_PARAM_MODE]: zlib.BROTLI_MODE_TEXT, [zlib.BROTLI_PARAM_QUALITY]: 11, [zlib.BROTLI_PARAM_SIZE_HINT]: data.length } }),
      ]);
      if (gz.length < data.length) await writeFile(`${path}.gz`, gz);
      if (br.length < data.length) await writeFile(`${path}.br`, br);
    })());
  }
  await Promise.all(jobs);
}

export async function buildWeb(opts: { ifStale?: boolean } = {}): Promise<boolean> {
  // The freshness check happens under the lock too: while another build runs, web/dist is half written.
  return withBuildLock(async () => {
    if (opts.ifStale && !(await webIsStale())) return false;
    const { build } = await import('vite');
    await build({ configFile: join(WEB, 'vite.config.ts') });
    // Served at /favicon.ico (src/http/routes/ui.ts), where browsers look without being told.
    await copyFile(join(WEB, 'favicon.svg'), join(WEB, 'dist', 'favicon.svg'));
    await precompress(join(WEB, 'dist'));
    return true;
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  buildWeb({ ifStale: process.argv.includes('--if-stale') }).then((built) => {
    console.log(built ? 'web UI built into web/dist' : 'web UI is up to date');
  }, (err: unknown) => {
    console.error('building the web UI failed:', err);
    // As an npm `prepare` step a broken UI build must not abort installing the server; `npm start` and the UI tests
    // build again and fail loudly.
    if (!process.argv.includes('--warn-only')) process.exit(1);
  });
}
