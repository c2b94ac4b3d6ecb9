// The compiled code Node keeps of dist/ between runs (what `gantry serve` does not compile itself with its own code caches, test/e2e/runtime/code-cache.test.ts: other commands, what loads later): in the user's cache folder (not the temp folder a boot empties), used by the next run, and an install's folders of earlier builds removed when a new build first runs.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import module from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT, ensureBuilt } from '../../helpers/built-server.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

before(ensureBuilt);

const NO_CACHE = typeof (module as { enableCompileCache?: unknown }).enableCompileCache !== 'function'
  ? 'this Node has no compile cache (Node ≥ 22.1 has)' : false;

test('the compile cache is kept in the user cache folder, used by the next run, and folders of earlier builds go', { skip: NO_CACHE }, async (t) => {
  const cacheHome = await tempDir(t, 'gantry-xdg-');
  const root = join(cacheHome, 'gantry', 'compile-cache');
  const env = { ...process.env, XDG_CACHE_HOME: cacheHome, NODE_COMPILE_CACHE: '' };
  /** `gantry --version`: dist/cli.js compiled by Node's loader; its cache is written as the process ends. */
  const version = (extra: Record<string, string> = {}) => promisify(execFile)(process.execPath, [join(ROOT, 'bin/gantry.js'), '--version'], { env: { ...env, ...extra } });
  /** Node's cache entries (a folder per Node version inside the build's folder; the launcher's own caches are files). */
  const entries = async (folder: string) => {
    const inside = await readdir(join(root, folder), { withFileTypes: true }).catch(() => []);
    return (await Promise.all(inside.filter((d) => d.isDirectory()).map((d) => readdir(join(root, folder, d.name))))).flat();
  };

  await version();
  const [folder, ...others] = await readdir(root);
  assert.deepEqual(others, []);
  assert.match(folder, /^[0-9a-f]{12}-[0-9a-f]{12}$/);
  assert.ok((await entries(folder)).length > 0, 'Node wrote its cache into the build\'s folder');

  const second = await version({ NODE_DEBUG_NATIVE: 'COMPILE_CACHE' });
  assert.match(second.stderr, /dist\/cli\.js was accepted/, 'the next run compiled dist/cli.js from the cache');

  // As after an upgrade: this build's folder is new, an earlier build of the same install has one, another install too.
  const install = folder.split('-')[0];
  const earlier = `${install}-000000000000`;
  const otherInstall = `${install === 'ffffffffffff' ? 'eeeeeeeeeeee' : 'ffffffffffff'}-000000000000`;
  for (const name of [earlier, otherInstall]) {
    await mkdir(join(root, name, 'v0'), { recursive: true });
    await writeFile(join(root, name, 'v0', 'entry'), 'x');
  }
  await rm(join(root, folder), { recursive: true });
  await version();
  assert.ok((await entries(folder)).length > 0, 'the new build\'s cache');
  assert.ok(!existsSync(join(root, earlier)), 'the earlier build\'s folder of this install is gone');
  assert.ok(existsSync(join(root, otherInstall, 'v0', 'entry')), 'another install\'s folder stays');
});
