// OctoRest (Python library over requests): the assertions of its live-server test suite that carry API meaning.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { server, connectPrinter, form, json, smallGcode, waitFor, type Json } from './helpers.ts';

/** OctoRest's `_check_response`: anything outside 200..209 raises. */
const ok = (status: number) => status >= 200 && status < 210;

test('constructor + version: keys api/server/text; a bad key raises', async (t) => {
  const s = await server(t);
  const v = await json<Json>(await s.api('/api/version'));
  for (const k of ['api', 'server', 'text']) assert.ok(k in v, k);
  assert.ok(!ok((await s.api('/api/version', { key: 'bogus' })).status));
});

test('files: free is an int, a missing file raises, upload answers files.local.name', async (t) => {
  const s = await server(t);
  const files = await json<Json>(await s.api('/api/files'));
  assert.ok(Number.isInteger(files.free), `free ${files.free}`);
  assert.ok(Array.isArray(files.files));
  assert.ok(!ok((await s.api('/api/files/local/nonexisting.gcode')).status));
  const up = await s.api('/api/files/local', { method: 'POST', body: form([], { name: 'bigben.gcode', content: smallGcode(10) }) });
  assert.ok(ok(up.status));
  assert.equal((await json<Json>(up)).files.local.name, 'bigben.gcode');
  const del = await s.api('/api/files/local/bigben.gcode', { method: 'DELETE' });
  assert.ok(ok(del.status));
});

test('printer: sd/state/temperature, history only on request, exclude and limit; tool and bed reads; tool target visible', async (t) => {
  const s = await server(t);
  await connectPrinter(s);
  const p = await json<Json>(await s.api('/api/printer'));
  // An OctoPrint with SD support off (fixture A, imported) leaves `sd` out, as 1.9.3 does; OctoRest reads it only then.
  const sd = s.config.current.feature.sdSupport ? ['sd'] : [];
  if (sd.length) assert.equal(typeof p.sd.ready, 'boolean');
  else assert.ok(!('sd' in p), 'no sd with SD support off');
  assert.equal(p.state.flags.operational, true);
  assert.equal(p.state.flags.ready, true);
  assert.equal(p.state.flags.error, false);
  assert.equal(p.state.flags.printing, false);
  assert.ok('bed' in p.temperature && 'tool0' in p.temperature);
  assert.ok(!('history' in p.temperature), 'no history unless history=true');
  assert.deepEqual(Object.keys(p).sort(), [...sd, 'state', 'temperature']);

  const noTemp = await json<Json>(await s.api('/api/printer?exclude=temperature'));
  assert.deepEqual(Object.keys(noTemp).sort(), [...sd, 'state']);
  const onlyTemp = await json<Json>(await s.api('/api/printer?exclude=sd,state'));
  assert.deepEqual(Object.keys(onlyTemp), ['temperature']);

  await waitFor('two history entries', async () => {
    const h = await json<Json>(await s.api('/api/printer?history=true'));
    return h.temperature.history.length >= 2 || undefined;
  });
  const limited = await json<Json>(await s.api('/api/printer?history=true&limit=2'));
  assert.equal(limited.temperature.history.length, 2);

  const tool = await json<Json>(await s.api('/api/printer/tool'));
  for (const f of ['actual', 'target', 'offset']) assert.equal(typeof tool.tool0[f], 'number', `tool0.${f}`);
  const bed = await json<Json>(await s.api('/api/printer/bed'));
  for (const f of ['actual', 'target', 'offset']) assert.equal(typeof bed.bed[f], 'number', `bed.${f}`);

  assert.ok(ok((await s.api('/api/printer/tool', { method: 'POST', json: { command: 'target', targets: { tool0: 25 } } })).status));
  await waitFor('tool target', async () => (await json<Json>(await s.api('/api/printer/tool'))).tool0.target === 25 || undefined);
  assert.ok(ok((await s.api('/api/printer/tool', { method: 'POST', json: { command: 'target', targets: { tool0: 0 } } })).status));
});

test('settings: api + appearance; POST {} returns the settings unchanged; appearance.name round-trips', async (t) => {
  const s = await server(t);
  const before = await json<Json>(await s.api('/api/settings'));
  assert.ok('api' in before && 'appearance' in before);
  const same = await s.api('/api/settings', { method: 'POST', json: {} });
  assert.ok(ok(same.status));
  const after = await json<Json>(same);
  delete before.plugins; delete after.plugins;
  assert.deepEqual(after.appearance, before.appearance);
  assert.deepEqual(after.api, before.api);
  assert.deepEqual(after.serial, before.serial);
  const renamed = await json<Json>(await s.api('/api/settings', { method: 'POST', json: { appearance: { name: 'OctoRest test' } } }));
  assert.equal(renamed.appearance.name, 'OctoRest test');
  assert.equal((await json<Json>(await s.api('/api/settings'))).appearance.name, 'OctoRest test');
});

test('connection: current.{baudrate,port,state}, options.{baudrates,ports}; legacy /api/users redirects to the access API', async (t) => {
  const s = await server(t);
  const c = await json<Json>(await s.api('/api/connection'));
  for (const k of ['baudrate', 'port', 'state']) assert.ok(k in c.current, `current.${k}`);
  assert.ok(Array.isArray(c.options.baudrates) && Array.isArray(c.options.ports));
  assert.ok(c.options.ports.includes('VIRTUAL'));

  const redirect = await s.api('/api/users', { redirect: 'manual' });
  assert.equal(redirect.status, 307);
  assert.match(redirect.headers.get('location') ?? '', /\/api\/access\/users$/);
  // requests follows the 307 and keeps the method and the key.
  const users = await json<Json>(await s.api('/api/users'));
  assert.ok(Array.isArray(users.users));
});

test('push over SockJS xhr_streaming (OctoRest XHRStreamingGenerator): open frame, connected, auth via xhr_send, current', async (t) => {
  const s = await server(t);
  const key = s.apiKey;
  const info = await s.api('/sockjs/info');
  assert.equal(info.status, 200);
  const base = `${s.url}/sockjs/${String(Math.floor(Math.random() * 1000)).padStart(3, '0')}/${crypto.randomUUID().replace(/-/g, '')}`;
  const abort = new AbortController();
  t.after(() => abort.abort());
  const stream = await fetch(`${base}/xhr_streaming`, { method: 'POST', signal: abort.signal });
  assert.equal(stream.status, 200);
  const frames: string[] = [];
  const messages: Json[] = [];
  void (async () => {
    let buf = '';
    try {
      for await (const chunk of stream.body as unknown as AsyncIterable<Uint8Array>) {
        buf += Buffer.from(chunk).toString('utf8');
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          frames.push(line[0]);
          // OctoPrint's frames carry objects, not quoted strings; accept both like the library's json.loads does.
          if (line[0] === 'a') for (const m of JSON.parse(line.slice(1)) as unknown[]) messages.push((typeof m === 'string' ? JSON.parse(m) : m) as Json);
        }
      }
    } catch { /* aborted at the end of the test */ }
  })();
  const next = (type: string, pred: (p: Json) => boolean = () => true) => waitFor(`${type} over xhr_streaming`, () => {
    const m = messages.find((x) => type in x && pred(x[type] as Json));
    return m ? m[type] as Json : undefined;
  });
  await next('connected');
  assert.ok(frames.includes('o'), 'open frame first');

  const login = await json<{ name: string; session: string }>(await s.api('/api/login', { method: 'POST', json: { passive: true }, key }));
  const send = await fetch(`${base}/xhr_send`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: JSON.stringify([JSON.stringify({ auth: `${login.name}:${login.session}` })]) });
  assert.equal(send.status, 204);
  const current = await next('current');
  assert.ok('state' in current && 'temps' in current);
});
