// DisplayLayerProgress on a real print on the virtual printer: /plugin/DisplayLayerProgress/values in the plugin's
// shape while printing, its events on the bus, the OctoPod refresh (204), the M117/M73 lines the printer received at
// the configured rate, and preheat from the file's first-layer temperatures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer } from '../helpers/connected-server.ts';
import { uploadFile, jobCommand } from '../printer/job/helpers.ts';
import { waitFor } from '../helpers/wait.ts';

/** PrusaSlicer-style layers (;LAYER_CHANGE, ;Z:), a dwell per layer so the print lasts a few seconds. */
function layeredGcode(layers: number, dwellMs: number): string {
  const out = ['M140 S60', 'M104 S215', 'M190 S60', 'M109 S215', 'G28', 'G90', 'M83'];
  for (let l = 1; l <= layers; l++) {
    out.push(';LAYER_CHANGE', `;Z:${(l * 0.2).toFixed(1)}`, `G1 Z${(l * 0.2).toFixed(2)} F600`);
    if (l === 2) out.push('M106 S255', 'M104 S205');
    out.push(`G1 X${10 + l} Y10 E0.5 F1800`, `G4 P${dwellMs}`);
  }
  out.push('M107', 'M104 S0', 'M140 S0');
  return `${out.join('\n')}\n`;
}

test('values, events and the printer display during a print', async (t) => {
  const server = await connectedServer(t, {
    devel: { virtualPrinter: { throttle: 0.01, busyInterval: 0.2 } },
    plugins: { DisplayLayerProgress: { gantry: { m117: { enabled: true, interval: 1 }, m73: { enabled: true, interval: 1 } } } },
  });
  const events: Array<{ name: string; payload: Record<string, unknown> }> = [];
  server.events.onAny('test', (name, payload) => { if (name.startsWith('DisplayLayerProgress_')) events.push({ name, payload: payload as Record<string, unknown> }); });
  // 12 layers of ≥ 300 ms (G4 P30000 at throttle 0.01).
  assert.equal((await uploadFile(server, 'layers.gcode', layeredGcode(12, 30_000))).status, 201);
  const sel = await server.api('/api/files/local/layers.gcode', { method: 'POST', json: { command: 'select' } });
  assert.equal(sel.status, 204);

  // Preheat from the file: the first layer's targets (215 / 60, not layer 2's 205).
  const pre = await server.api('/api/plugin/preheat', { method: 'POST', json: { command: 'preheat' } });
  assert.equal(pre.status, 200, await pre.clone().text());
  assert.deepEqual(await pre.json(), { targets: { bed: 60, tool0: 215 } });
  await waitFor('targets set', () => server.printer.temperatures().tool0?.target === 215 && server.printer.temperatures().bed?.target === 60);

  const log: string[] = [];
  t.after(server.printer.subscribe({ log: (lines) => { log.push(...lines); } }));
  const started = Date.now();
  assert.equal(await jobCommand(server, 'start'), 204);
  let mid: Record<string, any> | undefined; // eslint-disable-line @typescript-eslint/no-explicit-any
  await waitFor('a layer in the middle', async () => {
    const v = await (await server.api('/plugin/DisplayLayerProgress/values')).json() as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    if (Number(v.layer.current) >= 4 && Number(v.layer.current) <= 10) mid = v;
    return mid !== undefined;
  }, { timeoutMs: 20_000 });
  const v = mid!;
  assert.equal(v.layer.total, '12');
  assert.equal(typeof v.layer.current, 'string');
  assert.equal(v.print.printerState, 'printing');
  assert.equal(v.currentFilename, 'layers.gcode');
  assert.equal(v.fanSpeed, '100%');
  assert.equal(typeof v.feedrate, 'string');
  assert.match(v.height.current, /^\d+\.\d{2}$/);
  assert.match(v.height.currentFormatted, /^\d+\.\d$/);
  assert.equal(v.height.total, '2.4');
  assert.match(v.layer.lastLayerDuration, /^0h:00m:\d\ds$|^-$/);
  assert.deepEqual(Object.keys(v), ['layer', 'height', 'fanSpeed', 'feedrate', 'feedrateG0', 'feedrateG1', 'print', 'currentFilename']);
  // OctoPod's refresh.
  const refresh = await server.api('/api/plugin/DisplayLayerProgress');
  assert.equal(refresh.status, 204);

  await waitFor('print done', async () => (await (await server.api('/api/job')).json() as { state: string }).state === 'Operational', { timeoutMs: 30_000 });
  const seconds = (Date.now() - started) / 1000;
  const layerEvents = events.filter((e) => e.name === 'DisplayLayerProgress_layerChanged').map((e) => Number(e.payload.currentLayer));
  assert.ok(layerEvents.length >= 5, `layer events: ${layerEvents.join(',')}`);
  for (let i = 1; i < layerEvents.length; i++) assert.ok(layerEvents[i] >= layerEvents[i - 1], 'layers only go up');
  assert.ok(events.some((e) => e.name === 'DisplayLayerProgress_progressChanged'));
  assert.equal(events[0].payload.totalLayer !== undefined, true);
  assert.equal(typeof events.find((e) => e.name === 'DisplayLayerProgress_layerChanged')?.payload.fanspeed, 'string', 'the event payload says fanspeed (lower case)');

  // What the printer received: M117 and M73 lines, at most one per second each, and some of them.
  const sent = log.filter((l) => /^Send: (N\d+ )?M(117|73) /.test(l));
  const m117 = sent.filter((l) => l.includes('M117 '));
  const m73 = sent.filter((l) => l.includes('M73 '));
  assert.ok(m117.length >= 2, sent.join('\n'));
  assert.ok(m117.length <= Math.ceil(seconds) + 1, `${m117.length} M117 in ${seconds} s`);
  assert.ok(m73.length >= 2 && m73.length <= Math.ceil(seconds) + 1, `${m73.length} M73 in ${seconds} s`);
  assert.match(m117[m117.length - 1], /M117 L \d+\/12 - \d+% - .+ left/);
  for (const l of m117) assert.match(l, /^[\x20-\x7e]*$/, 'plain ASCII');
  assert.match(m73[0], /M73 P\d+( R\d+)?/);
});

test('the printer display is off by default: no M117/M73 sent', async (t) => {
  const server = await connectedServer(t, { devel: { virtualPrinter: { throttle: 0.01, busyInterval: 0.2 } } });
  assert.equal((await uploadFile(server, 'l.gcode', layeredGcode(4, 30_000))).status, 201);
  assert.equal((await server.api('/api/files/local/l.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
  await waitFor('print done', async () => {
    const j = await (await server.api('/api/job')).json() as { state: string; progress: { completion: number | null } };
    return j.state === 'Operational' && j.progress.completion === 100;
  }, { timeoutMs: 30_000 });
  assert.deepEqual(server.printer.terminal().filter((l) => /^Send: (N\d+ )?M(117|73) /.test(l)), []);
});
