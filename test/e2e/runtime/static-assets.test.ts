// Static assets of the web UI: brotli and gzip copies made at build time are sent as they are when accepted; the favicon answers at /favicon.ico.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { buildWeb } from '../../../web/build.ts';
import { WEB_DIST } from '../../../src/http/routes/ui.ts';
import { startTestServer } from '../../helpers/server.ts';

before(() => buildWeb({ ifStale: true }));

/** Raw bytes and headers (fetch would decompress on its own). */
function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject).end();
  });
}

test('a UI script is sent as brotli or gzip as accepted, identical once decompressed, and raw otherwise', async (t) => {
  const script = (await readdir(join(WEB_DIST, 'assets'))).find((n) => /^index-.*\.js$/.test(n));
  assert.ok(script, 'the build has an index-*.js');
  const original = await readFile(join(WEB_DIST, 'assets', script));
  const s = await startTestServer(t);
  const url = `${s.url}/static/assets/${script}`;

  const br = await get(url, { 'Accept-Encoding': 'gzip, deflate, br' });
  assert.equal(br.status, 200);
  assert.equal(br.headers['content-encoding'], 'br');
  assert.match(String(br.headers['content-type']), /javascript/);
  assert.match(String(br.headers.vary), /accept-encoding/i);
  assert.match(String(br.headers['cache-control']), /immutable/);
  assert.ok(br.body.length < original.length / 2, `compressed: ${br.body.length} of ${original.length} bytes`);
  assert.deepEqual(brotliDecompressSync(br.body), original);

  const gz = await get(url, { 'Accept-Encoding': 'gzip' });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.deepEqual(gunzipSync(gz.body), original);

  const raw = await get(url);
  assert.equal(raw.headers['content-encoding'], undefined);
  assert.deepEqual(raw.body, original);
});

test('/favicon.ico answers with the SVG icon without a login', async (t) => {
  const s = await startTestServer(t);
  const res = await get(`${s.url}/favicon.ico`);
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-type'], 'image/svg+xml');
  assert.deepEqual(res.body, await readFile(join(import.meta.dirname, '../../../web/favicon.svg')));
});
