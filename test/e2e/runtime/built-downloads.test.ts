// The built server (dist/, plain node) serves the downloads that load a bundled dependency on first use: the
// multi-movie timelapse zip (yazl), by GET and by the POST form, and refuses links in the timelapse folder.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import yauzl from 'yauzl';
import { ROOT, ensureBuilt, startGantryProcess } from '../../helpers/built-server.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

before(ensureBuilt);

function zipNames(data: Buffer): Promise<string[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(data, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      const names: string[] = [];
      zip.on('entry', (e: yauzl.Entry) => { names.push(e.fileName); zip.readEntry(); });
      zip.on('end', () => resolve(names));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

test('node dist/cli.js serve bundles several timelapse movies into a zip, by GET and by the POST form', async (t) => {
  const dir = await tempDir(t, 'gantry-built-zip-');
  await mkdir(join(dir, 'timelapse'), { recursive: true });
  await writeFile(join(dir, 'timelapse', 'a.mp4'), 'movie a');
  await writeFile(join(dir, 'timelapse', 'b.mp4'), 'movie b');
  const g = await startGantryProcess(process.execPath, [join(ROOT, 'dist/cli.js'), 'serve', '--port', '0', '--basedir', dir]);
  t.after(() => g.stop());
  const headers = { 'X-Api-Key': g.apiKey };

  const got = await fetch(`${g.url}/downloads/timelapses?files=a.mp4,b.mp4`, { headers });
  assert.equal(got.status, 200, await got.clone().text());
  assert.equal(got.headers.get('content-type'), 'application/zip');
  assert.deepEqual((await zipNames(Buffer.from(await got.arrayBuffer()))).sort(), ['a.mp4', 'b.mp4']);

  const posted = await fetch(`${g.url}/downloads/timelapses`, { method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'files=a.mp4%2Cb.mp4' });
  assert.equal(posted.status, 200, await posted.clone().text());
  assert.deepEqual((await zipNames(Buffer.from(await posted.arrayBuffer()))).sort(), ['a.mp4', 'b.mp4']);
  assert.doesNotMatch(g.stdout() + g.stderr(), /"level":(50|60)/, 'no errors logged');
});

test('a bundled CommonJS package imported on first use is read through its default export (esbuild gives no named ones)', async () => {
  // In dist/ a dynamic import() of a bundled CommonJS module yields only `default`: `const { X } = await import('pkg')`
  // worked from the sources (Node reads named exports of CommonJS) and failed in the built server (yazl's ZipFile).
  const build = await readFile(join(ROOT, 'scripts/build.mjs'), 'utf8');
  const external = JSON.parse(/const EXTERNAL = (\[[^\]]*\])/.exec(build)![1].replace(/'/g, '"')) as string[];
  const isExternal = (pkg: string) => external.some((e) => (e.endsWith('/*') ? pkg.startsWith(e.slice(0, -1)) : pkg === e));
  const require = createRequire(join(ROOT, 'package.json'));
  const problems: string[] = [];
  const checked: string[] = [];
  async function walk(d: string): Promise<void> {
    for (const e of await readdir(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name.endsWith('.ts')) {
        const code = await readFile(p, 'utf8');
        for (const m of code.matchAll(/(const|let)\s+(\{[^}]*\}|\w+)\s*=\s*\(?await import\('([^.'][^']*)'\)\)?(\.default)?/g)) {
          const [, , binding, spec, viaDefault] = m;
          const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
          if (spec.startsWith('node:') || isExternal(pkg)) continue;
          const manifest = JSON.parse(await readFile(require.resolve(`${pkg}/package.json`), 'utf8')) as { type?: string };
          const commonJs = manifest.type !== 'module';
          checked.push(pkg);
          const onlyDefault = viaDefault !== undefined || /^\{\s*default\s*(:\s*\w+\s*)?\}$/.test(binding);
          if (commonJs && !onlyDefault) problems.push(`${p.slice(ROOT.length)}: ${m[0]}`);
        }
      }
    }
  }
  await walk(join(ROOT, 'src'));
  assert.deepEqual(problems, []);
  assert.ok(checked.includes('yazl'), `the scan sees the yazl import (saw ${checked.join(', ')})`);
});
