// Fluidd's and KlipperScreen's start sequences (docs/reference/moonraker.md §2.2, §2.4) replayed over a real socket
// against a Gantry with the virtual printer, then the same print driven over Moonraker's API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { connectedServer } from '../helpers/connected-server.ts';
import { SMALL_GCODE } from '../helpers/shared-data.ts';
import { RpcClient, mergeStatus } from './rpc-client.ts';
import { waitFor } from '../helpers/wait.ts';
import { gcodeWithThumbnails } from '../helpers/thumbnail-gcode.ts';

async function upload(url: string, name: string, body: string | Buffer, query = '', fields: Record<string, string> = {}): Promise<Response> {
  const form = new FormData();
  form.append('file', new Blob([body]), name);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return fetch(`${url}/server/files/upload${query}`, { method: 'POST', body: form });
}

test('Fluidd: oneshot token, identify, database, bootstrap, subscribe, then a print with pause and resume', async (t) => {
  const server = await connectedServer(t);
  // KlipperScreen and Fluidd: plain HTTP first (with a key), then the socket with a oneshot token.
  const info = await server.api('/server/info');
  assert.equal(info.status, 200);
  const infoBody = (await info.json()) as { result: { klippy_state: string; components: string[] } };
  assert.equal(infoBody.result.klippy_state, 'ready');
  assert.ok(infoBody.result.components.includes('history'));
  const tokenReply = await server.api('/access/oneshot_token');
  const token = ((await tokenReply.json()) as { result: string }).result;
  assert.match(token, /^[A-Z2-7]{32}$/);

  const c = await RpcClient.open(`${server.url}/websocket?token=${token}`);
  t.after(() => c.close());
  const { connection_id } = await c.call<{ connection_id: number }>('server.connection.identify', { client_name: 'fluidd', version: '1.37.4-test', type: 'web', url: 'https://docs.fluidd.xyz' });
  assert.equal(typeof connection_id, 'number');
  await assert.rejects(c.call('server.connection.identify', { client_name: 'fluidd', version: 'x', type: 'web', url: 'u' }), /already identified/);

  // The fluidd namespace does not exist yet: an error, then the root keys are written and read back.
  await assert.rejects(c.call('server.database.get_item', { namespace: 'fluidd' }), (e: Error & { code?: number }) => e.code === -32601);
  for (const key of ['uiSettings', 'macros', 'console', 'charts']) await c.call('server.database.post_item', { namespace: 'fluidd', key, value: {} });
  await c.call('server.database.post_item', { namespace: 'fluidd', key: 'uiSettings.general.instanceName', value: 'Bench' });
  const ns = await c.call<{ value: Record<string, unknown> }>('server.database.get_item', { namespace: 'fluidd' });
  assert.deepEqual(ns.value.uiSettings, { general: { instanceName: 'Bench' } });

  const [si, cfg, proc, sys, cfgFiles] = await Promise.allSettled([c.call('server.info'), c.call<{ config: { data_store: { temperature_store_size: number } } }>('server.config'),
    c.call<{ moonraker_stats: unknown[] }>('machine.proc_stats'), c.call<{ system_info: { cpu_info: { cpu_count: number } } }>('machine.system_info'),
    c.call('server.files.list', { root: 'config' })]);
  assert.equal(si.status, 'fulfilled');
  assert.equal(cfg.status === 'fulfilled' && cfg.value.config.data_store.temperature_store_size, 1200);
  assert.ok(proc.status === 'fulfilled' && Array.isArray(proc.value.moonraker_stats));
  assert.ok(sys.status === 'fulfilled' && sys.value.system_info.cpu_info.cpu_count > 0);
  assert.equal(cfgFiles.status, 'rejected', 'Gantry has no config root');
  // `authorization` is listed: Fluidd loads the user, the user list and the API key together (all answer).
  const [me, users, apiKey] = await Promise.all([c.call<{ username: string }>('access.get_user'), c.call<{ users: unknown[] }>('access.users.list'),
    c.call<string>('access.get_api_key')]);
  assert.equal(typeof me.username, 'string');
  assert.ok(Array.isArray(users.users));
  assert.equal(apiKey, server.apiKey);

  const pinfo = await c.call<{ state: string }>('printer.info');
  assert.equal(pinfo.state, 'ready');
  const { objects } = await c.call<{ objects: string[] }>('printer.objects.list');
  for (const o of ['webhooks', 'configfile', 'toolhead', 'gcode_move', 'extruder', 'heater_bed', 'fan', 'print_stats', 'virtual_sdcard',
    'display_status', 'idle_timeout', 'pause_resume', 'motion_report', 'heaters', 'gcode_macro PAUSE', 'gcode_macro RESUME', 'gcode_macro CANCEL_PRINT']) {
    assert.ok(objects.includes(o), `objects.list has ${o}`);
  }
  const sub = await c.call<{ eventtime: number; status: Record<string, Record<string, unknown>> }>('printer.objects.subscribe',
    { objects: Object.fromEntries(objects.filter((o) => o !== 'menu').map((o) => [o, null])) });
  const state = sub.status;
  assert.equal(state.webhooks.state, 'ready');
  assert.equal(state.idle_timeout.state, 'Ready');
  assert.equal(state.print_stats.state, 'standby');
  const cf = state.configfile as { config: Record<string, unknown>; settings: Record<string, Record<string, unknown>> };
  for (const k of ['virtual_sdcard', 'pause_resume', 'display_status', 'gcode_macro CANCEL_PRINT']) assert.ok(k in cf.config, `configfile.config has ${k}`);
  assert.equal(cf.settings.printer.kinematics, 'cartesian');
  assert.equal(typeof cf.settings.extruder.min_extrude_temp, 'number');
  assert.deepEqual(state.toolhead.axis_maximum, [200, 200, 200, 0]);
  await c.call('server.gcode_store');
  const help = await c.call<Record<string, string>>('printer.gcode.help');
  assert.ok('SDCARD_PRINT_FILE' in help && 'CANCEL_PRINT' in help);
  await c.call('server.temperature_store', { include_monitors: true });

  // The 1 s cadence Fluidd's flush needs: updates keep coming with eventtime in seconds.
  const from = c.notifications.length;
  await waitFor('two status updates a second apart', () => {
    const times = c.notifications.slice(from).filter((n) => n.method === 'notify_status_update').map((n) => n.params![1] as number);
    return times.length >= 2 && times[times.length - 1] - times[0] >= 1;
  });
  await c.next('notify_proc_stat_update', () => true, from);

  // Upload (a PrusaSlicer file with previews), announced on the socket; its metadata carries the thumbnails.
  const token2 = ((await (await server.api('/access/oneshot_token')).json()) as { result: string }).result;
  const mark = c.notifications.length;
  const up = await upload(server.url, 'thumbs.gcode', gcodeWithThumbnails(), `?token=${token2}`, { root: 'gcodes', path: 'sub' });
  assert.equal(up.status, 201);
  const upBody = (await up.json()) as { item: { path: string; root: string }; action: string };
  assert.deepEqual([upBody.item.path, upBody.item.root, upBody.action], ['sub/thumbs.gcode', 'gcodes', 'create_file']);
  await c.next('notify_filelist_changed', (n) => (n.params![0] as { action: string; item: { path: string } }).item.path === 'sub/thumbs.gcode', mark);
  const meta = await waitFor('analysed metadata', async () => {
    const m = await c.call<{ thumbnails?: Array<{ width: number; relative_path: string }>; estimated_time?: number }>('server.files.metadata', { filename: 'sub/thumbs.gcode' });
    return m.thumbnails && m.estimated_time !== undefined ? m : undefined;
  });
  assert.deepEqual(meta.thumbnails!.map((x) => x.width), [16, 220]);
  const png = await fetch(`${server.url}/server/files/gcodes/sub/${meta.thumbnails![1].relative_path}`, { headers: { 'X-Api-Key': server.apiKey } });
  assert.equal(png.status, 200);
  assert.equal(png.headers.get('content-type'), 'image/png');
  assert.equal((await png.arrayBuffer()).byteLength > 0, true);

  // A real print of a shared PrusaSlicer file, started and paused over the socket.
  const benchy = await readFile(SMALL_GCODE);
  const r2 = await server.api('/server/files/upload', { method: 'POST', body: (() => { const f = new FormData(); f.append('file', new Blob([benchy]), 'small.gcode'); return f; })() });
  assert.equal(r2.status, 201);
  const smallMeta = await waitFor('its analysis', async () => {
    const m = await c.call<Record<string, unknown>>('server.files.metadata', { filename: 'small.gcode' });
    return m.estimated_time !== undefined ? m : undefined;
  });
  assert.equal(smallMeta.filename, 'small.gcode');
  assert.equal(smallMeta.slicer, 'PrusaSlicer');
  assert.equal(smallMeta.layer_height, 0.3);
  assert.equal(smallMeta.first_layer_height, 0.3);
  assert.equal(smallMeta.nozzle_diameter, 0.4);
  assert.equal(smallMeta.filament_type, 'PLA');
  const startMark = c.notifications.length;
  assert.equal(await c.call('printer.print.start', { filename: 'small.gcode' }), 'ok');
  // Paused at once: the fast virtual printer could finish this file between two status ticks.
  await c.call('printer.print.pause');
  await c.next('notify_history_changed', (n) => (n.params![0] as { action: string }).action === 'added', startMark);
  const live: Record<string, Record<string, unknown>> = structuredClone(state);
  let merged = 0;
  const update = () => { mergeStatus(live, c.notifications.slice(merged)); merged = c.notifications.length; return live; };
  await waitFor('paused', () => update().print_stats.state === 'paused');
  assert.equal(live.print_stats.filename, 'small.gcode');
  assert.equal(live.idle_timeout.state, 'Printing');
  assert.equal(live.pause_resume.is_paused, true);
  // Layers from Gantry's layer progress (its count of the file's layers), as Klipper's print_stats.info.
  await waitFor('the layer count', () => typeof (update().print_stats.info as { total_layer: unknown }).total_layer === 'number');
  const layers = live.print_stats.info as { total_layer: number; current_layer: unknown };
  assert.ok(layers.total_layer >= 1);
  assert.equal(typeof layers.current_layer, 'number');
  await c.call('printer.print.resume');
  await waitFor('printing again or done', () => ['printing', 'complete'].includes(update().print_stats.state as string));
  await waitFor('complete', () => update().print_stats.state === 'complete', { timeoutMs: 60_000 });
  assert.equal(live.virtual_sdcard.progress, 1);
  const finished = await c.next('notify_history_changed', (n) => (n.params![0] as { action: string }).action === 'finished', startMark);
  const fjob = (finished.params![0] as { job: { filename: string; status: string; filament_used: number; metadata: { estimated_time?: number } } }).job;
  assert.deepEqual([fjob.filename, fjob.status], ['small.gcode', 'completed']);
  assert.ok(fjob.filament_used > 0);
  assert.equal(typeof fjob.metadata.estimated_time, 'number');
  const h = await c.call<{ count: number; jobs: Array<{ filename: string; status: string; job_id: string }> }>('server.history.list', { limit: 50 });
  assert.deepEqual(h.jobs.map((j) => [j.filename, j.status]), [['small.gcode', 'completed']]);
  const one = await c.call<{ job: { filename: string } }>('server.history.get_job', { uid: h.jobs[0].job_id });
  assert.equal(one.job.filename, 'small.gcode');
  const totals = await c.call<{ job_totals: { total_jobs: number; total_filament_used: number } }>('server.history.totals');
  assert.equal(totals.job_totals.total_jobs, 1);
  assert.ok(totals.job_totals.total_filament_used > 0);
  assert.ok((live.print_stats.filament_used as number) > 0, 'filament used, followed from the sent lines');
});

test('KlipperScreen and klipper-tui: HTTP server/info, oneshot token, printer/info, gcode/help, then the socket', async (t) => {
  const server = await connectedServer(t);
  const key = { 'X-Api-Key': server.apiKey };
  const get = async (path: string) => {
    const r = await fetch(`${server.url}${path}`, { headers: key });
    assert.equal(r.status, 200, path);
    return ((await r.json()) as { result: Record<string, unknown> }).result;
  };
  assert.equal((await get('/server/info')).klippy_connected, true);
  assert.equal((await get('/printer/info')).state, 'ready');
  assert.ok('FIRMWARE_RESTART' in (await get('/printer/gcode/help')));
  const token = (await get('/access/oneshot_token')) as unknown as string;
  const c = await RpcClient.open(`${server.url}/websocket?token=${token}`);
  t.after(() => c.close());
  // KlipperScreen identifies as a display; klipper-tui subscribes to its list and reads files.list as an array.
  await c.call('server.connection.identify', { client_name: 'KlipperScreen', version: 'v0.4', type: 'display', url: 'https://github.com/KlipperScreen/KlipperScreen' });
  const sub = await c.call<{ status: Record<string, unknown> }>('printer.objects.subscribe', { objects: Object.fromEntries(['webhooks', 'print_stats',
    'display_status', 'virtual_sdcard', 'toolhead', 'gcode_move', 'extruder', 'heater_bed', 'fan', 'idle_timeout', 'bed_mesh', 'motion_report',
    'firmware_retraction'].map((o) => [o, null])) });
  // Objects Gantry does not have are left out, as Klipper does; the bed mesh (no mesh probed yet) is there.
  assert.ok(!('firmware_retraction' in sub.status) && 'idle_timeout' in sub.status);
  assert.equal((sub.status.bed_mesh as { profile_name: string }).profile_name, '');
  // KlipperScreen's power menu: no device set up, so no power component; its methods still answer.
  assert.ok(!((await get('/server/info')).components as string[]).includes('power'));
  assert.ok(Array.isArray(await c.call('server.files.list')));
  await c.call('printer.gcode.script', { script: 'M104 S30' });
  assert.equal(server.printer.temperatures().tool0?.target, 30);
});
