// Builds the browser UI into web/dist with Vite; `--if-stale` skips the build when web/dist is newer than the sources.
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB = fileURLToPath(new URL('.', import.meta.url));
const INPUTS = ['index.html', 'vite.config.ts', 'src'];

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

export async function buildWeb(opts: { ifStale?: boolean } = {}): Promise<boolean> {
  if (opts.ifStale && !(await webIsStale())) return false;
  const { build } = await import('vite');
  await build({ configFile: join(WEB, 'vite.config.ts') });
  return true;
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
