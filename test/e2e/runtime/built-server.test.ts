// The built server (dist/, plain node): starts, answers the API, analyses an upload in its prebuilt worker, and runs no esbuild or tsx.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, descendants, ensureBuilt, startGantryProcess } from '../../helpers/built-server.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

before(ensureBuilt);

test('node dist/cli.js serve answers /api/version, analyses an upload, and has no esbuild child', async (t) => {
  const dir = await tempDir(t, 'gantry-built-');
  const g = await startGantryProcess(process.execPath, [join(ROOT, 'dist/cli.js'), 'serve', '--port', '0', '--basedir', dir]);
  t.after(() => g.stop());
  const headers = { 'X-Api-Key': g.apiKey };

  const version = await fetch(`${g.url}/api/version`, { headers });
  assert.equal(version.status, 200);
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.match(((await version.json()) as { text: string }).text, new RegExp(`\\(Gantry ${pkg.version.replaceAll('.', '\\.')}\\)$`));

  const form = new FormData();
  form.append('file', new Blob(['M83\nG1 X10 Y10 E1.5 F1200\nG1 X20 E1\n']), 'cube.gcode');
  const upload = await fetch(`${g.url}/api/files/local`, { method: 'POST', headers, body: form });
  assert.equal(upload.status, 201, await upload.clone().text());
  // The analysis runs in dist/analysis-worker.js; a worker that could not load would leave gcodeAnalysis unset.
  let analysis: { filament?: { tool0?: { length: number } } } | undefined;
  const deadline = Date.now() + 30_000;
  while (!analysis && Date.now() < deadline) {
    const info = (await (await fetch(`${g.url}/api/files/local/cube.gcode`, { headers })).json()) as { gcodeAnalysis?: typeof analysis };
    analysis = info.gcodeAnalysis;
    if (!analysis) await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(analysis?.filament?.tool0?.length, 2.5, `analysed; stderr: ${g.stderr()}`);

  // The printer link runs in dist/link-worker.js (serial.linkThread: worker): the virtual printer answers through it.
  const connect = await fetch(`${g.url}/api/connection`, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' },
    body: JSON.stringify({ command: 'connect', port: 'VIRTUAL', baudrate: 115200, save: false }) });
  assert.equal(connect.status, 204);
  let state = '';
  const until = Date.now() + 30_000;
  while (state !== 'Operational' && Date.now() < until) {
    state = ((await (await fetch(`${g.url}/api/connection`, { headers })).json()) as { current: { state: string } }).current.state;
    if (state !== 'Operational') await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(state, 'Operational', `stderr: ${g.stderr()}`);

  const children = await descendants(g.child.pid!);
  assert.ok(!children.includes('esbuild'), `no esbuild service process, found: ${children.join(', ')}`);
  assert.doesNotMatch(g.stdout() + g.stderr(), /"level":(50|60)/, 'no errors logged');
  assert.equal(await g.stop(), 0);
});

test('the build output imports neither tsx nor esbuild at load time', async () => {
  for (const file of ['dist/cli.js', 'dist/analysis-worker.js', 'dist/link-worker.js']) {
    const code = await readFile(join(ROOT, file), 'utf8');
    assert.doesNotMatch(code, /^import .* from ["'](tsx|esbuild)[/"']/m, file);
    assert.match(code, /\/\/# sourceMappingURL=/, `${file} has a source map`);
  }
});

test('every file the code finds beside itself through import.meta.url is in dist/ too (the timelapse watermark)', async () => {
  const bundled = (await Promise.all((await readdir(join(ROOT, 'dist'))).filter((f) => f.endsWith('.js'))
    .map((f) => readFile(join(ROOT, 'dist', f), 'utf8')))).join('\n');
  // dist/ is CommonJS: the build stands a variable with the file's URL in for import.meta.url (scripts/build.mjs).
  const wanted = [...bundled.matchAll(/new URL\(["']\.\/(assets\/[\w.-]+)["'],\s*__gantryModuleUrl\)/g)].map((m) => m[1]);
  assert.ok(wanted.includes('assets/watermark.png'), 'the bundle refers to the watermark next to itself');
  for (const rel of wanted) assert.ok(existsSync(join(ROOT, 'dist', rel)), `dist/${rel} exists`);
});
