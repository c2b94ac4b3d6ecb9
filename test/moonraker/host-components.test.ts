// Moonraker's job_queue over Gantry's print queue (a real print on the virtual printer), printer.query_endstops over
// M119, machine.* and server.restart over the system commands, and one printer's endpoint mounted under a prefix on
// its own app (as a farm mounts one per printer). One server for the file: the steps share it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify from 'fastify';
import { connectedServer } from '../helpers/connected-server.ts';
import { waitFor } from '../helpers/wait.ts';
import { buildMoonraker, mountMoonraker } from '../../src/moonraker/mount.ts';
import { endstopsOf } from '../../src/moonraker/machine-methods.ts';
import { RpcClient, type Notification } from './rpc-client.ts';

type RpcErr = Error & { code?: number };
type QueueStatus = { queued_jobs: Array<{ filename: string; job_id: string; time_added: number; time_in_queue: number }>; queue_state: string };
const identify = { client_name: 'mainsail', version: '2.18.0', type: 'web', url: 'x' };
const LONG = { timeoutMs: 60_000 };
const GCODE = 'G28\nG1 X10 Y10 F3000\nG1 X20 Y20\nG1 X30 Y30\n';

async function upload(url: string, key: string, name: string, body: string): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([body]), name);
  const r = await fetch(`${url}/server/files/upload`, { method: 'POST', body: form, headers: { 'X-Api-Key': key } });
  assert.equal(r.status, 201, await r.text());
}

const queueNews = (c: RpcClient, from: number): Array<Record<string, unknown>> =>
  c.notifications.slice(from).filter((n: Notification) => n.method === 'notify_job_queue_changed').map((n) => n.params![0] as Record<string, unknown>);

test('job_queue, query_endstops, machine services and a prefixed endpoint, over Gantry\'s own services', async (t) => {
  const marker = join(process.env.TMPDIR ?? '/tmp', `gantry-svc-${process.pid}-${Date.now()}`);
  const server = await connectedServer(t, {
    server: { commands: { serverRestartCommand: 'true' } },
    system: { actions: [{ action: 'restart_webcamd', command: `echo restarted > ${marker}` }] },
  });
  const c = await RpcClient.open(`${server.url}/websocket`, { 'X-Api-Key': server.apiKey });
  t.after(() => c.close());
  await c.call('server.connection.identify', identify);
  await server.access.users.addUser({ name: 'reader', password: 'pw-reader-123', groups: ['readonly'] });
  await server.access.users.addUser({ name: 'op', password: 'pw-operator-123', groups: ['users'] });
  const ro = await RpcClient.open(`${server.url}/websocket`, { 'X-Api-Key': await server.access.users.generateUserKey('reader') });
  t.after(() => ro.close());
  const op = await RpcClient.open(`${server.url}/websocket`, { 'X-Api-Key': await server.access.users.generateUserKey('op') });
  t.after(() => op.close());

  await t.test('job_queue: post, jump, delete, pause; start prints; after the print the queue waits until started again', async () => {
    assert.ok((await c.call<{ components: string[] }>('server.info')).components.includes('job_queue'));
    await upload(server.url, server.apiKey, 'a.gcode', GCODE);
    await upload(server.url, server.apiKey, 'b.gcode', GCODE);
    assert.deepEqual(await c.call('server.job_queue.status'), { queued_jobs: [], queue_state: 'ready' });
    let s = await c.call<QueueStatus>('server.job_queue.pause');
    assert.equal(s.queue_state, 'paused');
    const mark = c.notifications.length;
    s = await c.call<QueueStatus>('server.job_queue.post_job', { filenames: ['a.gcode', 'b.gcode', 'a.gcode'] });
    assert.deepEqual(s.queued_jobs.map((j) => j.filename), ['a.gcode', 'b.gcode', 'a.gcode']);
    assert.equal(new Set(s.queued_jobs.map((j) => j.job_id)).size, 3);
    for (const j of s.queued_jobs) assert.ok(j.time_added > 1e9 && j.time_in_queue >= 0);
    await waitFor('jobs_added told', () => queueNews(c, mark).some((n) => n.action === 'jobs_added' && (n.updated_queue as unknown[]).length === 3));
    // Gantry's own queue holds them (the OctoPrint side sees the same queue).
    const own = await (await server.api('/api/farm/queue')).json() as { jobs: Array<{ path: string }> };
    assert.deepEqual(own.jobs.map((j) => j.path), ['a.gcode', 'b.gcode', 'a.gcode']);

    s = await c.call<QueueStatus>('server.job_queue.jump', { job_id: s.queued_jobs[1].job_id });
    assert.deepEqual(s.queued_jobs.map((j) => j.filename), ['b.gcode', 'a.gcode', 'a.gcode']);
    s = await c.call<QueueStatus>('server.job_queue.delete_job', { job_ids: [s.queued_jobs[2].job_id] });
    assert.deepEqual(s.queued_jobs.map((j) => j.filename), ['b.gcode', 'a.gcode']);
    // reset: the list is replaced (Mainsail's reorder sends the whole list again).
    s = await c.call<QueueStatus>('server.job_queue.post_job', { filenames: ['a.gcode', 'b.gcode'], reset: true });
    assert.deepEqual(s.queued_jobs.map((j) => j.filename), ['a.gcode', 'b.gcode']);

    // Malformed params are JSON-RPC errors; a reader may watch, not change; an unknown file is refused.
    for (const [method, params] of [
      ['server.job_queue.post_job', { filenames: 5 }], ['server.job_queue.post_job', {}], ['server.job_queue.post_job', { filenames: [null] }],
      ['server.job_queue.delete_job', {}], ['server.job_queue.delete_job', { job_ids: ['nope'] }], ['server.job_queue.jump', { job_id: 7 }],
    ] as const) {
      await assert.rejects(c.call(method, params as Record<string, unknown>), (e: RpcErr) => e.code === 400, `${method} ${JSON.stringify(params)}`);
    }
    await assert.rejects(c.call('server.job_queue.post_job', { filenames: ['missing.gcode'] }), (e: RpcErr) => e.code === -32601 && /not found/i.test(e.message));
    assert.equal((await ro.call<QueueStatus>('server.job_queue.status')).queued_jobs.length, 2);
    await assert.rejects(ro.call('server.job_queue.post_job', { filenames: ['a.gcode'] }), (e: RpcErr) => e.code === 403);
    await assert.rejects(ro.call('server.job_queue.start'), (e: RpcErr) => e.code === 403);

    // start: the queue resumes and prints a.gcode; once done the printer waits for its bed (Moonraker: paused).
    const before = c.notifications.length;
    await c.call('server.job_queue.start');
    await waitFor('a job loaded', () => queueNews(c, before).some((n) => n.action === 'job_loaded'), LONG);
    await waitFor('a.gcode printed and the queue waits', async () => {
      const st = await c.call<QueueStatus>('server.job_queue.status');
      return st.queue_state === 'paused' && st.queued_jobs.length === 1 && st.queued_jobs[0].filename === 'b.gcode' && server.farm.get('default')!.jobs.isReady();
    }, LONG);
    // Starting again is "the bed is clear": b.gcode prints.
    await c.call('server.job_queue.start');
    await waitFor('b.gcode printed', async () => (await c.call<QueueStatus>('server.job_queue.status')).queued_jobs.length === 0
      && (await (await server.api('/api/farm/queue')).json() as { jobs: unknown[] }).jobs.length === 0, LONG);
    const history = await c.call<{ jobs: Array<{ filename: string; status: string }> }>('server.history.list');
    assert.deepEqual(history.jobs.filter((j) => j.status === 'completed').map((j) => j.filename).sort(), ['a.gcode', 'b.gcode']);
    await c.call('server.job_queue.start');
    await c.call('server.job_queue.post_job', { filenames: 'a.gcode' }).then(() => c.call('server.job_queue.pause'));
    await c.call('server.job_queue.delete_job', { all: true });
    assert.deepEqual((await c.call<QueueStatus>('server.job_queue.status')).queued_jobs, []);
  });

  await t.test('query_endstops: M119 through the queue, read as Klipper\'s endstop states', async () => {
    await c.call('printer.gcode.script', { script: 'G28' });
    assert.deepEqual(await c.call('printer.query_endstops.status'), { x: 'TRIGGERED', y: 'TRIGGERED', z: 'TRIGGERED' });
    await c.call('printer.gcode.script', { script: 'G1 X15 Z5 F6000\nM400' });
    assert.deepEqual(await c.call('printer.query_endstops.status'), { x: 'open', y: 'TRIGGERED', z: 'open' });
    assert.ok(server.printer.terminal().some((l) => /Send: .*M119/.test(l)), 'M119 went to the printer');
    await assert.rejects(ro.call('printer.query_endstops.status'), (e: RpcErr) => e.code === 403);
    // The parser: Marlin's Z2 is Klipper's z1; probe and filament lines are not endstops of a stepper.
    assert.deepEqual(endstopsOf(['x_max: open', 'z_min: TRIGGERED', 'z2_min: open', 'z_probe: open', 'filament: open']), { x: 'open', z: 'TRIGGERED', z1: 'open' });
  });

  await t.test('machine: services over the configured system actions; what is not configured is refused; SYSTEM permission', async () => {
    const info = await c.call<{ system_info: { available_services: string[]; service_state: Record<string, { active_state: string }> } }>('machine.system_info');
    assert.deepEqual(info.system_info.available_services.sort(), ['gantry', 'klipper', 'webcamd']);
    assert.equal(info.system_info.service_state.klipper.active_state, 'active');
    assert.equal(await c.call('machine.services.restart', { service: 'webcamd' }), 'ok');
    assert.equal((await readFile(marker, 'utf8')).trim(), 'restarted');
    await assert.rejects(c.call('machine.services.stop', { service: 'webcamd' }), (e: RpcErr) => e.code === 400 && /stop_webcamd/.test(e.message));
    await assert.rejects(c.call('machine.services.restart', {}), (e: RpcErr) => e.code === 400);
    await assert.rejects(c.call('machine.services.restart', { service: ['x'] }), (e: RpcErr) => e.code === 400);
    await assert.rejects(c.call('machine.services.stop', { service: 'moonraker' }), (e: RpcErr) => e.code === 400);
    await assert.rejects(c.call('machine.reboot'), (e: RpcErr) => e.code === 400 && /No reboot command is configured/.test(e.message));
    await assert.rejects(c.call('machine.shutdown'), (e: RpcErr) => e.code === 400);
    for (const client of [ro, op]) {
      await assert.rejects(client.call('server.restart'), (e: RpcErr) => e.code === 403);
      await assert.rejects(client.call('machine.services.restart', { service: 'webcamd' }), (e: RpcErr) => e.code === 403);
    }
    // The restart command configured is `true`: it runs (async, as Gantry's own restart) and the answer is ok.
    assert.equal(await c.call('server.restart'), 'ok');
    // HTTP mirror forms.
    const r = await server.api('/machine/reboot', { method: 'POST' });
    assert.equal(r.status, 400);
    assert.match(((await r.json()) as { error: { message: string } }).error.message, /No reboot command/);
  });

  await t.test('mountMoonraker: one printer\'s endpoint under /printer/NAME on its own app', async () => {
    const unit = server.farm.get('default')!;
    const svc = buildMoonraker(unit, { access: server.access, files: server.files, clock: { now: () => Date.now(), monotonic: () => performance.now() } as never, logger: server.logger, version: 'test' });
    await svc.start();
    t.after(() => svc.stop());
    const app = Fastify();
    mountMoonraker(app, svc, { prefix: '/printer/p1' });
    await app.listen({ host: '127.0.0.1', port: 0 });
    t.after(() => app.close());
    const addr = app.server.address() as { port: number };
    const base = `http://127.0.0.1:${addr.port}/printer/p1`;
    const p = await RpcClient.open(`${base}/websocket`, { 'X-Api-Key': server.apiKey });
    t.after(() => p.close());
    await p.call('server.connection.identify', identify);
    assert.equal((await p.call<{ state: string }>('printer.info')).state, 'ready');
    const q = await p.call<{ status: { toolhead: { homed_axes: string } } }>('printer.objects.query', { objects: { toolhead: ['homed_axes'] } });
    assert.equal(typeof q.status.toolhead.homed_axes, 'string');
    const http = await fetch(`${base}/printer/objects/query?webhooks`, { headers: { 'X-Api-Key': server.apiKey } });
    assert.equal(((await http.json()) as { result: { status: { webhooks: { state: string } } } }).result.status.webhooks.state, 'ready');
    assert.equal((await fetch(`${base}/server/info`)).status, 401, 'the same access rules');
    // Not at the root of that app: only under the prefix.
    assert.equal((await fetch(`http://127.0.0.1:${addr.port}/server/info`)).status, 404);
    // (A websocket upgrade at the root is left to the app's other upgrade handlers, so it is not asked here: with none,
    // as on this bare app, it would stay open.)
    assert.throws(() => mountMoonraker(Fastify(), svc, { prefix: 'no-slash' }), /Invalid Moonraker prefix/);
  });
});
