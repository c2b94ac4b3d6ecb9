// Klipper commands over printer.gcode.script: mapped ones reach the printer as Marlin commands, unknown Klipper words
// are refused in Klipper's style and never sent; M112 and FIRMWARE_RESTART; the G-code state the objects report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer } from '../helpers/connected-server.ts';
import { waitFor } from '../helpers/wait.ts';
import { RpcClient } from './rpc-client.ts';

type RpcErr = Error & { code?: number };

test('Klipper commands: heaters, unknown words, G-code state, HELP, M112 and FIRMWARE_RESTART', async (t) => {
  const server = await connectedServer(t);
  const c = await RpcClient.open(`${server.url}/websocket`, { 'X-Api-Key': server.apiKey });
  t.after(() => c.close());
  await c.call('server.connection.identify', { client_name: 'test', version: '1', type: 'other', url: 'x' });

  assert.equal(await c.call('printer.gcode.script', { script: 'SET_HEATER_TEMPERATURE HEATER=heater_bed TARGET=55\nSET_HEATER_TEMPERATURE HEATER=extruder TARGET=70' }), 'ok');
  assert.equal(server.printer.temperatures().bed?.target, 55);
  assert.equal(server.printer.temperatures().tool0?.target, 70);
  await c.call('printer.gcode.script', { script: 'TURN_OFF_HEATERS' });
  assert.equal(server.printer.temperatures().bed?.target, 0);
  assert.equal(server.printer.temperatures().tool0?.target, 0);
  await assert.rejects(c.call('printer.gcode.script', { script: 'SET_HEATER_TEMPERATURE HEATER=chamber TARGET=40' }), /Unknown heater/);

  // An unknown Klipper command: Klipper's error, in the console too, and nothing of it on the serial line.
  const mark = c.notifications.length;
  await assert.rejects(c.call('printer.gcode.script', { script: 'G28\nQUAD_GANTRY_LEVEL RETRIES=2' }), (e: RpcErr) => e.code === 400 && e.message === 'Unknown command:"QUAD_GANTRY_LEVEL"');
  await c.next('notify_gcode_response', (n) => n.params![0] === '!! Unknown command:"QUAD_GANTRY_LEVEL"', mark);
  assert.ok(!server.printer.terminal().some((l) => l.includes('QUAD_GANTRY')), 'never sent to Marlin');
  assert.ok(server.printer.terminal().some((l) => /Send: .*G28/.test(l)), 'the line before it was');

  // Modes and factors, followed from what was sent; a jog wrapped in SAVE/RESTORE_GCODE_STATE keeps the modes.
  await c.call('printer.gcode.script', { script: 'M220 S150\nM221 S90\nM106 S255\nSAVE_GCODE_STATE NAME=_ui_movement\nG91\nG1 X10 F6000\nRESTORE_GCODE_STATE NAME=_ui_movement' });
  const query = () => c.call<{ status: { gcode_move: Record<string, unknown>; fan: { speed: number }; toolhead: { homed_axes: string } } }>('printer.objects.query',
    { objects: { gcode_move: null, fan: null, toolhead: ['homed_axes'] } });
  // The sent lines reach the state with the terminal log's next batch.
  const q = await waitFor('the factors followed', async () => { const r = await query(); return r.status.gcode_move.speed_factor === 1.5 && (r.status.gcode_move.gcode_position as number[])[0] === 10 ? r : undefined; });
  assert.equal(q.status.gcode_move.speed_factor, 1.5);
  assert.equal(q.status.gcode_move.extrude_factor, 0.9);
  assert.equal(q.status.gcode_move.absolute_coordinates, true);
  assert.equal((q.status.gcode_move.gcode_position as number[])[0], 10);
  assert.equal(q.status.fan.speed, 1);
  assert.equal(q.status.toolhead.homed_axes, 'xyz');
  // HTTP query form: ?gcode_move=speed_factor
  const h = await server.api('/printer/objects/query?gcode_move=speed_factor&webhooks');
  assert.deepEqual(((await h.json()) as { result: { status: unknown } }).result.status, { gcode_move: { speed_factor: 1.5 }, webhooks: { state: 'ready', state_message: 'Printer is ready' } });

  const helpMark = c.notifications.length;
  await c.call('printer.gcode.script', { script: 'HELP' });
  await c.next('notify_gcode_response', (n) => String(n.params![0]).includes('SDCARD_PRINT_FILE'), helpMark);

  // The console answer of a Marlin command; then emergency stop and firmware restart.
  const m115 = c.notifications.length;
  await c.call('printer.gcode.script', { script: 'M115' });
  await c.next('notify_gcode_response', (n) => String(n.params![0]).includes('FIRMWARE_NAME'), m115);
  const stop = c.notifications.length;
  assert.equal(await c.call('printer.emergency_stop'), 'ok');
  await c.next('notify_klippy_shutdown', () => true, stop).catch(() => c.next('notify_klippy_disconnected', () => true, stop));
  await waitFor('not ready', async () => (await c.call<{ state: string }>('printer.info')).state !== 'ready');
  await assert.rejects(c.call('printer.gcode.script', { script: 'G28' }), (e: RpcErr) => e.code === 400 && /not operational/.test(e.message));
  const again = c.notifications.length;
  assert.equal(await c.call('printer.gcode.script', { script: 'FIRMWARE_RESTART' }), 'ok');
  await c.next('notify_klippy_ready', () => true, again);
  assert.equal((await c.call<{ state: string }>('printer.info')).state, 'ready');
});
