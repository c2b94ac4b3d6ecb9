// dist/'s V8 code caches (bin/gantry.js): made once the server answers, in the build's cache folder, used by the next start (not made again), and made anew when V8 rejects one.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, ensureBuilt, startGantryProcess } from '../../helpers/built-server.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

before(ensureBuilt);

test('dist/ is compiled with code caches made at the first start, kept by the next, remade when rejected', async (t) => {
  const cacheHome = await tempDir(t, 'gantry-xdg-');
  const baseDir = await tempDir(t, 'gantry-code-cache-');
  const root = join(cacheHome, 'gantry', 'compile-cache');
  /** Each cache file of the launcher → its inode and modification time (a remade cache is renamed into place). */
  const caches = async () => {
    const found = new Map<string, string>();
    for (const build of await readdir(root).catch(() => [])) {
      for (const name of await readdir(join(root, build))) {
        if (!name.startsWith('gantry-')) continue;
        const s = await stat(join(root, build, name), { bigint: true });
        found.set(join(root, build, name), `${s.ino}:${s.mtimeNs}`);
      }
    }
    return found;
  };
  /** A start that answered a request: the launcher's work at "serving" (making the caches) is done by then. */
  const startAndAnswer = async () => {
    const g = await startGantryProcess(process.execPath, [join(ROOT, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', baseDir],
      { XDG_CACHE_HOME: cacheHome, NODE_COMPILE_CACHE: '' });
    t.after(() => g.stop());
    await (await fetch(`${g.url}/api/version`)).arrayBuffer();
    return g;
  };

  const first = await startAndAnswer();
  const made = await caches();
  const cliCache = [...made.keys()].find((p) => p.endsWith(`/gantry-cli.js-v8-${process.versions.v8}.cache`));
  assert.ok(cliCache, `a cache of dist/cli.js for this V8: ${[...made.keys()].join(', ')}`);
  assert.ok([...made.keys()].filter((p) => /\/gantry-chunk-\w+\.js-v8-/.test(p)).length >= 2, 'caches of the chunks a start loads');
  const cliCacheBytes = (await readFile(cliCache)).length;
  assert.equal(await first.stop(), 0);

  // V8 took every cache: none was made again (V8 rejects a cache made under other V8 flags than the start's).
  const second = await startAndAnswer();
  assert.deepEqual(await caches(), made, 'the second start kept every cache');
  assert.equal(await second.stop(), 0);

  // A cache V8 rejects (here: not a cache at all) costs only its own compile, and is made anew.
  await writeFile(cliCache, 'not a V8 code cache');
  const spoilt = await caches();
  const third = await startAndAnswer();
  const after = await caches();
  assert.notEqual(after.get(cliCache), spoilt.get(cliCache), 'the rejected cache was made anew');
  assert.ok((await readFile(cliCache)).length > cliCacheBytes / 2, 'a real cache again');
  for (const [path, id] of spoilt) if (path !== cliCache) assert.equal(after.get(path), id, `${path} kept`);
  assert.equal(await third.stop(), 0);
});

test('a checkout whose path has a space starts with its code caches (file URLs are not paths)', async (t) => {
  const install = join(await tempDir(t, 'gantry-in a space-'), 'gantry');
  await mkdir(install);
  for (const part of ['bin', 'dist', 'package.json']) await cp(join(ROOT, part), join(install, part), { recursive: true });
  await symlink(join(ROOT, 'node_modules'), join(install, 'node_modules'));
  const cacheHome = await tempDir(t, 'gantry-xdg-');
  const baseDir = await tempDir(t, 'gantry-code-cache-');
  const g = await startGantryProcess(process.execPath, [join(install, 'bin/gantry.js'), 'serve', '--port', '0', '--basedir', baseDir],
    { XDG_CACHE_HOME: cacheHome, NODE_COMPILE_CACHE: '' });
  t.after(() => g.stop());
  await (await fetch(`${g.url}/api/version`)).arrayBuffer();
  const [build] = await readdir(join(cacheHome, 'gantry', 'compile-cache'));
  const names = await readdir(join(cacheHome, 'gantry', 'compile-cache', build));
  assert.ok(names.includes(`gantry-cli.js-v8-${process.versions.v8}.cache`), `caches made: ${names.join(', ')}`);
  assert.equal(await g.stop(), 0);
});
