// Spoolman through Gantry's API and Moonraker's (src/spools/, src/moonraker/spoolman-methods.ts) against the stand-in
// Spoolman: choosing a tool's spool, the list, the low-filament check before a print (warn, refuse), the change feed's
// deleted spool, and `/server/spoolman/*` as Mainsail and FDM Monster call it (docs/reference/plugins.md §5.4).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectedServer } from '../helpers/connected-server.ts';
import { startTestServer } from '../helpers/server.ts';
import { RpcClient } from '../moonraker/rpc-client.ts';
import { waitFor } from '../helpers/wait.ts';
import { startSpoolmanStandin } from '../helpers/spoolman-standin.ts';
import type { TestServer } from '../helpers/server.ts';

// 100 moves of 10 mm E: 1000 mm of filament, about 3 g of PLA.
const FILE = ['G28', 'G90', 'M83', ...Array.from({ length: 100 }, (_, i) => `G1 X${i % 50} Y10 E10 F6000`)].join('\n') + '\n';

async function upload(s: TestServer, name: string): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([FILE]), name);
  assert.equal((await s.api('/api/files/local', { method: 'POST', body: form })).status, 201);
  await waitFor('analysis', async () => ((await (await s.api(`/api/files/local/${name}`)).json()) as { gcodeAnalysis?: unknown }).gcodeAnalysis);
}

const spoolmanStatus = async (s: TestServer) => (await (await s.api('/api/plugin/spoolman')).json()) as { spoolman_connected: boolean; active: Record<string, number> };

test('too little filament on the active spool: a warning event before the print (warn), a 409 and no print (refuse)', async (t) => {
  const spoolman = await startSpoolmanStandin();
  t.after(() => spoolman.stop());
  const small = spoolman.add(1); // 1 g ≈ 335 mm
  const big = spoolman.add(900);
  const s = await connectedServer(t, { plugins: { spoolman: { server: spoolman.url, lowFilament: 'warn' } } });
  await waitFor('connected', async () => (await spoolmanStatus(s)).spoolman_connected || undefined);
  await upload(s, 'cube.gcode');

  const list = (await (await s.api('/api/plugin/spoolman/spools')).json()) as { spools: Array<{ id: number }> };
  assert.deepEqual(list.spools.map((x) => x.id).sort(), [small.id, big.id]);
  assert.equal((await s.api('/api/plugin/spoolman', { method: 'POST', json: { command: 'select', tool: 0, spool_id: 77 } })).status, 404);
  assert.equal((await s.api('/api/plugin/spoolman', { method: 'POST', json: { command: 'select', tool: 0, spool_id: 'x' } })).status, 400);
  assert.equal((await s.api('/api/plugin/spoolman', { method: 'POST', json: { command: 'select', tool: 0, spool_id: small.id } })).status, 200);

  const warned: Array<Record<string, unknown>> = [];
  s.events.on('test', 'plugin_spoolman_low_filament', (p) => warned.push(p));
  const started = new Promise<void>((r) => s.events.on('test', 'PrintStarted', () => r()));
  assert.equal((await s.api('/api/files/local/cube.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
  await started;
  assert.equal(warned.length, 1);
  const tools = warned[0].tools as Array<{ tool: number; spool_id: number; needed: number; remaining: number }>;
  assert.deepEqual({ tool: tools[0].tool, spool: tools[0].spool_id, needed: tools[0].needed }, { tool: 0, spool: small.id, needed: 1000 });
  assert.ok(tools[0].remaining < 400 && tools[0].remaining > 300, `remaining ${tools[0].remaining}`);
  await waitFor('print done', async () => ((await (await s.api('/api/job')).json()) as { state: string }).state === 'Operational' || undefined, 30_000);

  // Refuse: the start is answered 409 and nothing prints.
  assert.equal((await s.api('/api/settings', { method: 'POST', json: { plugins: { spoolman: { lowFilament: 'refuse' } } } })).status, 200);
  let printed = false;
  s.events.on('test', 'PrintStarted', () => { printed = true; });
  const r = await s.api('/api/files/local/cube.gcode', { method: 'POST', json: { command: 'select', print: true } });
  assert.equal(r.status, 409);
  assert.match(((await r.json()) as { error: string }).error, /Not enough filament: tool 0: the file needs 1\.00 m, spool 1 has 0\.\d+ m left/);
  assert.equal(printed, false);
  // With the big spool the same file prints.
  assert.equal((await s.api('/api/plugin/spoolman', { method: 'POST', json: { command: 'select', spool_id: big.id } })).status, 200);
  assert.equal((await s.api('/api/job', { method: 'POST', json: { command: 'start' } })).status, 204);
  assert.equal(printed, true);
});

test('Moonraker\'s /server/spoolman endpoints and notifications; a spool deleted in Spoolman is no longer active', async (t) => {
  const spoolman = await startSpoolmanStandin();
  t.after(() => spoolman.stop());
  const a = spoolman.add(500);
  const s = await connectedServer(t, { moonraker: { enabled: true }, plugins: { spoolman: { server: spoolman.url } } });
  await waitFor('connected', async () => (await spoolmanStatus(s)).spoolman_connected || undefined);
  const rpc = async (path: string, init: { method?: string; json?: unknown } = {}) => {
    const res = await s.api(path, init);
    return { status: res.status, body: (await res.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string } } };
  };
  assert.deepEqual((await rpc('/server/spoolman/spool_id')).body.result, { spool_id: null });
  // Mainsail's socket: the same methods by JSON-RPC, and the notifications.
  const socket = await RpcClient.open(`${s.url}/websocket`, { 'X-Api-Key': s.apiKey });
  t.after(() => socket.close());
  const info = await socket.call<{ components: string[] }>('server.info');
  assert.ok(info.components.includes('spoolman'));
  const cfg = await socket.call<{ config: { spoolman?: { server: string } } }>('server.config');
  assert.equal(cfg.config.spoolman?.server, spoolman.url);
  const notified: unknown[] = [];
  s.events.on('test', 'plugin_spoolman_active_spool_set', (p) => notified.push(p));
  assert.deepEqual((await rpc('/server/spoolman/spool_id', { method: 'POST', json: { spool_id: a.id } })).body.result, { spool_id: a.id });
  assert.deepEqual(notified, [{ spool_id: a.id, tool: 0 }]);
  assert.deepEqual((await socket.next('notify_active_spool_set')).params, [{ spool_id: a.id }]);
  assert.deepEqual(await socket.call('server.spoolman.get_spool_id'), { spool_id: a.id });
  assert.deepEqual((await rpc('/server/spoolman/status')).body.result, { spoolman_connected: true, pending_reports: [], spool_id: a.id });
  const proxied = await rpc('/server/spoolman/proxy', { method: 'POST', json: { request_method: 'GET', path: `/v1/spool/${a.id}`, use_v2_response: true } });
  assert.equal((proxied.body.result as { response: { id: number } }).response.id, a.id);
  assert.equal((proxied.body.result as { error: unknown }).error, null);
  const missing = await rpc('/server/spoolman/proxy', { method: 'POST', json: { request_method: 'GET', path: '/v1/spool/4242', use_v2_response: true } });
  assert.deepEqual((missing.body.result as { error: unknown }).error, { status_code: 404, message: 'No spool with ID 4242 found.' });
  const v1 = await rpc('/server/spoolman/proxy', { method: 'POST', json: { request_method: 'GET', path: '/v1/spool/4242' } });
  assert.equal(v1.status, 404);
  // From Mainsail's console: the macro word, answered by Gantry.
  const script = await rpc('/printer/gcode/script', { method: 'POST', json: { script: 'CLEAR_ACTIVE_SPOOL' } });
  assert.equal(script.status, 200, JSON.stringify(script.body));
  await waitFor('cleared', async () => (await spoolmanStatus(s)).active['0'] === undefined || undefined);
  await rpc('/server/spoolman/spool_id', { method: 'POST', json: { spool_id: a.id } });
  // Spoolman deletes the spool: its change feed clears it here (§5.4).
  spoolman.spools.delete(a.id);
  spoolman.publish('deleted', a);
  await waitFor('deleted spool cleared', async () => (await spoolmanStatus(s)).active['0'] === undefined || undefined);
  // Spoolman gone: the proxy answers 503.
  await spoolman.stop();
  await waitFor('disconnected', async () => !(await spoolmanStatus(s)).spoolman_connected || undefined);
  assert.deepEqual((await socket.next('notify_spoolman_status_changed')).params, [{ spoolman_connected: false }]);
  assert.equal((await rpc('/server/spoolman/proxy', { method: 'POST', json: { request_method: 'GET', path: '/v1/spool' } })).status, 503);
});

test('use queued before a restart of Gantry is sent once Spoolman answers; the list answers 409 while Spoolman is away', async (t) => {
  const spoolman = await startSpoolmanStandin();
  t.after(() => spoolman.stop());
  const a = spoolman.add(500);
  await spoolman.stop();
  const baseDir = await mkdtemp(join(tmpdir(), 'gantry-spool-restart-'));
  t.after(() => rm(baseDir, { recursive: true, force: true }));
  // What an earlier run left: spool 1 active on tool 0, 123.4 mm not yet reported.
  await mkdir(join(baseDir, 'data'), { recursive: true });
  await writeFile(join(baseDir, 'data', 'spoolman.json'), JSON.stringify({ active: { 0: a.id }, pending: { [a.id]: 123.4 } }));
  const s = await startTestServer(t, { baseDir, settings: { plugins: { spoolman: { server: spoolman.url } } } });
  const st = (await (await s.api('/api/plugin/spoolman')).json()) as { active: Record<string, number>; pending_reports: unknown[] };
  assert.deepEqual(st.active, { 0: a.id });
  assert.deepEqual(st.pending_reports, [{ spool_id: a.id, filament_used: 123.4 }]);
  const r = await s.api('/api/plugin/spoolman/spools');
  assert.equal(r.status, 409);
  assert.match(((await r.json()) as { error: string }).error, /^Spoolman did not answer/);
  await spoolman.start();
  await waitFor('the queued use sent', () => (spoolman.uses.length > 0 ? spoolman.uses : undefined), 15_000);
  assert.deepEqual(spoolman.uses, [{ id: a.id, body: { use_length: 123.4 } }]);
  await waitFor('the queue empty', async () => ((await (await s.api('/api/plugin/spoolman')).json()) as { pending_reports: unknown[] }).pending_reports.length === 0 || undefined);
});
