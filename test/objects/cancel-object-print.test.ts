// Cancel one object end to end, with real parts: a plate of three cubes sliced by the PrusaSlicer CLI (object labels
// on), analysed on upload, printed on fakefw through a pty; the middle object is cancelled mid-print with OctoPod's
// call sequence, and the lines fakefw received are checked: nothing extruded inside it after the cancel, every line
// of the others exactly once, E continuous across each skip, the print finishes. The link runs in its thread (the
// default), which holds up to 1,500 lines ahead: the cancel is made while paused, and not one move of the object may
// reach the firmware after the pause (the thread filters the lines it holds). Then the same file in PrusaSlicer's
// firmware M486 layout with "firmware handles M486" on: M486 P<index> is sent and every file line goes out.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { waitFor, stateText } from '../printer/helpers.ts';
import { uploadFile, recorder, type Json } from '../printer/job/helpers.ts';
import { fileLines, slicePlate } from './plate.ts';
import { needs } from '../helpers/tools.ts';
import { command, isLinkChatter, fakeFwPrinter, type LoggedFw } from '../recovery/fakefw.ts';
import { ObjectLabels } from '../../src/objects/object-labels.ts';

/**
 * The same plate in PrusaSlicer's firmware label mode (plugins.md §2.6; the installed 2.5 has only the comment mode):
 * a header `M486 S<id>` / `M486 A<name>` per instance then `M486 S-1`, and `M486 S<id>` … `M486 S-1` in the body.
 */
function toM486(gcode: string): string {
  const labels = new ObjectLabels();
  const body = gcode.split('\n').map((l) => {
    const ev = labels.feed(l);
    if (ev === null) return l;
    return ev.kind === 'start' ? `M486 S${ev.id}` : 'M486 S-1';
  });
  const header = labels.names.flatMap((name, id) => [`M486 S${id}`, `M486 A${name.replace(/\s+/g, '_')}`]).concat('M486 S-1');
  const first = body.findIndex((l) => /^M486 S0$/.test(l));
  return [...body.slice(0, first), ...header, ...body.slice(first)].join('\n');
}

async function rig(t: TestContext, settings: Record<string, unknown> = {}, linkThread: 'worker' | 'main' = 'worker'): Promise<{ s: TestServer; fw: LoggedFw }> {
  // -d: 1 ms a line, so the print still runs when the object is cancelled.
  const { port, fw } = await fakeFwPrinter(t, 'gantry-cancelobject-', ['-d', '1000']);
  const s = await startTestServer(t, { settings: { serial: { additionalPorts: [port], log: false, linkThread }, ...settings } });
  const r = await s.api('/api/connection', { method: 'POST', json: { command: 'connect', port, baudrate: 115200 } });
  assert.equal(r.status, 204);
  await waitFor('Operational', async () => (await stateText(s)) === 'Operational' || undefined);
  return { s, fw };
}

/** OctoPod: the plugin is there (plugins.cancelobject in /api/settings, `ignored` read), objlist 200, cancel 204. */
async function octoPodCancel(s: TestServer, name: string): Promise<number> {
  const settings = await (await s.api('/api/settings')).json() as Json;
  assert.equal(settings.plugins.cancelobject.ignored, 'ENDGCODE,STARTGCODE');
  const res = await s.api('/api/plugin/cancelobject', { method: 'POST', json: { command: 'objlist' } });
  assert.equal(res.status, 200);
  const { list } = await res.json() as Json;
  for (const e of list) {
    assert.equal(typeof e.id, 'number');
    assert.equal(typeof e.object, 'string');
    for (const k of ['cancelled', 'active', 'ignore']) assert.equal(typeof e[k], 'boolean');
  }
  const target = list.find((e: Json) => e.object === name);
  assert.ok(target, `${name} in ${JSON.stringify(list)}`);
  const c = await s.api('/api/plugin/cancelobject', { method: 'POST', json: { command: 'cancel', cancelled: target.id } });
  assert.equal(c.status, 204);
  assert.equal(await c.text(), '');
  return target.id;
}

test('cancel the middle of three PrusaSlicer objects mid-print on fakefw through the link thread (OctoPod sequence, while paused): nothing of it extruded after the pause, the others exactly once, E continuous, print done',
  { skip: needs('prusa-slicer') }, async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'gantry-plate-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const gcode = await slicePlate(dir);
    const { s, fw } = await rig(t);
    const rec = recorder(s);
    assert.equal((await uploadFile(s, 'plate.gcode', gcode)).status, 201);
    const analysed = await waitFor('objects in the analysis', async () => {
      const f = await (await s.api('/api/files/local/plate.gcode')).json() as Json;
      return f.gcodeAnalysis?.gantry?.objects ? f : undefined;
    }, 60_000);
    const objects = analysed.gcodeAnalysis.gantry.objects as Json[];
    assert.equal(objects.length, 3);
    assert.deepEqual(objects.map((o) => o.id), [0, 1, 2]);
    for (const o of objects) {
      // An 8 mm cube's outline: about 8 × 8 mm (the extrusion centre lines).
      assert.ok(o.polygon.length >= 4, JSON.stringify(o));
      assert.ok(Math.abs(o.max[0] - o.min[0] - 7.6) < 0.6 && Math.abs(o.max[1] - o.min[1] - 7.6) < 0.6, JSON.stringify(o));
    }
    // The middle one on the bed (by its centre's X).
    const byX = [...objects].sort((a, b) => (a.min[0] + a.max[0]) - (b.min[0] + b.max[0]));
    const middle = byX[1];

    const lines = fileLines(gcode);
    assert.equal((await s.api('/api/files/local/plate.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
    // Mid-print: a few layers of the middle object already at the firmware.
    const middleCmds = new Set(lines.filter((l) => l.object === middle.id && l.move).map((l) => l.cmd));
    await waitFor('the middle object printing', () => fw.received.map(command).filter((c) => middleCmds.has(c)).length > 200 || undefined, 60_000);
    // Paused, the link thread still holds the lines it was handed (up to 1,500): the cancel must reach those too.
    assert.equal((await s.api('/api/job', { method: 'POST', json: { command: 'pause', action: 'pause' } })).status, 204);
    await waitFor('Paused', async () => (await stateText(s)) === 'Paused' || undefined, 60_000);
    const at = fw.received.length;
    const id = await octoPodCancel(s, middle.name);
    assert.equal(id, middle.id);
    assert.equal((await s.api('/api/job', { method: 'POST', json: { command: 'pause', action: 'resume' } })).status, 204);
    await waitFor('PrintDone', () => rec.names().includes('PrintDone') || undefined, 120_000);
    assert.ok(rec.events.some((e) => e.name === 'plugin_cancelobject_object_cancelled' && e.payload.object_cancelled.id === id && e.payload.object_cancelled.cancelled));
    assert.ok(!rec.names().includes('PrintCancelled'));

    // Align what fakefw got with the file: a file line missing is allowed only for a move of the cancelled object;
    // a received line not in the file only for what a skip's end sends.
    const kept = (c: string) => c !== '' && !isLinkChatter(c);
    const got = fw.received.map(command).filter(kept);
    const gotAtPause = fw.received.slice(0, at).map(command).filter(kept).length;
    let p = 0;
    let firstDropped = -1;
    let ri = -1;
    const afterPause: string[] = [];
    const inserted: string[] = [];
    let printerE = 0, fileE = 0, absE = true;
    for (const r of got) {
      ri++;
      while (p < lines.length && r !== lines[p].cmd && lines[p].object === id && lines[p].move) {
        if (firstDropped < 0) firstDropped = p;
        const e = /\bE(-?[\d.]+)/.exec(lines[p].cmd);
        if (e && absE) fileE = Number(e[1]);
        p++;
      }
      if (p < lines.length && r === lines[p].cmd) {
        const l = lines[p];
        if (firstDropped >= 0 && l.object === id && l.move) assert.ok(!/\bE/.test(l.cmd) || !/X|Y/.test(l.cmd), `extrusion inside the cancelled object after the cancel: ${l.cmd}`);
        if (ri >= gotAtPause && l.object === id && l.move) afterPause.push(l.cmd);
        if (l.cmd === 'M83') absE = false;
        if (l.cmd === 'M82') absE = true;
        const e = /^G[01]\b.*\bE(-?[\d.]+)/.exec(l.cmd);
        if (e && absE) {
          // The step the printer makes is the step the file has: no blob, no grind across a skip.
          assert.ok(Math.abs((Number(e[1]) - printerE) - (Number(e[1]) - fileE)) < 1e-6, `E step at ${l.cmd}: printer at ${printerE}, file at ${fileE}`);
          printerE = fileE = Number(e[1]);
        }
        const g92 = /^G92 E(-?[\d.]+)/.exec(l.cmd);
        if (g92) printerE = fileE = Number(g92[1]);
        p++;
        continue;
      }
      inserted.push(r);
      assert.match(r, /^(G92 E-?[\d.]+|G1 E-?[\d.]+ F[\d.]+|G0 X-?[\d.]+ Y-?[\d.]+|G1 Z-?[\d.]+|G1 F[\d.]+|G9[01])$/, `unexpected line ${r}`);
      const e = /^(?:G92|G1) E(-?[\d.]+)/.exec(r);
      if (e && absE) printerE = Number(e[1]);
    }
    assert.equal(p, lines.length, `the whole file walked (${p} of ${lines.length})`);
    // At most the one line the engine had framed ahead when the pause stopped the feed (it goes first on resume).
    assert.ok(afterPause.length <= 1, `moves of the cancelled object after the pause: ${afterPause.length} (${afterPause.slice(0, 5).join(' | ')})`);
    assert.ok(firstDropped >= 0, 'something of the cancelled object was dropped');
    assert.ok(inserted.some((l) => l.startsWith('G92 E')), 'absolute E: G92 E where a skip ends');
    // Every line of the other objects and outside any object arrived exactly once (the alignment matched them all).
    const dropped = lines.length - (got.length - inserted.length);
    const middleMoves = lines.filter((l) => l.object === id && l.move).length;
    assert.ok(dropped > 0 && dropped < middleMoves, `${dropped} dropped of the ${middleMoves} moves of the middle object`);
    assert.ok(got.length - inserted.length >= 0 && at > 0);
  });

test('firmware handles M486: the file\'s M486 lines all go out and the cancel is M486 P<index>', { skip: needs('prusa-slicer') }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-plate-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const gcode = toM486(await slicePlate(dir));
  const { s, fw } = await rig(t, { plugins: { cancelobject: { gantry: { firmwareM486: true } } } }, 'main');
  const rec = recorder(s);
  assert.equal((await uploadFile(s, 'plate-m486.gcode', gcode)).status, 201);
  const analysed = await waitFor('objects in the analysis', async () => {
    const f = await (await s.api('/api/files/local/plate-m486.gcode')).json() as Json;
    return f.gcodeAnalysis?.gantry?.objects ? f : undefined;
  }, 60_000);
  const objects = analysed.gcodeAnalysis.gantry.objects as Json[];
  // Named from `M486 A…` with the A kept, as the plugin names them (§2.1).
  assert.deepEqual(objects.map((o) => o.name), ['Acube.stl_id:0_copy_2', 'Acube.stl_id:0_copy_0', 'Acube.stl_id:0_copy_1']);
  assert.equal((await s.api('/api/files/local/plate-m486.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
  await waitFor('object 1 started', () => fw.received.map(command).filter((c) => c === 'M486 S1').length >= 3 || undefined, 60_000);
  await octoPodCancel(s, objects[1].name);
  await waitFor('PrintDone', () => rec.names().includes('PrintDone') || undefined, 120_000);
  const got = fw.received.map(command).filter((c) => c !== '' && !isLinkChatter(c));
  assert.ok(got.includes('M486 P1'));
  const file = fileLines(gcode).map((l) => l.cmd);
  assert.deepEqual(got.filter((c) => c !== 'M486 P1'), file, 'every file line, once, in order (the firmware skips)');
});
