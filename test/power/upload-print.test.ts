// PSU Control's turnOnWhenApiUploadPrint (docs/reference/plugins.md §1.3): an upload asking to print switches the
// supply on first, waits for the board, connects and prints; with the setting off, the upload to a switched-off,
// disconnected printer is stored and not printed. The supply is a local stand-in Shelly Gen2 (test/power).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { FAST_PRINTER, stateText } from '../helpers/connected-server.ts';
import { uploadFile, recorder, type Json } from '../printer/job/helpers.ts';
import { waitFor } from '../helpers/wait.ts';
import { fakeShellyGen2 } from './fake-devices.ts';

const gcode = ['G28', 'G1 X10 Y10 F3000', 'G1 X20 Y20 E1', 'M400', ''].join('\n');

test('turnOnWhenApiUploadPrint: an upload with print=true powers on, connects, then prints; off, it only stores', async (t) => {
  const dev = await fakeShellyGen2();
  t.after(() => dev.close());
  const s = await startTestServer(t, { settings: { ...FAST_PRINTER, serial: { port: 'VIRTUAL', baudrate: 115200 }, plugins: { psucontrol: {
    switchingMethod: 'PLUGIN', sensingMethod: 'PLUGIN', postOnDelay: 0, gantry: { kind: 'shelly2', address: dev.address, timeout: 2 },
  } } } });
  const rec = recorder(s);
  let onAtConnecting: boolean | undefined;
  s.events.on('test', 'Connecting', () => { onAtConnecting = dev.on; });

  // The default (off): stored, not printed, the supply left off and the printer closed.
  const first = await uploadFile(s, 'a.gcode', gcode, [{ name: 'print', value: 'true' }]);
  assert.equal(first.status, 201);
  const a = await first.json() as Json;
  assert.equal(a.done, true);
  assert.equal(dev.on, false);
  assert.equal(await stateText(s), 'Closed');
  assert.ok(!rec.names().includes('PrintStarted'));

  const set = await s.api('/api/settings', { method: 'POST', json: { plugins: { psucontrol: { turnOnWhenApiUploadPrint: true } } } });
  assert.equal(set.status, 200);
  const second = await uploadFile(s, 'b.gcode', gcode, [{ name: 'print', value: 'true' }]);
  assert.equal(second.status, 201, await second.clone().text());
  assert.equal(dev.on, true, 'switched on by the upload');
  assert.equal(onAtConnecting, true, 'on before the link opened');
  const started = await waitFor('PrintStarted', () => rec.events.find((e) => e.name === 'PrintStarted'), 30_000);
  assert.equal(started.payload.path, 'b.gcode');
  await waitFor('PrintDone', () => rec.names().includes('PrintDone') || undefined, 60_000);
  // Powered, connected and printing, in that order.
  const names = rec.names();
  assert.ok(names.indexOf('Connected') < names.indexOf('PrintStarted'), names.join(' '));
});
