// The compiled code Node keeps of dist/ between starts: in the user's cache folder (not the temp folder a boot empties), used by the next start, and an install's folders of earlier builds removed when a new build first starts.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import module from 'node:module';
import { join } from 'node:path';
import { ROOT, ensureBuilt, startGantryProcess } from '../../helpers/built-server.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { waitFor } from '../../helpers/wait.ts';

before(ensureBuilt);

const NO_CACHE = typeof (module as { enableCompileCache?: unknown }).enableCompileCache !== 'function'
  ? 'this Node has no compile cache (Node ≥ 22.1 has)' : false;

test('the compile cache is kept in the user cache folder, used by the next start, and folders of earlier builds go', { skip: NO_CACHE }, async (t) => {
  const cacheHome = await tempDir(t, 'gantry-xdg-');
  const baseDir = await tempDir(t, 'gantry-compile-cache-');
  const root = join(cacheHome, 'gantry', 'compile-cache');
  const env = { XDG_CACHE_HOME: cacheHome, NODE_COMPILE_CACHE: '' };
  const start = async (extra: Record<string, string> = {}) => {
    const g = await startGantryProcess(process.execPath, [join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', baseDir], { ...env, ...extra });
    t.after(() => g.stop());
    return g;
  };
  /** The cache entries of this Node (a folder per Node version inside the build's folder). */
  const entries = async (folder: string) => {
    const versions = await readdir(join(root, folder)).catch(() => []);
    return (await Promise.all(versions.map((v) => readdir(join(root, folder, v))))).flat();
  };

  const first = await start();
  // Written once the server answers.
  const [folder] = await waitFor('the cache folder of this build', async () => {
    const names = await readdir(root).catch(() => []);
    return names.length === 1 && (await entries(names[0])).length > 0 && names;
  });
  assert.match(folder, /^[0-9a-f]{12}-[0-9a-f]{12}$/);
  assert.equal(await first.stop(), 0);

  const second = await start({ NODE_DEBUG_NATIVE: 'COMPILE_CACHE' });
  assert.match(second.stderr(), /dist\/cli\.js was accepted/, 'the next start compiled dist/cli.js from the cache');
  assert.equal(await second.stop(), 0);

  // As after an upgrade: this build's folder is new, an earlier build of the same install has one, another install too.
  const install = folder.split('-')[0];
  const earlier = `${install}-000000000000`;
  const otherInstall = `${install === 'ffffffffffff' ? 'eeeeeeeeeeee' : 'ffffffffffff'}-000000000000`;
  for (const name of [earlier, otherInstall]) {
    await mkdir(join(root, name, 'v0'), { recursive: true });
    await writeFile(join(root, name, 'v0', 'entry'), 'x');
  }
  await rm(join(root, folder), { recursive: true });
  const third = await start();
  await waitFor('the new build\'s cache', async () => (await entries(folder)).length > 0);
  assert.ok(!existsSync(join(root, earlier)), 'the earlier build\'s folder of this install is gone');
  assert.ok(existsSync(join(root, otherInstall, 'v0', 'entry')), 'another install\'s folder stays');
  assert.equal(await third.stop(), 0);
});
