// Klipper's exclude_object over the Moonraker edge, on Gantry's cancel-object: the printer object (objects with
// centre and polygon, excluded_objects, current_object; names upper-cased) and `EXCLUDE_OBJECT NAME=` cancelling.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer } from '../helpers/connected-server.ts';
import { waitFor } from '../helpers/wait.ts';
import { uploadFile, recorder, type Json } from '../printer/job/helpers.ts';
import { RpcClient } from './rpc-client.ts';

function twoObjects(layers: number): string {
  const out = ['M82', 'G28', 'G92 E0'];
  let e = 0;
  for (let l = 1; l <= layers; l++) {
    out.push(`G1 Z${(l * 0.3).toFixed(1)} F600`);
    for (const [name, x0] of [['left', 10], ['right', 40]] as const) {
      out.push(`; printing object ${name}`, `G1 X${x0} Y10 F6000`);
      for (const [x, y] of [[x0 + 10, 10], [x0 + 10, 20], [x0, 20], [x0, 10]]) out.push(`G1 X${x} Y${y} E${(e += 0.4).toFixed(3)} F1200`);
      out.push(`; stop printing object ${name}`);
    }
  }
  return out.join('\n') + '\n';
}

test('exclude_object status and EXCLUDE_OBJECT NAME= cancel the object', async (t) => {
  const s = await connectedServer(t, { moonraker: { enabled: true }, devel: { virtualPrinter: { throttle: 0.05, busyInterval: 0.2 } } });
  const rec = recorder(s);
  const c = await RpcClient.open(`${s.url}/websocket`, { 'X-Api-Key': s.apiKey });
  t.after(() => c.close());
  await c.call('server.connection.identify', { client_name: 'test', version: '1', type: 'other', url: 'x' });
  const list = await c.call<{ objects: string[] }>('printer.objects.list', {});
  assert.ok(list.objects.includes('exclude_object'));
  assert.equal((await uploadFile(s, 'two.gcode', twoObjects(60))).status, 201);
  await waitFor('analysis', async () => ((await (await s.api('/api/files/local/two.gcode')).json()) as Json).gcodeAnalysis?.gantry?.objects, 30_000);
  assert.equal((await s.api('/api/files/local/two.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
  const query = async () => (await c.call<{ status: { exclude_object: Json } }>('printer.objects.query', { objects: { exclude_object: null } })).status.exclude_object;
  const first = await waitFor('current object', async () => { const q = await query(); return q.current_object ? q : undefined; }, 20_000);
  assert.deepEqual(first.objects.map((o: Json) => o.name), ['LEFT', 'RIGHT']);
  assert.deepEqual(first.objects[0].center, [15, 15]);
  assert.ok(first.objects[0].polygon.length >= 4);
  assert.deepEqual(first.excluded_objects, []);
  assert.equal(await c.call('printer.gcode.script', { script: 'EXCLUDE_OBJECT NAME=right' }), 'ok');
  assert.deepEqual((await query()).excluded_objects, ['RIGHT']);
  await assert.rejects(c.call('printer.gcode.script', { script: 'EXCLUDE_OBJECT NAME=nothere' }), /Unknown object/);
  await waitFor('PrintDone', () => rec.names().includes('PrintDone') || undefined, 60_000);
});
