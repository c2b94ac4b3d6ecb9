// Push channel protocol on the real server: transports incl. SockJS fallbacks, `connected`, history/current, events,
// throttle, subscribe, config_hash, Shutdown, status rounds only while clients are connected (access rules: channel-auth.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { rawClient, sockjsClient, userWithKey, passiveLogin, sleep } from './push-clients.ts';
import { startScriptedPush } from './scripted-printer.ts';
import { waitFor } from '../helpers/wait.ts';

test('raw websocket: connected first, nothing private before auth, history then current after auth', async (t) => {
  const server = await startTestServer(t);
  const { auth } = await userWithKey(server, 'alice');
  const c = await rawClient(server);
  t.after(() => c.close());
  const connected = (await c.next('connected')) as Record<string, unknown>;
  assert.deepEqual(Object.keys(c.messages[0]), ['connected']);
  for (const k of ['version', 'display_version', 'branch', 'python_version', 'plugin_hash', 'config_hash', 'debug', 'safe_mode', 'online', 'permissions']) {
    assert.ok(k in connected, `connected.${k}`);
  }
  assert.equal(connected.version, '1.9.3');
  assert.equal(connected.config_hash, server.config.hash());
  assert.ok(Array.isArray(connected.permissions) && (connected.permissions as Array<{ key: string }>).some((p) => p.key === 'STATUS'));

  // Events while unauthenticated are not delivered (guests have no STATUS by default). An authenticated observer
  // getting the event shows its batch went out; `history` after auth shows nothing from that batch was on c's socket.
  const observer = await rawClient(server);
  t.after(() => observer.close());
  observer.send({ auth });
  await observer.next('history');
  server.events.emit('PrinterProfileModified', { identifier: 'x' });
  await observer.next('event', (e: { type: string }) => e.type === 'PrinterProfileModified');

  c.send({ auth });
  const history = (await c.next('history')) as Record<string, unknown>;
  assert.deepEqual(c.messages.slice(0, c.messages.findIndex((m) => 'history' in m)).map((m) => Object.keys(m)[0]), ['connected']);
  for (const k of ['state', 'job', 'progress', 'currentZ', 'offsets', 'resends', 'temps', 'logs', 'messages', 'markings', 'serverTime']) {
    assert.ok(k in history, `history.${k}`);
  }
  assert.ok(Array.isArray(history.temps));
  const current = (await c.next('current')) as Record<string, unknown>;
  assert.ok(Array.isArray(current.temps));
  assert.ok(Array.isArray(current.busyFiles));
  assert.equal(typeof current.serverTime, 'number');
  const types = c.messages.map((m) => Object.keys(m)[0]);
  assert.ok(types.indexOf('history') < types.indexOf('current'));

  server.events.emit('PrinterProfileModified', { identifier: 'abc' });
  const ev = (await c.next('event', (e: { type: string }) => e.type === 'PrinterProfileModified')) as { payload: unknown };
  assert.deepEqual(ev.payload, { identifier: 'abc' });
  server.events.emit('Home', {});
  const home = (await c.next('event', (e: { type: string }) => e.type === 'Home')) as { payload: unknown };
  assert.equal(home.payload, null);
});

test('rounds of `current` run while someone is connected: after the last client left, the next one gets them again', async (t) => {
  const server = await startTestServer(t);
  const { auth } = await userWithKey(server, 'carol');
  for (const round of [1, 2]) {
    const c = await rawClient(server);
    c.send({ auth });
    await c.next('history');
    await c.next('current');
    // A marking changes the status without a state change: only a round of the ticking timer sends it.
    server.events.emit('ChartMarked', { type: 'test', label: `round ${round}` });
    await c.next('current', (m: { markings: Array<{ label: string }> }) => m.markings.some((k) => k.label === `round ${round}`));
    c.close();
    await waitFor('the client to be gone', () => server.push.clientCount === 0);
  }
});

test('SockJS client (websocket transport): objects inside frames, auth, history and events', async (t) => {
  const server = await startTestServer(t);
  const info = await fetch(`${server.url}/sockjs/info`);
  assert.equal(info.status, 200);
  assert.equal(((await info.json()) as { websocket: boolean }).websocket, true);
  const { auth } = await userWithKey(server, 'bob');
  const c = await sockjsClient(server);
  t.after(() => c.close());
  await c.next('connected');
  c.send({ auth });
  await c.next('history');
  await c.next('current');
  server.events.emit('UpdatedFiles', { type: 'printables' });
  const ev = (await c.next('event', (e: { type: string }) => e.type === 'UpdatedFiles')) as { payload: unknown };
  assert.deepEqual(ev.payload, { type: 'printables' });
});

test('SockJS xhr-streaming frames carry objects, not quoted strings; other upgrades are refused', async (t) => {
  const server = await startTestServer(t);
  const res = await fetch(`${server.url}/sockjs/000/abcdefgh/xhr_streaming`, { method: 'POST' });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('a[')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  while (!/a\[.*\]\n/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
  await reader.cancel();
  const frame = text.slice(text.indexOf('a['), text.indexOf(']\n', text.indexOf('a[')) + 1);
  assert.ok(frame.startsWith('a[{"connected":'), frame.slice(0, 40));
  const first = (JSON.parse(frame.slice(1)) as object[])[0];
  assert.ok('connected' in first);

  // Fastify routes still work next to the channel, and websocket upgrades elsewhere are refused.
  assert.equal((await server.api('/api/version')).status, 200);
  const WebSocket = (await import('ws')).default;
  const bad = new WebSocket(`${server.url.replace('http', 'ws')}/api/version`);
  const err = await new Promise<Error>((resolve) => bad.once('error', resolve));
  assert.match(err.message, /404/);
});

test('throttle, subscribe filters and the temperature/terminal batching of current', async (t) => {
  const server = await startTestServer(t);
  const sp = await startScriptedPush(t, server);
  const { auth } = await userWithKey(server, 'dan');
  const fast = await rawClient(sp);
  const slow = await rawClient(sp);
  const filtered = await rawClient(sp);
  t.after(() => { fast.close(); slow.close(); filtered.close(); });
  filtered.send({ subscribe: { state: { logs: '^Recv:', messages: false }, events: ['PrintStarted'], plugins: false } });
  for (const c of [fast, slow, filtered]) c.send({ auth });
  slow.send({ throttle: 4 });
  await Promise.all([fast.next('history'), slow.next('history'), filtered.next('history')]);

  // Feed 4 s of data, a point and two lines every 100 ms.
  const start = Date.now();
  let i = 0;
  while (Date.now() - start < 4000) {
    sp.printer.temperature(100 + i, 40);
    sp.printer.log(`Send: N${i} G1 X${i}`, `Recv: ok ${i}`);
    if (i % 10 === 0) sp.printer.received(`echo:message ${i}`);
    i++;
    await sleep(100);
  }
  // Until the last point reached every client (the slow client's next current is up to 2 s away).
  const got = (c: typeof fast, field: 'temps' | 'logs'): number => (c.ofType('current') as Array<Record<string, unknown[]>>).flatMap((m) => m[field]).length;
  await waitFor('every point at every client', () => got(fast, 'temps') >= i && got(slow, 'temps') >= i && got(filtered, 'logs') >= i);
  const elapsed = Date.now() - start;
  const fastCur = fast.ofType('current') as Array<{ temps: unknown[]; logs: string[]; messages: string[] }>;
  const slowCur = slow.ofType('current') as Array<{ temps: unknown[]; logs: string[] }>;
  // One current per 500 ms vs one per 2 s; none lost: all points and lines arrive in both cases.
  assert.ok(fastCur.length >= 5, `fast got ${fastCur.length}`);
  assert.ok(fastCur.length <= Math.ceil(elapsed / 500) + 1, `fast got ${fastCur.length} in ${elapsed} ms: more than one per 500 ms`);
  assert.equal(fastCur.flatMap((c) => c.messages).length, Math.ceil(i / 10));
  // Nothing changed, nothing sent.
  const quiet = fastCur.length;
  await sleep(1100); // more than two of the fast client's periods
  assert.equal(fast.ofType('current').length, quiet, 'current sent while nothing changed');
  assert.ok(slowCur.length <= Math.ceil(fastCur.length / 2), `slow got ${slowCur.length} vs fast ${fastCur.length}`);
  assert.equal(fastCur.flatMap((c) => c.temps).length, i);
  assert.equal(slowCur.flatMap((c) => c.temps).length, i);
  assert.equal(slowCur.flatMap((c) => c.logs).length, 2 * i);
  const filtLogs = (filtered.ofType('current') as Array<{ logs: string[]; messages: string[] }>).flatMap((c) => c.logs);
  assert.equal(filtLogs.length, i);
  assert.ok(filtLogs.every((l) => l.startsWith('Recv:')));
  assert.equal((filtered.ofType('current') as Array<{ messages: string[] }>).flatMap((c) => c.messages).length, 0);

  server.events.emit('PrinterProfileModified', { identifier: 'q' });
  sp.push.sendPlugin('someplugin', { a: 1 });
  await fast.next('event', (e: { type: string }) => e.type === 'PrinterProfileModified');
  await fast.next('plugin');
  // The event it asked for does arrive, on its socket after anything it was sent before: so its first event being
  // this one, and no plugin message before it, shows the two above were filtered out.
  server.events.emit('PrintStarted', { name: 'a.gcode', path: 'a.gcode', origin: 'local', size: 1 });
  const started = (await filtered.next('event')) as { type: string; payload: { path: string } };
  assert.equal(started.type, 'PrintStarted');
  assert.equal(started.payload.path, 'a.gcode');
  assert.equal(filtered.ofType('event').length, 1);
  assert.equal(filtered.ofType('plugin').length, 0);

  // Turning state off stops current; turning it on again sends a fresh history.
  filtered.send({ subscribe: { state: false } });
  await sleep(300);
  const before = filtered.ofType('current').length;
  sp.printer.temperature(1, 1);
  await sleep(1200);
  assert.equal(filtered.ofType('current').length, before);
  const mark = filtered.messages.length;
  filtered.send({ subscribe: { state: true } });
  await filtered.next('history', undefined, { from: mark });
});

test('connected.config_hash is the hash SettingsUpdated announces, and changes exactly when settings are saved', async (t) => {
  const server = await startTestServer(t);
  const admin = await passiveLogin(server, server.apiKey);
  const a = await rawClient(server);
  t.after(() => a.close());
  const before = ((await a.next('connected')) as { config_hash: string }).config_hash;
  a.send({ auth: admin });
  await a.next('history');
  // Reconnecting without a change sees the same hash (clients keep their settings).
  const again = await rawClient(server);
  t.after(() => again.close());
  assert.equal(((await again.next('connected')) as { config_hash: string }).config_hash, before);

  const res = await server.api('/api/settings', { method: 'POST', json: { appearance: { name: 'Hash Check' } } });
  assert.equal(res.status, 200);
  const ev = (await a.next('event', (e: { type: string }) => e.type === 'SettingsUpdated')) as { payload: { config_hash: string; effective_hash: string } };
  assert.notEqual(ev.payload.config_hash, before);
  assert.notEqual(ev.payload.config_hash, ev.payload.effective_hash);
  const after = await rawClient(server);
  t.after(() => after.close());
  assert.equal(((await after.next('connected')) as { config_hash: string }).config_hash, ev.payload.config_hash);
});

test('Shutdown reaches connected push clients before their connections close', async (t) => {
  const server = await startTestServer(t);
  const { auth } = await userWithKey(server, 'witness');
  const raw = await rawClient(server);
  const sjs = await sockjsClient(server);
  for (const c of [raw, sjs]) c.send({ auth });
  await Promise.all([raw.next('history'), sjs.next('history')]);
  await server.stop();
  await Promise.all([raw.closed, sjs.closed]);
  for (const c of [raw, sjs]) {
    const ev = (await c.next('event', (e: { type: string }) => e.type === 'Shutdown', { timeoutMs: 100 })) as { payload: unknown };
    assert.equal(ev.payload, null);
  }
  assert.equal(raw.ws.readyState, raw.ws.CLOSED);
});

test('SockJS fallback transports (xhr-polling, eventsource, xhr-streaming) get connected, then history and current after auth', async (t) => {
  const server = await startTestServer(t);
  const { auth } = await userWithKey(server, 'legacy-browser');
  for (const transport of ['xhr-polling', 'eventsource', 'xhr-streaming']) {
    const c = await sockjsClient(server, { transports: [transport] });
    t.after(() => c.close());
    assert.equal(c.transport(), transport);
    const connected = (await c.next('connected')) as { version: string };
    assert.equal(connected.version, '1.9.3');
    c.send({ auth });
    await c.next('history');
    const current = (await c.next('current')) as { state: { text: string } };
    assert.equal(typeof current.state.text, 'string');
    server.events.emit('PrinterProfileModified', { identifier: transport });
    const ev = (await c.next('event', (e: { type: string }) => e.type === 'PrinterProfileModified')) as { payload: { identifier: string } };
    assert.equal(ev.payload.identifier, transport);
  }
});

test('subscribe with a plugin list and events: true delivers every event and only the listed plugins', async (t) => {
  const server = await startTestServer(t);
  const { auth } = await userWithKey(server, 'picky');
  const c = await rawClient(server);
  t.after(() => c.close());
  c.send({ subscribe: { events: true, plugins: ['wanted', 'also_wanted'] } });
  c.send({ auth });
  await c.next('timelapse');
  server.push.sendPlugin('other', { n: 1 });
  server.push.sendPlugin('wanted', { n: 2 });
  server.push.sendPlugin('also_wanted', { n: 3 });
  server.events.emit('PrinterProfileAdded', { identifier: 'e1' });
  server.events.emit('UpdatedFiles', { type: 'printables' });
  await c.next('event', (e: { type: string }) => e.type === 'UpdatedFiles');
  await sleep(300);
  assert.deepEqual((c.ofType('plugin') as Array<{ plugin: string; data: { n: number } }>).map((p) => [p.plugin, p.data.n]), [['wanted', 2], ['also_wanted', 3]]);
  const types = (c.ofType('event') as Array<{ type: string }>).map((e) => e.type);
  assert.ok(types.includes('PrinterProfileAdded') && types.includes('UpdatedFiles'), types.join(','));
  // No state was asked for.
  assert.equal(c.ofType('history').length + c.ofType('current').length, 0);
});
