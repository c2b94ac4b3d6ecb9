// Behind a reverse proxy under a prefix (the README's nginx and haproxy set-ups): URLs Gantry hands out name the proxy's scheme, host and prefix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer } from '../helpers/server.ts';

/**
 * A proxy that does what the README's configurations do: answers only under `prefix`, strips it, and adds `headers`
 * (computed per request, like nginx's `$http_host`) before passing the request on, body streamed both ways.
 */
async function startProxy(t: test.TestContext, upstream: string, prefix: string, headers: (h: IncomingHttpHeaders) => Record<string, string>): Promise<string> {
  const target = new URL(upstream);
  const server = createServer((req, res) => {
    if (!req.url?.startsWith(`${prefix}/`)) {
      res.writeHead(404).end();
      return;
    }
    const up = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url.slice(prefix.length),
      headers: { ...req.headers, ...headers(req.headers) } }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      upRes.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections(); // fetch keeps connections alive
  }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function upload(base: string, key: string, name: string): Promise<Response> {
  const form = new FormData();
  form.append('file', new Blob(['M83\nG1 X10 E1 F600\n']), name);
  return fetch(`${base}/api/files/local`, { method: 'POST', headers: { 'X-Api-Key': key }, body: form });
}

test('nginx style (X-Script-Name, X-Scheme, Host passed on): Location and refs name https://host/prefix, and they resolve through the proxy', async (t) => {
  const s = await startTestServer(t);
  const proxy = await startProxy(t, s.url, '/gantry', (h) => ({ 'x-script-name': '/gantry', 'x-scheme': 'https', host: h.host ?? '' }));
  const proxyHost = new URL(proxy).host;

  const res = await upload(`${proxy}/gantry`, s.apiKey, 'cube.gcode');
  assert.equal(res.status, 201);
  assert.equal(res.headers.get('location'), `https://${proxyHost}/gantry/api/files/local/cube.gcode`);
  const body = (await res.json()) as { files: { local: { refs: { resource: string; download: string } } } };
  assert.equal(body.files.local.refs.resource, `https://${proxyHost}/gantry/api/files/local/cube.gcode`);
  assert.equal(body.files.local.refs.download, `https://${proxyHost}/gantry/downloads/files/local/cube.gcode`);

  // The proxy terminates TLS, so the URL is followed over plain HTTP to the same host and path.
  const follow = (url: string) => fetch(url.replace(/^https:/, 'http:'), { headers: { 'X-Api-Key': s.apiKey } });
  const info = await follow(body.files.local.refs.resource);
  assert.equal(info.status, 200);
  assert.equal(((await info.json()) as { name: string }).name, 'cube.gcode');
  const download = await follow(body.files.local.refs.download);
  assert.equal(download.status, 200);
  assert.equal(await download.text(), 'M83\nG1 X10 E1 F600\n');
});

test('haproxy style (X-Forwarded-Proto/Host/Port, X-Forwarded-Prefix; lists take their first entry): the same URLs', async (t) => {
  const s = await startTestServer(t);
  const proxy = await startProxy(t, s.url, '/printer', () => ({
    'x-forwarded-proto': 'https, http', 'x-forwarded-host': 'octo.example, inner.example', 'x-forwarded-port': '8443',
    'x-forwarded-prefix': '/printer/',
  }));
  const res = await upload(`${proxy}/printer`, s.apiKey, 'part.gcode');
  assert.equal(res.status, 201);
  assert.equal(res.headers.get('location'), 'https://octo.example:8443/printer/api/files/local/part.gcode');
  const list = (await (await fetch(`${proxy}/printer/api/files/local/part.gcode`, { headers: { 'X-Api-Key': s.apiKey } })).json()) as { refs: { download: string } };
  assert.equal(list.refs.download, 'https://octo.example:8443/printer/downloads/files/local/part.gcode');
});

test('without proxy headers the URLs name the server itself', async (t) => {
  const s = await startTestServer(t);
  const res = await upload(s.url, s.apiKey, 'plain.gcode');
  assert.equal(res.headers.get('location'), `${s.url}/api/files/local/plain.gcode`);
});

test('the web UI under a prefix: the page names its assets and API base under the prefix, and they load through the proxy', async (t) => {
  const s = await startTestServer(t);
  const proxy = await startProxy(t, s.url, '/gantry', (h) => ({ 'x-script-name': '/gantry', host: h.host ?? '' }));
  const page = await fetch(`${proxy}/gantry/`);
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.match(html, /<meta name="gantry-base" content="\/gantry">/);
  const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
  assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), `script and style in ${assets.join(', ')}`);
  for (const asset of assets) {
    assert.match(asset, /^\/gantry\/static\/assets\//, asset);
    const res = await fetch(`${proxy}${asset}`);
    assert.equal(res.status, 200, asset);
    // The bundle must not reach for root-absolute paths of its own (its worker, fonts) that would miss the prefix.
    if (asset.endsWith('.js')) assert.doesNotMatch(await res.text(), /["'`]\/static\//, `${asset} names /static/ absolutely`);
  }
  // The login page too; without proxy headers the page names the root.
  assert.match(await (await fetch(`${proxy}/gantry/login`)).text(), /src="\/gantry\/static\/assets\//);
  const direct = await (await fetch(`${s.url}/`)).text();
  assert.match(direct, /<meta name="gantry-base" content="">/);
  assert.match(direct, /src="\/static\/assets\//);
  // A hostile prefix cannot break out of the attribute.
  const hostile = await (await fetch(`${s.url}/`, { headers: { 'X-Script-Name': '/"><script>x</script>' } })).text();
  assert.doesNotMatch(hostile, /<script>x/);
});

test('a prefix header with a long run of slashes inside costs what a plain one does (no credentials needed to send one)', async (t) => {
  const s = await startTestServer(t);
  const prefix = `${'/'.repeat(15_000)}x`;
  const t0 = performance.now();
  for (let i = 0; i < 8; i++) {
    const page = await fetch(`${s.url}/`, { headers: { 'X-Script-Name': `${prefix}//` } });
    assert.match(await page.text(), new RegExp(`<meta name="gantry-base" content="${prefix}">`), 'trailing slashes are dropped');
    const list = await fetch(`${s.url}/api/timelapse`, { headers: { 'X-Api-Key': s.apiKey, 'X-Forwarded-Prefix': `${prefix}/` } });
    assert.equal(list.status, 200);
  }
  // Trimmed by a backtracking expression these sixteen requests took ≈ 10 s (0.6 s each, the event loop held).
  const ms = performance.now() - t0;
  assert.ok(ms < 3000, `${ms.toFixed(0)} ms`);
});
