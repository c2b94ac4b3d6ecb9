// /api/plugin/cancelobject on the virtual printer: the plugin's shapes and status codes, its errors, permissions, the
// pushes and events, the history's record of what was cancelled, and the last object cancelling the print.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer, waitFor } from '../printer/helpers.ts';
import { uploadFile, recorder, type Json } from '../printer/job/helpers.ts';
import { rawClient, userWithKey } from '../push/push-clients.ts';

/** Two labelled squares (PrusaSlicer style), `layers` layers, absolute E. */
function twoObjects(layers: number): string {
  const out = ['M82', 'G28', 'G92 E0'];
  let e = 0;
  for (let l = 1; l <= layers; l++) {
    out.push(';LAYER_CHANGE', `G1 Z${(l * 0.3).toFixed(1)} F600`);
    for (const [name, x0] of [['left', 10], ['right', 40]] as const) {
      out.push(`; printing object ${name}`, `G1 X${x0} Y10 F6000`);
      for (const [x, y] of [[x0 + 10, 10], [x0 + 10, 20], [x0, 20], [x0, 10]]) out.push(`G1 X${x} Y${y} E${(e += 0.4).toFixed(3)} F1200`);
      out.push(`G1 E${(e - 0.8).toFixed(3)} F2400`, `G1 E${e.toFixed(3)} F2400`, `; stop printing object ${name}`);
    }
  }
  return out.join('\n') + '\n';
}

const post = (s: Awaited<ReturnType<typeof connectedServer>>, json: unknown, key?: string) =>
  s.api('/api/plugin/cancelobject', { method: 'POST', json, ...(key ? { key } : {}) });

test('objlist shape, errors, permissions, pushes and events; cancelling one object is recorded in the history', async (t) => {
  const s = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.05, busyInterval: 0.2 } } });
  const rec = recorder(s);
  assert.equal((await s.api('/api/plugin/cancelobject')).status, 204);
  assert.deepEqual(await (await post(s, { command: 'objlist' })).json(), { list: [] });
  assert.equal((await post(s, { command: 'nope' })).status, 400);
  const missing = await post(s, { command: 'cancel' });
  assert.equal(missing.status, 400);
  assert.match(await missing.text(), /Mandatory parameters missing/);
  const settings = await (await s.api('/api/settings')).json() as Json;
  assert.deepEqual({ ...settings.plugins.cancelobject, gantry: undefined }, {
    shownav: true, markers: true, stoptags: false, ignored: 'ENDGCODE,STARTGCODE', beforegcode: '', aftergcode: '', allowed: '', gantry: undefined,
  });

  assert.equal((await uploadFile(s, 'two.gcode', twoObjects(40))).status, 201);
  await waitFor('analysis', async () => ((await (await s.api('/api/files/local/two.gcode')).json()) as Json).gcodeAnalysis?.gantry?.objects, 30_000);
  const { auth } = await userWithKey(s, 'watcher');
  const push = await rawClient(s);
  t.after(() => push.close());
  push.send({ auth });
  await push.next('history');
  assert.equal((await s.api('/api/files/local/two.gcode', { method: 'POST', json: { command: 'select' } })).status, 204);
  const res = await post(s, { command: 'objlist' });
  assert.equal(res.status, 200);
  const text = await res.text();
  // The plugin's keys in its order; min/max from the outline.
  assert.match(text, /^\{"list":\[\{"object":"left","id":0,"active":false,"cancelled":false,"ignore":false,"max_x":20,"min_x":10,"max_y":20,"min_y":10\},\{"object":"right","id":1,/);
  const pushed = await push.next('plugin', (p: Json) => p.plugin === 'cancelobject' && Array.isArray(p.data.objects)) as Json;
  assert.equal(pushed.data.objects.length, 2);
  assert.ok(rec.events.some((e) => e.name === 'plugin_cancelobject_object_list' && e.payload.object_list.length === 2));

  // A user without CONTROL cannot cancel.
  const viewer = await userWithKey(s, 'viewer', { groups: [], permissions: ['STATUS'] });
  const denied = await post(s, { command: 'cancel', cancelled: 1 }, viewer.key);
  assert.equal(denied.status, 403);

  assert.equal((await s.api('/api/job', { method: 'POST', json: { command: 'start' } })).status, 204);
  await push.next('plugin', (p: Json) => p.plugin === 'cancelobject' && p.data.ActiveID !== undefined, { timeoutMs: 20_000 });
  await push.next('plugin', (p: Json) => p.plugin === 'cancelobject' && typeof p.data.navBarActive === 'string' && p.data.navBarActive !== 'None');
  // A numeric string, as the plugin's int() takes it.
  const c = await post(s, { command: 'cancel', cancelled: '1' });
  assert.equal(c.status, 204);
  const ev = rec.events.find((e) => e.name === 'plugin_cancelobject_object_cancelled');
  assert.deepEqual(ev?.payload.object_cancelled && { id: ev.payload.object_cancelled.id, cancelled: ev.payload.object_cancelled.cancelled }, { id: 1, cancelled: true });
  // An unknown id is only logged (204).
  assert.equal((await post(s, { command: 'cancel', cancelled: 7 })).status, 204);
  await waitFor('PrintDone', () => rec.names().includes('PrintDone') || undefined, 60_000);
  await push.next('plugin', (p: Json) => p.plugin === 'cancelobject' && p.data.navBarActive === 'None');
  const history = await (await s.api('/plugin/gantry/history')).json() as Json;
  const last = history.prints.at(-1);
  assert.equal(last.result, 'success');
  assert.deepEqual(last.cancelledObjects, ['right']);
});

test('cancelling the last remaining object ends the print as cancelled', async (t) => {
  const s = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.05, busyInterval: 0.2 } } });
  const rec = recorder(s);
  assert.equal((await uploadFile(s, 'two.gcode', twoObjects(60))).status, 201);
  await waitFor('analysis', async () => ((await (await s.api('/api/files/local/two.gcode')).json()) as Json).gcodeAnalysis?.gantry?.objects, 30_000);
  assert.equal((await s.api('/api/files/local/two.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
  await waitFor('printing', () => rec.names().includes('plugin_cancelobject_current_object') || undefined, 20_000);
  assert.equal((await post(s, { command: 'cancel', cancelled: 0 })).status, 204);
  assert.ok(!rec.names().includes('PrintCancelling'), 'one object left: the print goes on');
  assert.equal((await post(s, { command: 'cancel', cancelled: 1 })).status, 204);
  await waitFor('PrintCancelled', () => rec.names().includes('PrintCancelled') || undefined, 20_000);
  const history = await (await s.api('/plugin/gantry/history')).json() as Json;
  const last = history.prints.at(-1);
  assert.equal(last.result, 'cancelled');
  assert.deepEqual(last.cancelledObjects, ['left', 'right']);
});
