// The push channel's access rules: guests and bad sessions get nothing private, permissions filter terminal lines, events and payloads, the pre-auth backlog, reauthRequired on logout, user changes and expiry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { rawClient, userWithKey, passiveLogin, sleep } from './push-clients.ts';
import { startScriptedPush } from './scripted-printer.ts';
import { OffsetClock } from '../access/helpers.ts';

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
