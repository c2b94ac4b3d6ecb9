// Push channel protocol on the real server: transports incl. SockJS fallbacks, `connected`, auth, history/current,
// events, permissions, throttle, subscribe, backlog, reauthRequired, session expiry, Shutdown, bad client messages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { rawClient, sockjsClient, userWithKey, passiveLogin, sleep } from './push-clients.ts';
import { startScriptedPush } from './scripted-printer.ts';
import { OffsetClock } from '../access/helpers.ts';
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

test('guests and bad sessions get nothing private; bad messages are ignored without closing anything', async (t) => {
  const server = await startTestServer(t);
  const { auth } = await userWithKey(server, 'carol');
  const good = await rawClient(server);
  const bad = await rawClient(server);
  t.after(() => { good.close(); bad.close(); });
  good.send({ auth });
  await good.next('history');

  for (const junk of ['not json', '[1,2]', '"x"', '{"auth": 5}', '{"auth": "nocolon"}', '{"throttle": "fast"}', '{"throttle": 0}',
    '{"subscribe": {"state": {"logs": "(a+)+"}}}', '{"subscribe": 3}', '{"whatever": 1}', 'x'.repeat(70_000)]) bad.sendRaw(junk);
  bad.send({ auth: 'carol:0123456789ABCDEF0123456789ABCDEF' });
  const re = (await bad.next('reauthRequired')) as { reason: string };
  assert.equal(re.reason, 'stale');
  server.events.emit('PrinterProfileAdded', { identifier: 'p' });
  await good.next('event', (e: { type: string }) => e.type === 'PrinterProfileAdded');
  // Both channels are still open and the bad one can still authenticate; what came before its history (on the same
  // socket, after the event's batch went out to `good`) is all it got while unauthenticated.
  bad.send({ auth });
  await bad.next('history');
  assert.deepEqual(bad.messages.slice(0, bad.messages.findIndex((m) => 'history' in m)).map((m) => Object.keys(m)[0]), ['connected', 'reauthRequired']);
  assert.equal(server.push.clientCount, 2);
});

test('permissions: no terminal lines without MONITOR_TERMINAL; admin-only events and payloads', async (t) => {
  const server = await startTestServer(t);
  const sp = await startScriptedPush(t, server);
  const { auth: viewer } = await userWithKey(server, 'viewer', { groups: [], permissions: ['STATUS'] });
  const { auth: op } = await userWithKey(server, 'op');
  const admin = await passiveLogin(server, server.apiKey);
  const [v, o, a] = await Promise.all([rawClient(sp), rawClient(sp), rawClient(sp)]);
  t.after(() => { v.close(); o.close(); a.close(); });
  sp.printer.log('Send: N1 M105*39', 'Recv: ok T:20.0 /0.0 B:20.0 /0.0');
  v.send({ auth: viewer });
  o.send({ auth: op });
  a.send({ auth: admin });
  const vh = (await v.next('history')) as Record<string, unknown>;
  const oh = (await o.next('history')) as Record<string, unknown>;
  assert.ok(!('logs' in vh) && !('messages' in vh));
  assert.deepEqual(oh.logs, ['Send: N1 M105*39', 'Recv: ok T:20.0 /0.0 B:20.0 /0.0']);
  await a.next('history');

  sp.printer.log('Recv: echo:secret terminal line');
  sp.printer.temperature(200, 55);
  const oc = (await o.next('current', (c: { logs?: string[] }) => !!c.logs?.includes('Recv: echo:secret terminal line'))) as { temps: unknown[] };
  assert.ok(oc.temps.length >= 1);
  const vc = (await v.next('current', (c: { temps: unknown[] }) => c.temps.length > 0)) as Record<string, unknown>;
  assert.ok(!('logs' in vc) && !('messages' in vc));

  server.events.emit('UserLoggedIn', { username: 'someone' });
  server.events.emit('ClientOpened', { remoteAddress: '10.0.0.9' });
  const aev = (await a.next('event', (e: { type: string }) => e.type === 'ClientOpened' && (e as unknown as { payload: { remoteAddress?: string } }).payload.remoteAddress === '10.0.0.9')) as { payload: unknown };
  assert.deepEqual(aev.payload, { remoteAddress: '10.0.0.9' });
  await a.next('event', (e: { type: string }) => e.type === 'UserLoggedIn');
  const oev = (await o.next('event', (e: { type: string; payload: unknown }) => e.type === 'ClientOpened' && Object.keys(e.payload as object).length === 0)) as { payload: unknown };
  assert.deepEqual(oev.payload, {});
  assert.ok(!o.ofType('event').some((e) => (e as { type: string }).type === 'UserLoggedIn'));
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

test('plugin messages wait for auth (backlog); reauthRequired on logout, user change and removal', async (t) => {
  const server = await startTestServer(t);
  const { auth, key } = await userWithKey(server, 'erin');
  const c = await rawClient(server);
  t.after(() => c.close());
  await c.next('connected');
  server.push.sendPlugin('action_command_notification', { type: 'add', message: 'hello' });
  await sleep(200);
  assert.equal(c.ofType('plugin').length, 0);
  c.send({ auth });
  await c.next('history');
  const types = c.messages.map((m) => Object.keys(m)[0]);
  assert.ok(types.indexOf('plugin') !== -1 && types.indexOf('plugin') < types.indexOf('history'), types.join(','));

  await server.access.users.updateUser('erin', { groups: ['users', 'readonly'] });
  assert.equal(((await c.next('reauthRequired')) as { reason: string }).reason, 'modified');

  const sid = auth.split(':')[1];
  server.access.sessions.delete(sid, 'logout');
  const mark = c.messages.length;
  assert.equal(((await c.next('reauthRequired', undefined, { from: mark })) as { reason: string }).reason, 'logout');

  const auth2 = await passiveLogin(server, key);
  const m2 = c.messages.length;
  c.send({ auth: auth2 });
  await c.next('history', undefined, { from: m2 });
  await server.access.users.removeUser('erin');
  const re = (await c.next('reauthRequired', (r: { reason: string }) => r.reason === 'removed', { from: m2 })) as { reason: string };
  assert.equal(re.reason, 'removed');
});

test('guest group changes reach anonymous sockets; cross-origin websockets are refused unless allowed', async (t) => {
  const server = await startTestServer(t);
  const anon = await rawClient(server);
  t.after(() => anon.close());
  await anon.next('connected');
  await server.access.users.updateGroup('guests', { permissions: ['STATUS'] });
  assert.equal(((await anon.next('reauthRequired')) as { reason: string }).reason, 'modified');
  // Guests may now see the status: the anonymous socket is registered and gets its history.
  await anon.next('history');

  const WebSocket = (await import('ws')).default;
  const wsUrl = `${server.url.replace('http', 'ws')}/sockjs/websocket`;
  const evil = new WebSocket(wsUrl, { headers: { Origin: 'http://evil.example' } });
  assert.match((await new Promise<Error>((resolve) => evil.once('error', resolve))).message, /403/);
  const same = await rawClient(server, { headers: { Origin: server.url } });
  t.after(() => same.close());
  await same.next('connected');
  await server.config.patch({ api: { allowCrossOrigin: true } });
  const allowed = await rawClient(server, { headers: { Origin: 'http://elsewhere.example' } });
  t.after(() => allowed.close());
  await allowed.next('connected');
});

test('the pre-auth backlog keeps each message\'s permissions: a late STATUS-only user gets no appkeys request_access', async (t) => {
  const server = await startTestServer(t);
  const { auth: limited } = await userWithKey(server, 'looker', { groups: [], permissions: ['STATUS'] });
  const { auth: granter } = await userWithKey(server, 'granter');
  const [l, g] = await Promise.all([rawClient(server), rawClient(server)]);
  t.after(() => { l.close(); g.close(); });
  await Promise.all([l.next('connected'), g.next('connected')]);

  // Queued while both sockets are anonymous: one message any STATUS user may see, one that needs PLUGIN_APPKEYS_GRANT.
  server.push.sendPlugin('action_command_notification', { type: 'add', message: 'for everyone' });
  const res = await server.api('/plugin/appkeys/request', { key: null, method: 'POST', json: { app: 'Sneaky App' } });
  assert.equal(res.status, 201);
  await sleep(200);

  l.send({ auth: limited });
  g.send({ auth: granter });
  await Promise.all([l.next('history'), g.next('history')]);
  const kinds = (c: typeof l): string[] => (c.ofType('plugin') as Array<{ plugin: string; data: { type: string } }>).map((p) => `${p.plugin}/${p.data.type}`);
  assert.deepEqual(kinds(l), ['action_command_notification/add']);
  assert.ok(!JSON.stringify(l.messages).includes('user_token'), 'the limited user saw a user_token');
  assert.deepEqual(kinds(g), ['action_command_notification/add', 'appkeys/request_access']);
  const granted = (g.ofType('plugin') as Array<{ data: { app_name: string; user_token: string } }>)[1].data;
  assert.equal(granted.app_name, 'Sneaky App');
  assert.match(granted.user_token, /^[0-9A-Za-z_-]+$/);
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

test('a session that expires while the socket is open brings reauthRequired stale and ends private messages', async (t) => {
  const clock = new OffsetClock();
  const server = await startTestServer(t, { clock });
  const { auth, key } = await userWithKey(server, 'sleepy');
  const c = await rawClient(server);
  t.after(() => c.close());
  c.send({ auth });
  await c.next('history');
  // Idle sessions expire after accessControl.sessionValidityHours (a week); the next session made sweeps them away.
  clock.advance(8 * 24 * 3600_000);
  await passiveLogin(server, key);
  const re = (await c.next('reauthRequired')) as { reason: string };
  assert.equal(re.reason, 'stale');
  const mark = c.messages.length;
  server.events.emit('PrinterProfileAdded', { identifier: 'after-expiry' });
  await sleep(400);
  assert.equal(c.messages.slice(mark).filter((m) => 'event' in m || 'current' in m).length, 0);
  // The old session cannot be used again.
  c.send({ auth });
  assert.equal(((await c.next('reauthRequired', undefined, { from: mark })) as { reason: string }).reason, 'stale');
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
