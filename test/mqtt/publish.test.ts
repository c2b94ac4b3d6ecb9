// OctoPrint-MQTT's topics and Home Assistant discovery on a real Mosquitto: connected retained, events and payloads
// during a real print on the virtual printer, progress, temperatures with the threshold, discovery as captured.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { Recorder, SKIP, startBroker } from './helpers.ts';

const NODE = 'caea63f6f7bc4d6f8f4c0ed1b1665846';

/** The discovery payloads mqtt.md §2.2 captured from OctoPrint-HomeAssistant 3.7.0 (device `sw` aside). */
const CAPTURED: Record<string, string> = {
  [`homeassistant/binary_sensor/${NODE}_CONNECTED/config`]: '{"avty": [{"t": "~mqtt", "pl_avail": "connected", "pl_not_avail": "disconnected"}], "~": "octoPrint/", "name": "Connected", "uniq_id": "caea63f6f7bc4d6f8f4c0ed1b1665846_CONNECTED", "stat_t": "~hass/Connected", "pl_on": "Connected", "pl_off": "Disconnected", "dev_cla": "connectivity", "device": {"ids": "caea63f6f7bc4d6f8f4c0ed1b1665846", "name": "OctoPrint", "mf": "Clifford Roche", "mdl": "HomeAssistant Discovery for OctoPrint", "sw": "HomeAssistant Discovery for OctoPrint 3.7.0"}}',
  [`homeassistant/sensor/${NODE}_PRINTING_P/config`]: '{"avty": [{"t": "~mqtt", "pl_avail": "connected", "pl_not_avail": "disconnected"}], "~": "octoPrint/", "name": "Print progress", "uniq_id": "caea63f6f7bc4d6f8f4c0ed1b1665846_PRINTING_P", "json_attr_t": "~hass/printing", "json_attr_tpl": "{{value_json.progress|tojson}}", "stat_t": "~progress/printing", "unit_of_meas": "%", "val_tpl": "{{value_json.progress|float(0)}}", "device": {"ids": "caea63f6f7bc4d6f8f4c0ed1b1665846", "name": "OctoPrint", "mf": "Clifford Roche", "mdl": "HomeAssistant Discovery for OctoPrint", "sw": "HomeAssistant Discovery for OctoPrint 3.7.0"}}',
  [`homeassistant/button/${NODE}_CANCEL/config`]: '{"avty": [{"t": "~hass/is_printing", "pl_avail": "True", "pl_not_avail": "False"}, {"t": "~mqtt", "pl_avail": "connected", "pl_not_avail": "disconnected"}], "~": "octoPrint/", "name": "Cancel print", "uniq_id": "caea63f6f7bc4d6f8f4c0ed1b1665846_CANCEL", "cmd_t": "~hassControl/cancel", "device": {"ids": "caea63f6f7bc4d6f8f4c0ed1b1665846", "name": "OctoPrint", "mf": "Clifford Roche", "mdl": "HomeAssistant Discovery for OctoPrint", "sw": "HomeAssistant Discovery for OctoPrint 3.7.0"}, "ic": "mdi:cancel"}',
  [`homeassistant/switch/${NODE}_PAUSE/config`]: '{"avty": [{"t": "~hass/is_printing", "pl_avail": "True", "pl_not_avail": "False"}, {"t": "~mqtt", "pl_avail": "connected", "pl_not_avail": "disconnected"}], "~": "octoPrint/", "name": "Pause print", "uniq_id": "caea63f6f7bc4d6f8f4c0ed1b1665846_PAUSE", "cmd_t": "~hassControl/pause", "stat_t": "~hass/is_paused", "pl_off": "False", "pl_on": "True", "device": {"ids": "caea63f6f7bc4d6f8f4c0ed1b1665846", "name": "OctoPrint", "mf": "Clifford Roche", "mdl": "HomeAssistant Discovery for OctoPrint", "sw": "HomeAssistant Discovery for OctoPrint 3.7.0"}, "ic": "mdi:pause"}',
  [`homeassistant/sensor/${NODE}_PRINTING_T/config`]: '{"avty": [{"t": "~hass/printing", "val_tpl": "{{\'False\' if not value_json.progress.printTime else \'True\'}}", "pl_avail": "True", "pl_not_avail": "False"}, {"t": "~mqtt", "pl_avail": "connected", "pl_not_avail": "disconnected"}], "~": "octoPrint/", "name": "Print time", "uniq_id": "caea63f6f7bc4d6f8f4c0ed1b1665846_PRINTING_T", "stat_t": "~hass/printing", "val_tpl": "{{value_json.progress.printTime}}", "dev_cla": "duration", "unit_of_meas": "s", "device": {"ids": "caea63f6f7bc4d6f8f4c0ed1b1665846", "name": "OctoPrint", "mf": "Clifford Roche", "mdl": "HomeAssistant Discovery for OctoPrint", "sw": "HomeAssistant Discovery for OctoPrint 3.7.0"}, "ic": "mdi:clock-start"}',
};

function withoutSw(payload: Record<string, unknown>): Record<string, unknown> {
  const device = { ...(payload.device as Record<string, unknown>) };
  delete device.sw;
  return { ...payload, device };
}

test('OctoPrint-MQTT topics during a real print, temperatures with the threshold, and the captured discovery configs', { skip: SKIP }, async (t) => {
  const broker = await startBroker(t);
  const early = await Recorder.connect(t, broker.url, ['octoPrint/#', 'homeassistant/#']);
  const server = await startTestServer(t, { settings: {
    devel: { virtualPrinter: { throttle: 0.1 } },
    serial: { timeout: { temperatureTargetSet: 0.25, temperature: 0.25 }, capabilities: { autoreport_temp: false } },
    plugins: {
      mqtt: {
        broker: { url: '127.0.0.1', port: broker.port },
        // OctoPrint's topics are one setting away.
        publish: { baseTopic: 'octoPrint/', temperatureThreshold: 2, metadataActive: true, metadataKeys: 'display, hash,userdata.job,userdata,no.such.key' },
        gantry: { reconnectMin: 0.1, reconnectMax: 0.5, progressInterval: 0.2 },
      },
      homeassistant: { node_id: NODE, node_name: 'OctoPrint', device_manufacturer: 'Clifford Roche', device_model: 'HomeAssistant Discovery for OctoPrint' },
    },
  } });
  await early.wait((m) => m.topic === 'octoPrint/mqtt' && m.text === 'connected', 'connected');
  // Every captured discovery config, with the same keys and values (the device's software string names Gantry).
  for (const [topic, text] of Object.entries(CAPTURED)) {
    const got = await early.topic(topic);
    assert.equal(got.retain, false, 'a live subscriber sees the retain flag cleared');
    assert.deepEqual(withoutSw(got.json()), withoutSw(JSON.parse(text) as Record<string, unknown>), topic);
  }
  const discovery = early.messages.filter((m) => m.topic.startsWith('homeassistant/'));
  assert.ok(discovery.some((m) => m.topic === `homeassistant/sensor/${NODE}_TOOL0/config`), 'one sensor per extruder');
  assert.ok(discovery.some((m) => m.topic === `homeassistant/sensor/${NODE}_BED_TARGET/config`));
  assert.ok(!discovery.some((m) => m.topic.includes('CAMERA')), 'no camera without a snapshot URL');
  await early.wait((m) => m.topic === 'octoPrint/progress/printing' && (m.json().path as string) === '', 'empty progress on first connect');
  await early.wait((m) => m.topic === 'octoPrint/hass/is_printing' && m.text === 'False', 'is_printing at startup');

  // A fresh subscriber gets the retained state: connected, and the discovery configs with their retain flag.
  const fresh = await Recorder.connect(t, broker.url, ['octoPrint/mqtt', 'homeassistant/#']);
  const connected = await fresh.topic('octoPrint/mqtt');
  assert.deepEqual([connected.text, connected.retain, connected.qos], ['connected', true, 1]);
  assert.equal((await fresh.topic(`homeassistant/button/${NODE}_CANCEL/config`)).retain, true);

  const rec = await Recorder.connect(t, broker.url, 'octoPrint/#');
  const from = rec.messages.length;
  const samples: number[] = [];
  t.after(server.printer.subscribe({ temperature: (e) => { if (typeof e.bed === 'object') samples.push(e.bed.actual ?? 0); } }));
  assert.equal((await server.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL' } })).status, 204);
  const conn = await rec.topic('octoPrint/event/Connected', 'Connected event', 20_000, from);
  assert.equal(conn.json()._event, 'Connected');
  assert.equal(conn.json().port, 'VIRTUAL');
  assert.equal(typeof conn.json()._timestamp, 'number');
  assert.ok(Number.isInteger(conn.json()._timestamp));
  assert.equal(conn.retain, false);

  // Temperatures: heating the bed produces many samples; only moves of 2 °C or more (or a new target) are published.
  assert.equal((await server.api('/api/printer/bed', { method: 'POST', json: { command: 'target', target: 50 } })).status, 204);
  await rec.wait((m) => m.topic === 'octoPrint/temperature/bed' && (m.json().actual as number) >= 48, 'bed reaching 48', 30_000);
  const temps = rec.messages.filter((m) => m.topic === 'octoPrint/temperature/bed').map((m) => m.json() as { actual: number; target: number; _timestamp: number });
  assert.ok(temps.length >= 3, `published ${temps.length}`);
  for (let i = 1; i < temps.length; i++) {
    const moved = Math.abs(temps[i].actual - temps[i - 1].actual) >= 2 - 1e-9 || Math.abs(temps[i].target - temps[i - 1].target) >= 0.1;
    assert.ok(moved, `sample ${i} published without a 2 °C move: ${JSON.stringify(temps.slice(i - 1, i + 1))}`);
  }
  assert.ok(samples.length > temps.length, `${samples.length} samples, ${temps.length} published`);
  assert.equal((await server.api('/api/printer/bed', { method: 'POST', json: { command: 'target', target: 0 } })).status, 204);

  // A short print with a few layers (the virtual printer runs at ten times real speed here).
  const lines = ['G28', 'G90', 'M83'];
  for (let layer = 1; layer <= 5; layer++) lines.push(`G1 Z${(layer * 0.2).toFixed(1)} F600`, 'G1 X60 Y10 E1 F6000', 'G1 X10 Y10 E1 F6000');
  const gcode = Buffer.from(lines.join('\n') + '\n');
  const form = new FormData();
  form.append('file', new Blob([gcode]), 'small.gcode');
  form.append('print', 'true');
  form.append('userdata', JSON.stringify({ job: 'A-17', spool: 3 }));
  assert.equal((await server.api('/api/files/local', { method: 'POST', body: form })).status, 201);
  const started = await rec.topic('octoPrint/event/PrintStarted', 'PrintStarted', 20_000, from);
  assert.deepEqual({ ...started.json(), _timestamp: 0 }, { name: 'small.gcode', path: 'small.gcode', origin: 'local', size: gcode.length,
    owner: '_api', user: '_api', _event: 'PrintStarted', _timestamp: 0 });
  // publish.metadataActive: the file's metadata at print start, one topic per key (strings raw, the rest JSON).
  const meta = async (key: string) => (await rec.topic(`octoPrint/metadata/${key}`, `metadata/${key}`, 10_000, from));
  assert.equal((await meta('display')).text, 'small.gcode');
  assert.match((await meta('hash')).text, /^[0-9a-f]{40}$/);
  assert.equal((await meta('userdata.job')).text, 'A-17');
  assert.deepEqual((await meta('userdata')).json(), { job: 'A-17', spool: 3 });
  assert.equal((await meta('display')).retain, false, 'a live subscriber sees retain cleared');
  const done = await rec.topic('octoPrint/event/PrintDone', 'PrintDone', 120_000, from);
  assert.equal(done.json().name, 'small.gcode');
  assert.equal(typeof done.json().time, 'number');
  const z = await rec.topic('octoPrint/event/ZChange', 'ZChange', 5000, from);
  assert.deepEqual(Object.keys(z.json()).sort(), ['_event', '_timestamp', 'new', 'old']);
  const final = await rec.wait((m) => m.topic === 'octoPrint/progress/printing' && m.json().progress === 100, 'progress 100', 10_000, from);
  assert.deepEqual({ ...final.json(), _timestamp: 0 }, { location: 'local', path: 'small.gcode', progress: 100, _timestamp: 0 });
  await rec.wait((m) => m.topic === 'octoPrint/hass/is_printing' && m.text === 'False', 'is_printing False after the print', 5000,
    rec.messages.indexOf(started));
  const printing = await rec.wait((m) => m.topic === 'octoPrint/hass/printing' && (m.json().state as { text: string }).text === 'Printing',
    'hass/printing while printing', 5000, from);
  const data = printing.json() as { state: { flags: Record<string, boolean> }; job: Record<string, unknown>; progress: Record<string, unknown> };
  assert.equal(data.state.flags.printing, true);
  assert.ok('estimatedPrintTimeFormatted' in data.job);
  assert.ok('printTimeLeftFormatted' in data.progress && 'resends' in printing.json() && 'currentZ' in printing.json());

  // At the end of the print each key gets an empty payload, which clears its retained value; a missing key never appears.
  const metaAt = (key: string) => rec.messages.slice(from).filter((m) => m.topic === `octoPrint/metadata/${key}`).map((m) => m.text);
  // The keys are cleared one by one, in no set order: wait for each one looked at.
  for (const key of ['userdata', 'userdata.job', 'no.such.key']) {
    await rec.wait((m) => m.topic === `octoPrint/metadata/${key}` && m.text === '', `metadata/${key} cleared`, 5000, rec.messages.indexOf(done));
  }
  assert.deepEqual(metaAt('userdata.job'), ['A-17', '']);
  assert.deepEqual(metaAt('no.such.key'), [''], 'a key the file lacks only gets the clearing empty payload');
  // Retained messages come in the order of the filters: anything retained under metadata/ would arrive before `connected`.
  const afterPrint = await Recorder.connect(t, broker.url, ['octoPrint/metadata/#', 'octoPrint/mqtt']);
  await afterPrint.topic('octoPrint/mqtt');
  assert.deepEqual(afterPrint.messages.map((m) => m.topic), ['octoPrint/mqtt'], 'no retained metadata after the print');

  // Events are retained only for ZChange and FirmwareData, as the plugin does.
  const names = rec.messages.slice(from).filter((m) => m.topic.startsWith('octoPrint/event/')).map((m) => m.topic.slice(16));
  for (const n of ['Connecting', 'PrinterStateChanged', 'FileAdded', 'FileSelected', 'PrintStarted', 'PrintDone']) assert.ok(names.includes(n), `${n} in ${names.join(',')}`);
  const retainedCheck = await Recorder.connect(t, broker.url, 'octoPrint/event/#');
  await retainedCheck.topic('octoPrint/event/ZChange', 'retained ZChange');
  const retained = retainedCheck.messages.filter((m) => m.retain).map((m) => m.topic).sort();
  assert.deepEqual(retained, ['octoPrint/event/FirmwareData', 'octoPrint/event/ZChange']);
});
