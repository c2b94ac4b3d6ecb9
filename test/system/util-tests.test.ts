// POST /api/util/test against local targets only: temp dirs, a loopback HTTP server, 127.0.0.1 TCP/UDP ports, localhost.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { createSocket } from 'node:dgram';
import { createHash } from 'node:crypto';
import { stat, writeFile, chmod, readdir, readFile } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { tempDir } from '../helpers/temp-dir.ts';

type Plain = Record<string, unknown>;

async function utilTest(s: TestServer, body: Plain, key?: string): Promise<{ status: number; body: Plain }> {
  const res = await s.api('/api/util/test', { method: 'POST', json: body, ...(key ? { key } : {}) });
  return { status: res.status, body: await res.json() as Plain };
}

const md5 = (x: string) => createHash('md5').update(x).digest('hex');

/** A small site with the situations the URL test has to judge. */
function handler(req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '/';
  const auth = req.headers.authorization ?? '';
  if (url === '/ok') return void res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end('hello');
  if (url === '/json') return void res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"a":1,"b":[true]}');
  if (url === '/html') return void res.writeHead(200, { 'Content-Type': 'text/html' }).end('<p>hi</p>');
  if (url === '/redirect') return void res.writeHead(302, { Location: '/ok' }).end();
  if (url === '/teapot') return void res.writeHead(418).end();
  if (url === '/boom') return void res.writeHead(503).end();
  if (url === '/slow') return; // never answers
  if (url === '/stream') {
    // Like an MJPEG webcam: headers, then data forever.
    res.writeHead(200, { 'Content-Type': 'multipart/x-mixed-replace; boundary=frame' });
    const tick = setInterval(() => res.write('--frame\r\n\r\n'), 20);
    res.on('close', () => clearInterval(tick));
    return;
  }
  if (url === '/method') return void res.writeHead(req.method === 'POST' ? 200 : 405).end();
  if (url === '/basic') {
    const ok = auth === `Basic ${Buffer.from('alice:wonder').toString('base64')}`;
    return void res.writeHead(ok ? 200 : 401, ok ? {} : { 'WWW-Authenticate': 'Basic realm="t"' }).end();
  }
  if (url === '/bearer') return void res.writeHead(auth === 'Bearer tok3n' ? 200 : 401).end();
  if (url === '/digest') {
    const m = /^Digest (.*)$/.exec(auth);
    if (m) {
      const p: Record<string, string> = {};
      for (const x of m[1].matchAll(/(\w+)=(?:"([^"]*)"|([^,\s]*))/g)) p[x[1]] = x[2] ?? x[3];
      const ha1 = md5('bob:gantry:builder');
      const ha2 = md5(`${req.method}:${p.uri}`);
      const expected = md5(`${ha1}:${p.nonce}:${p.nc}:${p.cnonce}:${p.qop}:${ha2}`);
      if (p.username === 'bob' && p.nonce === 'n0nce' && p.opaque === 'op' && p.response === expected) return void res.writeHead(200).end();
    }
    return void res.writeHead(401, { 'WWW-Authenticate': 'Digest realm="gantry", qop="auth", nonce="n0nce", opaque="op"' }).end();
  }
  res.writeHead(404).end();
}

async function site(t: { after: (fn: () => unknown) => void }): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => { server.closeAllConnections(); server.close(); });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('path: existence, type, access, directory creation and the write balloon', async (t) => {
  const s = await startTestServer(t);
  const dir = await tempDir(t, 'gantry-path-');
  const file = join(dir, 'f.txt');
  await writeFile(file, 'x');
  await chmod(file, 0o644);

  let r = await utilTest(s, { command: 'path', path: file });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { path: file, exists: true, typeok: true, access: true, result: true });
  r = await utilTest(s, { command: 'path', path: file, check_type: 'dir' });
  assert.deepEqual(r.body, { path: file, exists: true, typeok: false, access: true, result: false });
  r = await utilTest(s, { command: 'path', path: file, check_type: 'file', check_access: ['r', 'w'] });
  assert.equal(r.body.result, true);
  // Without any x bit even root may not execute.
  r = await utilTest(s, { command: 'path', path: file, check_access: ['x'] });
  assert.deepEqual([r.body.access, r.body.result], [false, false]);
  r = await utilTest(s, { command: 'path', path: join(dir, 'missing') });
  assert.deepEqual(r.body, { path: join(dir, 'missing'), exists: false, typeok: true, access: true, result: false });

  const created = join(dir, 'new', 'nested');
  r = await utilTest(s, { command: 'path', path: created, check_type: 'dir', allow_create_dir: true, check_writable_dir: true });
  assert.deepEqual(r.body, { path: created, exists: true, typeok: true, access: true, result: true });
  assert.ok((await stat(created)).isDirectory());
  assert.deepEqual(await readdir(created), [], 'the test balloon is removed again');
  // /proc/self is a directory nobody can write into, root included.
  r = await utilTest(s, { command: 'path', path: '/proc/self', check_type: 'dir', check_writable_dir: true });
  assert.deepEqual([r.body.exists, r.body.typeok, r.body.access, r.body.result], [true, true, false, false]);

  assert.equal((await utilTest(s, { command: 'path' })).status, 400);
  assert.equal((await utilTest(s, { command: 'path', path: file, check_type: 'socket' })).status, 400);
});

test('url: status codes and ranges, timeouts, redirects, methods', async (t) => {
  const s = await startTestServer(t);
  const base = await site(t);
  const url = async (extra: Plain) => {
    const r = await utilTest(s, { command: 'url', ...extra });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  };
  assert.deepEqual(await url({ url: `${base}/ok` }), { url: `${base}/ok`, status: 200, result: true });
  assert.deepEqual(await url({ url: `${base}/redirect` }), { url: `${base}/redirect`, status: 302, result: true });
  assert.deepEqual(await url({ url: `${base}/teapot` }), { url: `${base}/teapot`, status: 418, result: false });
  assert.equal((await url({ url: `${base}/teapot`, status: 'client_error' })).result, true);
  assert.equal((await url({ url: `${base}/teapot`, status: 418 })).result, true);
  assert.equal((await url({ url: `${base}/teapot`, status: ['418'] })).result, true);
  assert.equal((await url({ url: `${base}/teapot`, status: ['success', 500] })).result, false);
  assert.equal((await url({ url: `${base}/boom`, status: 'server_error' })).result, true);
  assert.equal((await url({ url: `${base}/boom`, status: 'error' })).result, true);
  assert.equal((await url({ url: `${base}/boom`, status: 'any' })).result, true);
  assert.equal((await url({ url: `${base}/boom`, status: ['normal'] })).result, false);
  assert.equal((await url({ url: `${base}/ok`, status: 'informational' })).result, false);
  assert.equal((await url({ url: `${base}/redirect`, status: 'redirection' })).result, true);
  assert.equal((await url({ url: `${base}/redirect`, status: 'success' })).result, false);
  assert.equal((await url({ url: `${base}/method` })).status, 405);
  assert.equal((await url({ url: `${base}/method`, method: 'POST' })).status, 200);
  assert.deepEqual(await url({ url: `${base}/slow`, timeout: 0.3 }), { url: `${base}/slow`, status: 0, result: false });
  assert.deepEqual(await url({ url: `${base}/stream`, method: 'GET', timeout: 5 }), { url: `${base}/stream`, status: 200, result: true });
  const closed = createTcpServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  assert.deepEqual(await url({ url: `http://127.0.0.1:${closedPort}/` }), { url: `http://127.0.0.1:${closedPort}/`, status: 0, result: false });

  for (const bad of [{ url: 'ftp://127.0.0.1/x' }, { url: 'not a url' }, {}, { url: `${base}/ok`, status: 'weird' },
    { url: `${base}/ok`, response: 'xml' }, { url: `${base}/ok`, timeout: -1 }]) {
    assert.equal((await utilTest(s, { command: 'url', ...bad })).status, 400, JSON.stringify(bad));
  }
});

test('url: response bodies, content type lists, and basic/digest/bearer auth', async (t) => {
  const s = await startTestServer(t);
  const base = await site(t);
  const url = async (extra: Plain) => (await utilTest(s, { command: 'url', ...extra })).body;

  const bytes = await url({ url: `${base}/ok`, method: 'GET', response: 'bytes' });
  const response = bytes.response as { headers: Record<string, string>; content: string };
  assert.equal(response.content, Buffer.from('hello').toString('base64'));
  assert.equal(response.headers['content-type'], 'text/plain; charset=utf-8');
  assert.equal((await url({ url: `${base}/ok`, method: 'GET', response: true }) as { response: { content: string } }).response.content, 'aGVsbG8=');
  const json = await url({ url: `${base}/json`, method: 'GET', response: 'json' });
  assert.deepEqual((json.response as { content: unknown }).content, { a: 1, b: [true] });
  assert.equal(json.result, true);

  assert.equal((await url({ url: `${base}/ok`, content_type_whitelist: ['application/*'] })).result, false);
  assert.equal((await url({ url: `${base}/json`, content_type_whitelist: ['application/*'] })).result, true);
  assert.equal((await url({ url: `${base}/json`, content_type_whitelist: ['application/json'] })).result, true);
  assert.equal((await url({ url: `${base}/ok`, content_type_blacklist: ['text/*'] })).result, false);
  assert.equal((await url({ url: `${base}/html`, content_type_whitelist: ['text/*'], content_type_blacklist: ['text/html'] })).result, false);
  assert.equal((await url({ url: `${base}/ok`, content_type_whitelist: ['text/*'], content_type_blacklist: ['text/html'] })).result, true);
  assert.equal((await url({ url: `${base}/redirect`, content_type_whitelist: ['*/*'] })).result, false, 'no content type, whitelist given');

  assert.deepEqual([(await url({ url: `${base}/basic` })).status, (await url({ url: `${base}/basic`, basicAuth: { username: 'alice', password: 'nope' } })).status,
    (await url({ url: `${base}/basic`, basicAuth: { username: 'alice', password: 'wonder' } })).status], [401, 401, 200]);
  assert.equal((await url({ url: `${base}/bearer`, bearerAuth: 'tok3n' })).status, 200);
  assert.equal((await url({ url: `${base}/bearer`, bearerAuth: 'other' })).status, 401);
  assert.equal((await url({ url: `${base}/digest`, digestAuth: { username: 'bob', password: 'builder' } })).status, 200);
  assert.equal((await url({ url: `${base}/digest`, digestAuth: { username: 'bob', password: 'wrong' } })).status, 401);
});

test('url: validSsl decides whether a self-signed certificate is accepted', async (t) => {
  const s = await startTestServer(t);
  const dir = await tempDir(t, 'gantry-tls-');
  await promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')]);
  const server = createHttpsServer({ key: await readFile(join(dir, 'key.pem')), cert: await readFile(join(dir, 'cert.pem')) }, handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => { server.closeAllConnections(); server.close(); });
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/ok`;
  assert.deepEqual((await utilTest(s, { command: 'url', url })).body, { url, status: 0, result: false });
  assert.deepEqual((await utilTest(s, { command: 'url', url, validSsl: false })).body, { url, status: 200, result: true });
});

test('server: tcp and udp reachability on 127.0.0.1 and localhost', async (t) => {
  const s = await startTestServer(t);
  const tcp = createTcpServer((c) => c.end());
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
  t.after(() => tcp.close());
  const tcpPort = (tcp.address() as AddressInfo).port;
  const udp = createSocket('udp4');
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', () => r()));
  udp.on('message', (_m, rinfo) => udp.send('pong', rinfo.port, rinfo.address));
  t.after(() => udp.close());
  const udpPort = udp.address().port;
  const unusedUdp = createSocket('udp4');
  await new Promise<void>((r) => unusedUdp.bind(0, '127.0.0.1', () => r()));
  const closedUdpPort = unusedUdp.address().port;
  await new Promise<void>((r) => unusedUdp.close(() => r()));

  const server = async (extra: Plain) => {
    const r = await utilTest(s, { command: 'server', ...extra });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  };
  assert.deepEqual(await server({ host: '127.0.0.1', port: tcpPort }), { host: '127.0.0.1', port: tcpPort, protocol: 'tcp', result: true });
  assert.equal((await server({ host: 'localhost', port: tcpPort, protocol: 'tcp', timeout: 2 })).result, true);
  await new Promise<void>((r) => tcp.close(() => r()));
  assert.equal((await server({ host: '127.0.0.1', port: tcpPort })).result, false);
  assert.deepEqual(await server({ host: '127.0.0.1', port: udpPort, protocol: 'udp' }), { host: '127.0.0.1', port: udpPort, protocol: 'udp', result: true });
  assert.equal((await server({ host: '127.0.0.1', port: closedUdpPort, protocol: 'udp', timeout: 2 })).result, false);

  for (const bad of [{ host: '127.0.0.1' }, { port: 80 }, { host: '127.0.0.1', port: 0 }, { host: '127.0.0.1', port: 70000 },
    { host: '127.0.0.1', port: 80, protocol: 'sctp' }]) {
    assert.equal((await utilTest(s, { command: 'server', ...bad })).status, 400, JSON.stringify(bad));
  }
});

test('resolution: localhost resolves, an impossible name does not', async (t) => {
  const s = await startTestServer(t);
  assert.deepEqual((await utilTest(s, { command: 'resolution', name: 'localhost' })).body, { name: 'localhost', result: true });
  assert.deepEqual((await utilTest(s, { command: 'resolution', name: 'no such host!' })).body, { name: 'no such host!', result: false });
  assert.equal((await utilTest(s, { command: 'resolution' })).status, 400);
});

test('address: the caller by default, LAN membership and subnet from the machine\'s own interfaces', async (t) => {
  const s = await startTestServer(t);
  assert.deepEqual((await utilTest(s, { command: 'address' })).body, { address: '127.0.0.1', is_lan_address: true, subnet: '127.0.0.0/8' });
  assert.deepEqual((await utilTest(s, { command: 'address', address: '127.9.8.7' })).body, { address: '127.9.8.7', is_lan_address: true, subnet: '127.0.0.0/8' });
  assert.deepEqual((await utilTest(s, { command: 'address', address: '::ffff:127.0.0.1' })).body.subnet, '127.0.0.0/8');
  // Documentation ranges; pick one that none of this machine's interfaces uses.
  const toInt = (a: string) => a.split('.').reduce((x, o) => x * 256 + Number(o), 0);
  const maskOf = (bits: number) => (bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0);
  const v4 = Object.values(networkInterfaces()).flat().filter((i) => i?.family === 'IPv4' && i.cidr);
  const onLan = (a: string) => v4.some((i) => {
    const m = maskOf(Number(i!.cidr!.split('/')[1]));
    return ((toInt(a) & m) >>> 0) === ((toInt(i!.address) & m) >>> 0);
  });
  const foreign = ['192.0.2.55', '198.51.100.7', '203.0.113.9'].find((a) => !onLan(a));
  assert.ok(foreign);
  assert.deepEqual((await utilTest(s, { command: 'address', address: foreign })).body, { address: foreign, is_lan_address: false });
  const own = Object.values(networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal && i.cidr);
  if (own?.cidr) {
    const r = await utilTest(s, { command: 'address', address: own.address });
    assert.equal(r.body.is_lan_address, true);
    const [net, prefix] = (r.body.subnet as string).split('/');
    assert.equal(prefix, own.cidr.split('/')[1]);
    const mask = maskOf(Number(prefix));
    assert.equal((toInt(own.address) & mask) >>> 0, toInt(net), 'subnet is the network of the interface');
  }
  const lo6 = Object.values(networkInterfaces()).flat().some((i) => i?.address === '::1');
  if (lo6) assert.deepEqual((await utilTest(s, { command: 'address', address: '::1' })).body, { address: '::1', is_lan_address: true, subnet: '::1/128' });
  assert.equal((await utilTest(s, { command: 'address', address: 'not-an-ip' })).status, 400);
});

test('only admins may run tests; unknown or missing command is 400', async (t) => {
  const s = await startTestServer(t);
  await s.access.users.addUser({ name: 'u2', password: 'secret-pass-5', groups: ['users'] });
  const key = await s.access.users.generateUserKey('u2');
  assert.equal((await utilTest(s, { command: 'resolution', name: 'localhost' }, key)).status, 403);
  assert.deepEqual(await utilTest(s, { command: 'teleport' }), { status: 400, body: { error: 'command is invalid' } });
  assert.deepEqual(await utilTest(s, { path: '/tmp' }), { status: 400, body: { error: 'command is invalid' } });
});
