// Serving a UI release from moonraker.ui: Mainsail at / (its release is built for the root) with the API, push and
// Gantry's login still in place; a Fluidd release at /fluidd/; config.json pointing at this host; nothing outside.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { SHARED_DIR } from '../helpers/shared-data.ts';
import { needs } from '../helpers/tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test('Mainsail at /: its page, assets, SPA routes and config.json; the OctoPrint API and push paths unchanged', { skip: needs('shared-data') }, async (t) => {
  const server = await startTestServer(t, { settings: { moonraker: { ui: join(SHARED_DIR, 'ui/mainsail-2.18.0') } } });
  const page = await fetch(`${server.url}/`);
  assert.match(await page.text(), /<title>Mainsail<\/title>/);
  const spa = await fetch(`${server.url}/console`);
  assert.match(await spa.text(), /<title>Mainsail<\/title>/);
  const cfg = (await (await fetch(`${server.url}/config.json`)).json()) as Record<string, unknown>;
  assert.deepEqual([cfg.hostname, cfg.port, cfg.path, cfg.instancesDB], [null, null, null, 'moonraker']);
  const manifest = await fetch(`${server.url}/manifest.webmanifest`);
  assert.equal(manifest.status, 200);
  assert.equal((await fetch(`${server.url}/assets/does-not-exist.js`)).status, 404);
  const out = await fetch(`${server.url}/..%2f..%2f..%2f..%2fetc%2fpasswd`);
  assert.equal(out.status, 404);
  assert.doesNotMatch(await out.text(), /root:/);
  const version = await server.api('/api/version');
  assert.equal(version.status, 200);
  assert.ok('api' in ((await version.json()) as object));
  assert.equal((await fetch(`${server.url}/sockjs/info`)).status, 200);
});

test('a Fluidd release at /fluidd/ with its config.json; Gantry keeps /', async (t) => {
  const dir = await tempDir(t, 'fluidd-');
  await mkdir(join(dir, 'assets'));
  await writeFile(join(dir, 'index.html'), '<!doctype html><html><head><title>Fluidd</title><script src="assets/app.js"></script></head></html>');
  await writeFile(join(dir, 'release_info.json'), '{"project_name":"fluidd","project_owner":"fluidd-core","version":"v1.37.4"}');
  await writeFile(join(dir, 'config.json'), '{"endpoints":["http://elsewhere:7125"],"hostConfig":{"theme":{"isDark":true}}}');
  await writeFile(join(dir, 'assets/app.js'), 'console.log(1)');
  const server = await startTestServer(t, { settings: { moonraker: { ui: dir } } });
  assert.match(await (await fetch(`${server.url}/fluidd/`)).text(), /<title>Fluidd<\/title>/);
  const js = await fetch(`${server.url}/fluidd/assets/app.js`);
  assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
  const cfg = (await (await fetch(`${server.url}/fluidd/config.json`)).json()) as { endpoints: unknown[]; hostConfig: { theme: unknown } };
  assert.deepEqual(cfg.endpoints, [], 'Fluidd finds the API on its own origin');
  assert.deepEqual(cfg.hostConfig.theme, { isDark: true });
  assert.equal((await fetch(`${server.url}/fluidd/..%2f..%2fconfig.yaml`)).status, 404);
  assert.doesNotMatch(await (await fetch(`${server.url}/`)).text(), /Fluidd/);
});
