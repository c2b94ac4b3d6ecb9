// The server side of the UI: `/`, `/login` and /static/ assets from web/dist, the CSRF cookie, and the "not built" page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import Fastify from 'fastify';
import cookie from '@fastify/cookie';
import { startTestServer } from '../../helpers/server.ts';
import { buildWeb } from '../../../web/build.ts';
import { registerUiRoutes, WEB_DIST } from '../../../src/http/routes/ui.ts';
import type { GantryApp } from '../../../src/http/types.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

test('serves the built UI at / and /login with the CSRF cookie, and its assets under /static/', async (t) => {
  await buildWeb({ ifStale: true });
  const server = await startTestServer(t);
  for (const path of ['/', '/login', '/login/?redirect=%2F']) {
    const res = await fetch(server.url + path);
    assert.equal(res.status, 200, path);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    const setCookie = res.headers.get('set-cookie') ?? '';
    assert.match(setCookie, new RegExp(`^csrf_token_P${server.port}=[^;]+; Path=/; SameSite=Lax`), path);
    assert.doesNotMatch(setCookie, /HttpOnly/i, 'the UI must be able to read the token');
  }
  // A browser that already has the cookie keeps it.
  const again = await fetch(server.url + '/', { headers: { cookie: `csrf_token_P${server.port}=abc` } });
  assert.equal(again.headers.get('set-cookie'), null);

  const html = await (await fetch(server.url + '/')).text();
  const script = /src="(\/static\/assets\/[^"]+\.js)"/.exec(html)?.[1];
  assert.ok(script, 'page references its script under /static/assets/');
  const asset = await fetch(server.url + script);
  assert.equal(asset.status, 200);
  assert.match(asset.headers.get('content-type') ?? '', /javascript/);
  assert.match(asset.headers.get('cache-control') ?? '', /immutable/);
  assert.equal((await fetch(server.url + '/static/assets/nope.js')).status, 404);
  // An encoded traversal must not reach files outside web/dist.
  const escape = await fetch(server.url + '/static/..%2F..%2Fpackage.json');
  assert.notEqual(escape.status, 200);
  assert.doesNotMatch(await escape.text(), /"name": "gantry"/);
});

test('without a build, the pages explain how to build the UI instead of failing', async (t) => {
  const missing = join(await tempDir(t, 'gantry-ui-'), 'dist');
  const app = Fastify() as unknown as GantryApp;
  await app.register(cookie);
  registerUiRoutes(app, {}, missing);
  t.after(() => app.close());
  const res = await app.inject({ method: 'GET', url: '/' });
  assert.equal(res.statusCode, 503);
  assert.match(res.body, /npm run build:web/);
  assert.match(String(res.headers['set-cookie']), /^csrf_token_P\d+=/);
  assert.equal((await app.inject({ method: 'GET', url: '/static/assets/x.js' })).statusCode, 404);
});

test('the shipped JavaScript stays small (under 150 kB gzipped)', async () => {
  await buildWeb({ ifStale: true });
  const dir = join(WEB_DIST, 'assets');
  let total = 0;
  for (const name of await readdir(dir)) {
    if (name.endsWith('.js')) total += gzipSync(await readFile(join(dir, name)), { level: 9 }).length;
  }
  assert.ok(total > 10_000, 'the bundle was found');
  assert.ok(total < 150 * 1024, `shipped JS is ${Math.round(total / 1024)} kB gzipped`);
});
