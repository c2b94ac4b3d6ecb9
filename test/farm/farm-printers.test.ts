// Issue #53's farm core on one real server: a second printer from config.yaml `printers` is a complete endpoint on its
// own port and under /printer/NAME/ (API, SockJS), shares the library and keys, takes queue jobs; printers are added and
// removed through /api/farm/printers while running (persisted; a printing one is refused), and the farm survives a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { FAST_PRINTER } from '../helpers/connected-server.ts';
import { nextEvent, waitFor } from '../helpers/wait.ts';
import { uploadFile, smallGcode } from '../printer/job/helpers.ts';
import { rawClient, sockjsClient, passiveLogin, userWithKey } from '../push/push-clients.ts';

const LONG = 60_000;

async function json<T>(r: Response): Promise<T> {
  const text = await r.text();
  assert.ok(r.ok, `${r.status} ${text}`);
  return JSON.parse(text) as T;
}

interface Listed { printers: Array<{ name: string; httpPort: number | null; prefix: string; state: { text: string } }> }

const stateOf = async (server: TestServer, base: string): Promise<string> =>
  (await json<{ current: { state: string } }>(await server.api(`${base}/api/connection`))).current.state;

test('a farm of printers: own ports, /printer/NAME/ prefixes, shared library and keys, added and removed while running', async (t) => {
  const server = await startTestServer(t, { settings: { ...FAST_PRINTER, printers: [{ name: 'two', virtual: true, httpPort: 0 }] } });

  // The list: default on the main port, two on its own.
  const listed = await json<Listed>(await server.api('/api/farm/printers'));
  assert.deepEqual(listed.printers.map((p) => p.name), ['default', 'two']);
  assert.equal(listed.printers[0].httpPort, server.port);
  const twoPort = listed.printers[1].httpPort;
  assert.ok(typeof twoPort === 'number' && twoPort > 0 && twoPort !== server.port);
  assert.equal(listed.printers[1].prefix, '/printer/two/');
  const own = `http://127.0.0.1:${twoPort}`;
  const ownApi = (path: string, init: RequestInit = {}) => fetch(own + path, { ...init, headers: { 'X-Api-Key': server.apiKey, ...(init.headers ?? {}) } });

  // Admin only.
  assert.equal((await server.api('/api/farm/printers', { key: null })).status, 403);

  // The prefix without its slash is redirected; with it, the printer's API answers (the global key is the farm's).
  const bare = await server.api('/printer/two', { redirect: 'manual' });
  assert.equal(bare.status, 301);
  assert.equal(bare.headers.get('location'), '/printer/two/');
  assert.equal((await server.api('/printer/nope/api/version')).status, 404);
  assert.match((await json<{ text: string }>(await server.api('/printer/two/api/version'))).text, /^OctoPrint/);

  // A virtual printer added by config connects by itself; the default printer stays closed: they are two printers.
  await waitFor('two operational', async () => (await stateOf(server, '/printer/two')) === 'Operational', { timeoutMs: LONG });
  assert.equal((await json<{ current: { state: string } }>(await ownApi('/api/connection'))).current.state, 'Operational');
  assert.equal(await stateOf(server, ''), 'Closed');
  assert.equal(await stateOf(server, '/printer/default'), 'Closed');

  // Its own name and installation id (discovery's uuid), its own settings store.
  const mainSettings = await json<{ appearance: { name: string }; plugins: { discovery: { upnpUuid: string } } }>(await server.api('/api/settings'));
  const twoSettings = await json<{ appearance: { name: string }; plugins: { discovery: { upnpUuid: string } } }>(await ownApi('/api/settings'));
  assert.equal(twoSettings.appearance.name, 'two');
  assert.ok(twoSettings.plugins.discovery.upnpUuid && twoSettings.plugins.discovery.upnpUuid !== mainSettings.plugins.discovery.upnpUuid);

  // The global API key shown by every printer's settings is the farm's, the one its access checks (the printer's own
  // config.yaml has none); a regenerated key shows on every printer at once, and the old one stops working everywhere.
  type KeyOf = { api: { key: string | null } };
  const keyVia = async (get: (p: string) => Promise<Response>) => (await json<KeyOf>(await get('/api/settings'))).api.key;
  const prefixApi = (path: string) => server.api(`/printer/two${path}`);
  assert.equal(await keyVia((p) => server.api(p)), server.apiKey);
  assert.equal(await keyVia(ownApi), server.apiKey);
  assert.equal(await keyVia(prefixApi), server.apiKey);
  const regenerated = await json<{ apikey: string }>(await ownApi('/api/settings/apikey', { method: 'POST' }));
  assert.notEqual(regenerated.apikey, server.apiKey);
  const withNew = (path: string) => fetch(own + path, { headers: { 'X-Api-Key': regenerated.apikey } });
  assert.equal(await keyVia(withNew), regenerated.apikey);
  assert.equal(await keyVia((p) => server.api(p, { key: regenerated.apikey })), regenerated.apikey);
  assert.equal(await keyVia((p) => server.api(`/printer/two${p}`, { key: regenerated.apikey })), regenerated.apikey);
  assert.equal((await ownApi('/api/job')).status, 403);
  // Back to the key the rest of the test (and the server helper) uses; the config is the main one's.
  await server.config.patch({ api: { key: server.apiKey } });
  assert.equal(await keyVia(ownApi), server.apiKey);

  // An app key paired through one printer's endpoint works on every printer.
  const alice = await userWithKey(server, 'alice', { groups: ['admins', 'users'] });
  const req = await json<{ app_token: string }>(await ownApi('/plugin/appkeys/request', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ app: 'Farm test', user: 'alice' }),
  }));
  const pending = await json<{ pending: Record<string, unknown> }>(await server.api('/printer/two/api/plugin/appkeys', { key: alice.key }));
  const [userToken] = Object.keys(pending.pending);
  assert.ok(userToken);
  assert.equal((await server.api(`/plugin/appkeys/decision/${userToken}`, { method: 'POST', json: { decision: true }, key: alice.key })).status, 204);
  const polled = await json<{ api_key: string }>(await server.api(`/printer/two/plugin/appkeys/request/${req.app_token}`, { key: null }));
  for (const url of [`${server.url}/api/job`, `${server.url}/printer/two/api/job`, `${own}/api/job`]) {
    assert.equal((await fetch(url, { headers: { 'X-Api-Key': polled.api_key } })).status, 200, url);
  }

  // Push under the prefix: SockJS and the raw websocket carry printer two's state, not the default one's.
  const auth = await passiveLogin(server, server.apiKey);
  const sock = await sockjsClient({ url: `${server.url}/printer/two` });
  t.after(() => sock.close());
  sock.send({ auth });
  await sock.next('current', (p: { state: { text: string } }) => p.state.text === 'Operational', { timeoutMs: LONG });
  const raw = await rawClient({ url: own });
  t.after(() => raw.close());
  raw.send({ auth });
  await raw.next('current', (p: { state: { text: string } }) => p.state.text === 'Operational', { timeoutMs: LONG });

  // The library is shared: uploaded on the main port, printed on two's own port, held against deletion meanwhile; a
  // printing printer cannot be removed.
  assert.equal((await uploadFile(server, 'part.gcode', smallGcode(400))).status, 201);
  const two = server.farm.get('two');
  assert.ok(two);
  const done = nextEvent(two.events, 'PrintDone', undefined, LONG);
  const started = nextEvent(two.events, 'PrintStarted', undefined, LONG);
  const select = await ownApi('/api/files/local/part.gcode', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ command: 'select', print: true }) });
  assert.equal(select.status, 204);
  await started;
  const refused = await server.api('/api/farm/printers/two', { method: 'DELETE' });
  assert.equal(refused.status, 409);
  assert.match((await refused.json() as { error: string }).error, /printing/);
  assert.equal((await server.api('/api/files/local/part.gcode', { method: 'DELETE' })).status, 409);
  await done;
  await waitFor('a history entry on two only', async () => (await two.jobs.printHistory()).length === 1, { timeoutMs: LONG });
  assert.equal((await server.farm.get('default')?.jobs.printHistory())?.length, 0);

  // The queue dispatches to the farm's printers: a job for printer two starts there.
  const queued = nextEvent(two.events, 'PrintStarted', undefined, LONG);
  const q = await server.api('/api/farm/queue', { method: 'POST', json: { path: 'part.gcode', copies: 1, constraint: { kind: 'printer', printer: 'two' } } });
  assert.equal(q.status, 201, await q.clone().text());
  await queued;
  await nextEvent(two.events, 'PrintDone', undefined, LONG).catch(() => {});
  await waitFor('two idle again', () => !two.jobs.isPrinting(), { timeoutMs: LONG });

  // Bad additions are refused with a clear 4xx.
  for (const [body, status] of [
    [{ name: 'default', virtual: true }, 409],
    [{ name: 'two', virtual: true }, 409],
    [{ name: 'a/b', virtual: true }, 400],
    [{ name: 'x', virtual: true, serialPort: '/dev/ttyUSB0' }, 400],
    [{ name: 'x', httpPort: twoPort }, 409],
  ] as const) {
    const r = await server.api('/api/farm/printers', { method: 'POST', json: body });
    assert.equal(r.status, status, JSON.stringify(body));
    assert.equal(typeof ((await r.json()) as { error: unknown }).error, 'string');
  }
  assert.equal((await server.api('/api/farm/printers/nope', { method: 'DELETE' })).status, 404);
  assert.equal((await server.api('/api/farm/printers/default', { method: 'DELETE' })).status, 409);

  // Added while running: served at once on its port and prefix, and saved in config.yaml before the answer.
  const added = await server.api('/api/farm/printers', { method: 'POST', json: { name: 'three', virtual: true, httpPort: 0 } });
  assert.equal(added.status, 201);
  const threePort = ((await added.json()) as { printer: { httpPort: number } }).printer.httpPort;
  assert.ok(threePort > 0);
  const saved = () => readFile(join(server.baseDir, 'config.yaml'), 'utf8').then((text) => (parse(text) as { printers: Array<{ name: string }> }).printers.map((p) => p.name));
  assert.deepEqual(await saved(), ['two', 'three']);
  assert.equal((await fetch(`http://127.0.0.1:${threePort}/api/version`, { headers: { 'X-Api-Key': server.apiKey } })).status, 200);
  assert.equal((await server.api('/printer/three/api/version')).status, 200);
  // Removed while idle: its port is released and it is gone from the list, the prefix and the config.
  assert.equal((await server.api('/api/farm/printers/three', { method: 'DELETE' })).status, 204);
  await assert.rejects(fetch(`http://127.0.0.1:${threePort}/api/version`));
  assert.equal((await server.api('/printer/three/api/version')).status, 404);
  assert.deepEqual((await json<Listed>(await server.api('/api/farm/printers'))).printers.map((p) => p.name), ['default', 'two']);
  assert.deepEqual(await saved(), ['two']);
  sock.close();
  raw.close();

  // A restart on the same base dir brings the farm back, printer two with its own history.
  await server.stop();
  const again = await startTestServer(t, { baseDir: server.baseDir });
  const back = await json<Listed>(await again.api('/api/farm/printers'));
  assert.deepEqual(back.printers.map((p) => p.name), ['default', 'two']);
  assert.equal((await again.farm.get('two')?.jobs.printHistory())?.length, 2);
});
