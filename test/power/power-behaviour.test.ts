// Power control's behaviour with a real printer link and a real broker: an off while heating or printing needs force
// (409 otherwise), M80/M81 written to the printer switch a device (pseudo on/off), the push carries isPSUOn, and an
// MQTT device (topic pair through Mosquitto) is switched and read back from its state topic.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer } from '../helpers/connected-server.ts';
import { startTestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';
import { needs } from '../helpers/tools.ts';
import { startBroker } from '../mqtt/helpers.ts';
import { fakeShellyGen2 } from './fake-devices.ts';

const command = (s: Awaited<ReturnType<typeof startTestServer>>, json: Record<string, unknown>, query = '') =>
  s.api(`/api/plugin/psucontrol${query}`, { method: 'POST', json });

test('an off while heating is refused (409, clear error) unless forced; M80/M81 sent to the printer switch the device', async (t) => {
  const dev = await fakeShellyGen2();
  t.after(() => dev.close());
  const server = await connectedServer(t, { plugins: { psucontrol: {
    switchingMethod: 'PLUGIN', sensingMethod: 'PLUGIN', enablePseudoOnOff: true, gantry: { kind: 'shelly2', address: dev.address, timeout: 1 },
  } } });
  const changes: boolean[] = [];
  server.events.on('test', 'plugin_psucontrol_psu_state_changed', (p) => { changes.push(p.isPSUOn as boolean); });
  const on = await command(server, { command: 'turnPSUOn' });
  assert.equal(on.status, 204, await on.text());
  assert.equal((await server.api('/api/printer/tool', { method: 'POST', json: { command: 'target', targets: { tool0: 200 } } })).status, 204);
  await waitFor('heating', () => (server.printer.temperatures().tool0?.target ?? 0) > 0);
  const refused = await command(server, { command: 'turnPSUOff' });
  assert.equal(refused.status, 409);
  assert.match((await refused.json() as { error: string }).error, /heating \(tool0 to 200 °C\).*force/);
  assert.equal(dev.on, true, 'still on');
  assert.equal((await command(server, { command: 'turnPSUOff' }, '?force=true')).status, 204);
  assert.equal(dev.on, false);
  // M80 through the terminal: the device comes on.
  await server.api('/api/printer/tool', { method: 'POST', json: { command: 'target', targets: { tool0: 0 } } });
  await waitFor('cooled target', () => server.printer.temperatures().tool0?.target === 0);
  assert.equal((await server.api('/api/printer/command', { method: 'POST', json: { command: 'M80' } })).status, 204);
  await waitFor('M80 switched on', () => dev.on);
  // M81: off once no job runs and the hotends are cool (the virtual hotend is at room temperature).
  assert.equal((await server.api('/api/printer/command', { method: 'POST', json: { command: 'M81' } })).status, 204);
  await waitFor('M81 switched off', () => !dev.on);
  assert.deepEqual(changes.slice(0, 2), [true, false]);
});

test('MQTT device: on/off published to the control topic, the state from the state topic (real Mosquitto)', { skip: needs('mosquitto') }, async (t) => {
  const broker = await startBroker(t);
  const server = await startTestServer(t, { settings: { plugins: {
    mqtt: { broker: { url: broker.url } },
    psucontrol: { switchingMethod: 'PLUGIN', sensingMethod: 'PLUGIN', sensePollingInterval: 0.2,
      gantry: { kind: 'mqtt', controlTopic: 'plug/cmnd/POWER', stateTopic: 'plug/stat/RESULT', stateOn: '{"POWER":"ON"}', stateOff: '{"POWER":"OFF"}', timeout: 2 } },
  } } });
  const { connect } = await import('mqtt');
  // The plug: answers every command on its state topic, as Tasmota does.
  const plug = connect(broker.url);
  t.after(() => new Promise<void>((r) => plug.end(true, {}, () => r())));
  await new Promise<void>((r) => plug.on('connect', () => r()));
  const commands: string[] = [];
  await plug.subscribeAsync('plug/cmnd/POWER');
  plug.on('message', (_topic, payload) => {
    commands.push(payload.toString());
    plug.publish('plug/stat/RESULT', JSON.stringify({ POWER: payload.toString() }));
  });
  await waitFor('gantry connected to the broker', () => server.mqtt.status().connected);
  const on = await command(server, { command: 'turnPSUOn' });
  assert.equal(on.status, 204, await on.clone().text());
  assert.deepEqual(commands, ['ON']);
  assert.deepEqual(await (await command(server, { command: 'getPSUState' })).json(), { isPSUOn: true });
  assert.equal((await command(server, { command: 'turnPSUOff' })).status, 204);
  assert.deepEqual(commands, ['ON', 'OFF']);
  // Switched at the plug itself: read back from its state topic.
  plug.publish('plug/stat/RESULT', '{"POWER":"ON"}');
  await waitFor('state read back', async () => ((await (await server.api('/api/plugin/psucontrol')).json()) as { isPSUOn: boolean }).isPSUOn);
  // A plug that does not answer: the switch fails within the timeout with the topic named.
  plug.removeAllListeners('message');
  const silent = await command(server, { command: 'turnPSUOff' });
  assert.equal(silent.status, 502);
  assert.match((await silent.json() as { error: string }).error, /MQTT topic plug\/cmnd\/POWER got no state on plug\/stat\/RESULT within 2 s/);
});

test('a forced off during a print closes the link and recovery records the cut power as the cause', async (t) => {
  const dev = await fakeShellyGen2();
  t.after(() => dev.close());
  const server = await connectedServer(t, {
    devel: { virtualPrinter: { throttle: 0.01, busyInterval: 0.2 } },
    plugins: { psucontrol: { switchingMethod: 'PLUGIN', sensingMethod: 'PLUGIN', gantry: { kind: 'shelly2', address: dev.address, timeout: 1 } } },
  });
  assert.equal((await command(server, { command: 'turnPSUOn' })).status, 204);
  const { uploadFile } = await import('../printer/job/helpers.ts');
  const lines = ['G28', 'G90'];
  for (let l = 1; l <= 200; l++) lines.push(`G1 Z${(l * 0.2).toFixed(1)} F600`, `G1 X${l % 100} Y10 F1800`, 'G4 P20000');
  assert.equal((await uploadFile(server, 'long.gcode', `${lines.join('\n')}\n`)).status, 201);
  assert.equal((await server.api('/api/files/local/long.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
  await waitFor('printing', async () => ((await (await server.api('/api/job')).json()) as { state: string }).state === 'Printing');
  await waitFor('some progress', async () => ((await (await server.api('/api/job')).json()) as { progress: { filepos: number | null } }).progress.filepos! > 200);
  const refused = await command(server, { command: 'turnPSUOff' });
  assert.equal(refused.status, 409);
  assert.match((await refused.json() as { error: string }).error, /printing/);
  assert.equal((await command(server, { command: 'turnPSUOff', force: true })).status, 204);
  assert.equal(dev.on, false);
  await waitFor('link closed', async () => ((await (await server.api('/api/connection')).json()) as { current: { state: string } }).current.state === 'Closed');
  const offer = await waitFor('recovery offer', async () => {
    const o = await (await server.api('/api/plugin/recovery')).json() as { available: boolean; cause?: string };
    return o.available ? o : undefined;
  });
  assert.equal(offer.cause, 'power-off');
});

test('idle off: with powerOffWhenIdle, no job and nothing hot, the supply goes off after idleTimeout minutes', async (t) => {
  const dev = await fakeShellyGen2();
  t.after(() => dev.close());
  const server = await startTestServer(t, { settings: { plugins: { psucontrol: {
    switchingMethod: 'PLUGIN', sensingMethod: 'PLUGIN', powerOffWhenIdle: true, idleTimeout: 0.01, gantry: { kind: 'shelly2', address: dev.address, timeout: 1 },
  } } } });
  const on = Date.now();
  assert.equal((await command(server, { command: 'turnPSUOn' })).status, 204);
  assert.equal(dev.on, true);
  // The rule looks every 5 s; 0.6 s of idleness is due at the first look after it.
  await waitFor('idle off', () => !dev.on, { timeoutMs: 15_000, intervalMs: 100 });
  assert.ok(Date.now() - on >= 600, 'not before the idle timeout');
});

test('autoOn: a connect switches the supply on first, then connects', async (t) => {
  const dev = await fakeShellyGen2();
  t.after(() => dev.close());
  const { connectVirtual, FAST_PRINTER } = await import('../helpers/connected-server.ts');
  const server = await startTestServer(t, { settings: { ...FAST_PRINTER, plugins: { psucontrol: {
    switchingMethod: 'PLUGIN', sensingMethod: 'PLUGIN', autoOn: true, gantry: { kind: 'shelly2', address: dev.address, timeout: 1 },
  } } } });
  let onAtConnecting: boolean | undefined;
  server.events.on('test', 'Connecting', () => { onAtConnecting = dev.on; });
  assert.equal(dev.on, false);
  await connectVirtual(server);
  assert.equal(onAtConnecting, true, 'on before the link opened');
});

test('a configured HTTP request switches, and its state URL is read back', async (t) => {
  const { createServer } = await import('node:http');
  let state = 'off';
  const seen: string[] = [];
  const srv = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    if (req.url === '/on') state = 'on';
    if (req.url === '/off') state = 'off';
    res.end(req.url === '/state' ? JSON.stringify({ relay: { output: state === 'on' } }) : 'ok');
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  t.after(() => new Promise<void>((r) => srv.close(() => r())));
  const base = `http://127.0.0.1:${(srv.address() as { port: number }).port}`;
  const server = await startTestServer(t, { settings: { plugins: { psucontrol: {
    switchingMethod: 'PLUGIN', sensingMethod: 'PLUGIN',
    gantry: { kind: 'http', onUrl: `${base}/on`, offUrl: `${base}/off`, method: 'POST', stateUrl: `${base}/state`, stateOnMatch: 'relay.output=true', timeout: 1 },
  } } } });
  assert.equal((await command(server, { command: 'turnPSUOn' })).status, 204);
  assert.deepEqual(await (await command(server, { command: 'getPSUState' })).json(), { isPSUOn: true });
  assert.ok(seen.includes('POST /on'));
  state = 'off';
  assert.deepEqual(await (await command(server, { command: 'getPSUState' })).json(), { isPSUOn: false });
});
