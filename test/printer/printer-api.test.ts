// HTTP tests of /api/connection and /api/printer/* against the virtual printer: every endpoint, every 400/409 row.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { connectedServer, waitFor } from './helpers.ts';
import { nextEvent } from '../helpers/wait.ts';
import { MAX_WAITING_COMMANDS } from '../../src/printer/printer-service.ts';

async function post(s: TestServer, path: string, json: unknown): Promise<{ status: number; body: Record<string, unknown> | null }> {
  const r = await s.api(path, { method: 'POST', json });
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null };
}

async function get(s: TestServer, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await s.api(path);
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/** Waits until the serial log shows the line as sent. */
function sent(s: TestServer, line: string): Promise<boolean> {
  return waitFor(`Send: ${line}`, () => s.printer.terminal().some((l) => l === `Send: ${line}`) || undefined, 5000);
}

test('offline: connection options, 400 for unknown port/baudrate/profile, 409 for every printer route', async (t) => {
  const s = await startTestServer(t);
  const conn = await get(s, '/api/connection');
  assert.equal(conn.status, 200);
  assert.deepEqual(conn.body.current, { state: 'Closed', port: null, baudrate: null, printerProfile: '_default' });
  const options = conn.body.options as Record<string, unknown>;
  assert.ok((options.ports as string[]).includes('VIRTUAL'));
  assert.deepEqual(options.baudrates, [250000, 230400, 115200, 57600, 38400, 19200, 9600]);
  assert.deepEqual(options.printerProfiles, [{ id: '_default', name: 'Default' }]);

  assert.deepEqual(await post(s, '/api/connection', { command: 'connect', port: '/dev/nope' }), { status: 400, body: { error: 'port is invalid' } });
  assert.deepEqual(await post(s, '/api/connection', { command: 'connect', port: 'VIRTUAL', baudrate: 1234 }), { status: 400, body: { error: 'baudrate is invalid' } });
  assert.deepEqual(await post(s, '/api/connection', { command: 'connect', port: 'VIRTUAL', printerProfile: 'nope' }), { status: 400, body: { error: 'printerProfile is invalid' } });
  assert.deepEqual(await post(s, '/api/connection', { command: 'frobnicate' }), { status: 400, body: { error: 'command is invalid' } });
  assert.equal((await post(s, '/api/connection', { command: 'fake_ack' })).status, 204);
  assert.equal((await post(s, '/api/connection', { command: 'disconnect' })).status, 204);

  const notOperational = { error: 'Printer is not operational' };
  for (const path of ['/api/printer', '/api/printer/tool', '/api/printer/bed', '/api/printer/chamber']) {
    assert.deepEqual(await get(s, path), { status: 409, body: notOperational }, path);
  }
  const posts: Array<[string, unknown]> = [
    ['/api/printer/printhead', { command: 'jog', x: 1 }],
    ['/api/printer/printhead', { command: 'feedrate', factor: 100 }],
    ['/api/printer/tool', { command: 'target', targets: { tool0: 200 } }],
    ['/api/printer/bed', { command: 'target', target: 60 }],
    ['/api/printer/chamber', { command: 'target', target: 40 }],
    ['/api/printer/command', { command: 'M105' }],
  ];
  for (const [path, body] of posts) assert.deepEqual(await post(s, path, body), { status: 409, body: notOperational }, path);
  assert.deepEqual(await post(s, '/api/printer/sd', { command: 'refresh' }), { status: 409, body: { error: 'Printer is not operational or currently busy' } });
  assert.deepEqual(await get(s, '/api/printer/sd'), { status: 200, body: { ready: false } });
  assert.deepEqual(await get(s, '/api/printer/command/custom'), { status: 200, body: { controls: [] } });
  assert.equal((await s.api('/api/printer', { key: null })).status, 403);
});

test('operational on the virtual printer: state, temperatures, printhead, tool, bed, chamber, SD, commands', async (t) => {
  const s = await connectedServer(t);

  await t.test('GET /api/connection and /api/printer', async () => {
    const conn = await get(s, '/api/connection');
    assert.deepEqual(conn.body.current, { state: 'Operational', port: 'VIRTUAL', baudrate: 115200, printerProfile: '_default' });
    await waitFor('temperatures', async () => ((await get(s, '/api/printer')).body.temperature as Record<string, unknown>).tool0 !== undefined || undefined);
    const p = await get(s, '/api/printer?history=true&limit=1');
    assert.equal(p.status, 200);
    const temperature = p.body.temperature as Record<string, unknown>;
    assert.deepEqual(Object.keys(temperature.tool0 as object).sort(), ['actual', 'offset', 'target']);
    assert.ok(temperature.bed);
    assert.equal(temperature.chamber, undefined);
    const history = temperature.history as Array<Record<string, unknown>>;
    assert.equal(history.length, 1);
    assert.equal(typeof history[0].time, 'number');
    assert.deepEqual(p.body.sd, { ready: true });
    const state = p.body.state as { text: string; flags: Record<string, boolean>; error: string };
    assert.equal(state.text, 'Operational');
    assert.deepEqual(state.flags, {
      operational: true, printing: false, cancelling: false, pausing: false, resuming: false, finishing: false,
      closedOrError: false, error: false, paused: false, ready: true, sdReady: true,
    });
    const only = await get(s, '/api/printer?exclude=temperature,sd');
    assert.deepEqual(Object.keys(only.body), ['state']);
  });

  await t.test('printhead', async () => {
    assert.equal((await post(s, '/api/printer/printhead', { command: 'jog', x: 10, y: -5 })).status, 204);
    await sent(s, 'G1 X10 Y-5 F6000');
    assert.equal((await post(s, '/api/printer/printhead', { command: 'jog', z: 2, absolute: true, speed: 100 })).status, 204);
    await sent(s, 'G1 Z2 F100');
    assert.equal((await post(s, '/api/printer/printhead', { command: 'jog', x: 1, speed: false })).status, 204);
    await sent(s, 'G1 X1');
    // G-code has no exponents: tiny values are 0, and four places at most.
    assert.equal((await post(s, '/api/printer/printhead', { command: 'jog', x: 1e-7, y: 123.456789, speed: 100000 })).status, 204);
    await sent(s, 'G1 X0 Y123.4568 F100000');
    assert.equal((await post(s, '/api/printer/printhead', { command: 'home', axes: ['x', 'y'] })).status, 204);
    await sent(s, 'G28 X0 Y0');
    assert.equal((await post(s, '/api/printer/printhead', { command: 'feedrate', factor: 150 })).status, 204);
    await sent(s, 'M220 S150');
    assert.equal((await post(s, '/api/printer/printhead', { command: 'feedrate', factor: 0.5 })).status, 204);
    await sent(s, 'M220 S50');
    const bad: unknown[] = [
      { command: 'jog', x: 'ten' }, { command: 'jog', x: 1, speed: 'fast' }, { command: 'jog', x: 1, absolute: 'yes' },
      // Past 10 m or 100 m/min `1e308` went out as `G1 XInfinity`.
      { command: 'jog', x: 1e308 }, { command: 'jog', z: -10_001 }, { command: 'jog', x: 1, speed: 100_001 },
      { command: 'home', axes: ['x', 'q'] }, { command: 'home', axes: [] }, { command: 'home' },
      { command: 'feedrate', factor: 300 }, { command: 'feedrate', factor: 0.2 }, { command: 'feedrate', factor: 'max' },
      { command: 'feedrate' }, { command: 'fly' }, {},
    ];
    for (const b of bad) assert.equal((await post(s, '/api/printer/printhead', b)).status, 400, JSON.stringify(b));
  });

  await t.test('tool', async () => {
    assert.equal((await post(s, '/api/printer/tool', { command: 'target', targets: { tool0: 200 } })).status, 204);
    await sent(s, 'M104 T0 S200');
    assert.equal((await post(s, '/api/printer/tool', { command: 'offset', offsets: { tool0: 10 } })).status, 204);
    assert.equal(((await get(s, '/api/printer/tool')).body.tool0 as { offset: number }).offset, 10);
    assert.equal((await post(s, '/api/printer/tool', { command: 'select', tool: 'tool0' })).status, 204);
    await sent(s, 'T0');
    assert.equal((await post(s, '/api/printer/tool', { command: 'extrude', amount: 5 })).status, 204);
    await sent(s, 'G1 E5 F300');
    assert.equal((await post(s, '/api/printer/tool', { command: 'extrude', amount: -2, speed: 1200 })).status, 204);
    await sent(s, 'G1 E-2 F1200');
    assert.equal((await post(s, '/api/printer/tool', { command: 'flowrate', factor: 1.1 })).status, 204);
    await sent(s, 'M221 S110');
    const bad: unknown[] = [
      { command: 'target', targets: { tool1: 200 } }, { command: 'target', targets: { hotend: 200 } },
      { command: 'target', targets: { tool0: 'hot' } }, { command: 'target', targets: 200 }, { command: 'target' },
      { command: 'offset', offsets: { tool0: 51 } }, { command: 'offset', offsets: { bed: 5 } },
      { command: 'select', tool: 'tool1' }, { command: 'select', tool: 0 },
      { command: 'extrude', amount: 'lots' }, { command: 'extrude', amount: 1, speed: -5 },
      // `G1 E1e+308` is an endless extrusion to a firmware's strtod.
      { command: 'extrude', amount: 1e308 }, { command: 'extrude', amount: -10_001 }, { command: 'extrude', amount: 1, speed: 1e300 },
      { command: 'flowrate', factor: 130 }, { command: 'flowrate', factor: 0.5 }, { command: 'melt' },
    ];
    for (const b of bad) assert.equal((await post(s, '/api/printer/tool', b)).status, 400, JSON.stringify(b));
    const withHistory = await get(s, '/api/printer/tool?history=true&limit=2');
    const h = withHistory.body.history as Array<Record<string, unknown>>;
    assert.ok(h.length >= 1 && h.length <= 2);
    assert.deepEqual(Object.keys(h[0]), ['tool0']);
  });

  await t.test('bed and chamber', async () => {
    assert.equal((await post(s, '/api/printer/bed', { command: 'target', target: 60 })).status, 204);
    await sent(s, 'M140 S60');
    assert.equal((await post(s, '/api/printer/bed', { command: 'offset', offset: -5 })).status, 204);
    const bed = await get(s, '/api/printer/bed?history=true');
    assert.equal((bed.body.bed as { offset: number }).offset, -5);
    assert.deepEqual(Object.keys((bed.body.history as object[])[0]), ['bed']);
    for (const b of [{ command: 'target', target: 'x' }, { command: 'offset', offset: 60 }, { command: 'target' }, { command: 'boil' }]) {
      assert.equal((await post(s, '/api/printer/bed', b)).status, 400, JSON.stringify(b));
    }
    const noChamber = { error: 'Printer does not have a heated chamber' };
    assert.deepEqual(await get(s, '/api/printer/chamber'), { status: 409, body: noChamber });
    assert.deepEqual(await post(s, '/api/printer/chamber', { command: 'target', target: 40 }), { status: 409, body: noChamber });
  });

  await t.test('SD card', async () => {
    assert.deepEqual(await get(s, '/api/printer/sd'), { status: 200, body: { ready: true } });
    assert.equal((await post(s, '/api/printer/sd', { command: 'refresh' })).status, 204);
    await waitFor('M20', () => s.printer.terminal().some((l) => /^Send: M20/.test(l)) || undefined);
    assert.equal((await post(s, '/api/printer/sd', { command: 'eject' })).status, 400);
    assert.equal((await post(s, '/api/printer/sd', { command: 'release' })).status, 204);
    assert.deepEqual(await get(s, '/api/printer/sd'), { status: 200, body: { ready: false } });
    assert.equal((await post(s, '/api/printer/sd', { command: 'init' })).status, 204);
    await waitFor('SD ready again', async () => ((await get(s, '/api/printer/sd')).body.ready === true) || undefined);
  });

  await t.test('commands and scripts', async () => {
    assert.equal((await post(s, '/api/printer/command', { command: 'M117 single' })).status, 204);
    await sent(s, 'M117 single');
    assert.equal((await post(s, '/api/printer/command', { commands: ['M18', 'M106 S0'] })).status, 204);
    await sent(s, 'M106 S0');
    assert.equal((await post(s, '/api/printer/command', { command: 'M117 one\rM117 two\r\nM117 three\nM117 four' })).status, 204);
    await sent(s, 'M117 four');
    assert.deepEqual(s.printer.terminal().filter((l) => /^Send: .*M117 (one|two|three|four)/.test(l)).map((l) => l.replace(/^Send: (N\d+ )?/, '').replace(/\*\d+$/, '')),
      ['M117 one', 'M117 two', 'M117 three', 'M117 four']);
    assert.equal((await post(s, '/api/printer/command', { command: 'M104 S%(temp)s', parameters: { temp: 180 } })).status, 204);
    await sent(s, 'M104 S180');
    assert.deepEqual(await post(s, '/api/printer/command', { command: 'M1', commands: ['M2'] }), { status: 400, body: { error: "'command' and 'commands' are mutually exclusive" } });
    assert.deepEqual(await post(s, '/api/printer/command', { command: 'M1', script: 'x' }), { status: 400, body: { error: "'command'/'commands' and 'script' are mutually exclusive" } });
    assert.deepEqual(await post(s, '/api/printer/command', {}), { status: 400, body: { error: "Need one of 'command', 'commands' or 'script'" } });
    assert.deepEqual(await post(s, '/api/printer/command', { commands: 'M18' }), { status: 400, body: { error: 'commands is invalid' } });
    assert.deepEqual(await post(s, '/api/printer/command', { script: 'noSuchScript' }), { status: 404, body: { error: 'Unknown script' } });
    assert.equal((await post(s, '/api/printer/command', { script: 'afterPrintCancelled' })).status, 204);
    await sent(s, 'M140 S0');
  });

  await t.test('disconnect', async () => {
    assert.equal((await post(s, '/api/connection', { command: 'disconnect' })).status, 204);
    await waitFor('Closed', async () => ((await get(s, '/api/connection')).body.current as { state: string }).state === 'Closed' || undefined);
    assert.deepEqual((await get(s, '/api/connection')).body.current, { state: 'Closed', port: null, baudrate: null, printerProfile: '_default' });
    assert.equal((await get(s, '/api/printer')).status, 409);
  });
});

test('printing: printhead and tool select/extrude answer 409, feed rate and targets still work, a connect keeps the print', async (t) => {
  const s = await connectedServer(t);
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  async function* source() {
    yield { lines: ['G1 X1'], ends: [6] };
    await gate;
  }
  let outcome = '';
  s.printer.streamJob(source(), { finished: (o) => { outcome = o; } });
  await waitFor('Printing', () => s.printer.state().flags.printing || undefined);
  const busy = { error: 'Printer is currently printing' };
  assert.deepEqual(await post(s, '/api/printer/printhead', { command: 'jog', x: 1 }), { status: 409, body: busy });
  assert.deepEqual(await post(s, '/api/printer/printhead', { command: 'home', axes: ['z'] }), { status: 409, body: busy });
  assert.deepEqual(await post(s, '/api/printer/tool', { command: 'select', tool: 'tool0' }), { status: 409, body: busy });
  assert.deepEqual(await post(s, '/api/printer/tool', { command: 'extrude', amount: 1 }), { status: 409, body: busy });
  assert.equal((await post(s, '/api/printer/sd', { command: 'refresh' })).status, 409);
  assert.equal((await post(s, '/api/printer/printhead', { command: 'feedrate', factor: 120 })).status, 204);
  assert.equal((await post(s, '/api/printer/tool', { command: 'target', targets: { tool0: 190 } })).status, 204);
  assert.equal((await post(s, '/api/printer/tool', { command: 'flowrate', factor: 100 })).status, 204);
  const p = await get(s, '/api/printer');
  assert.equal((p.body.state as { flags: { ready: boolean } }).flags.ready, false);
  // A connect while printing (a farm manager's blind "make sure it is connected") keeps the link and the print.
  const seen: string[] = [];
  const off = s.events.onAny('test-connect-while-printing', (name) => { seen.push(name); });
  t.after(off);
  const connect = { command: 'connect', port: 'VIRTUAL', baudrate: 115200 };
  assert.deepEqual(await post(s, '/api/connection', connect), { status: 204, body: null });
  await waitFor('the ignored connect in the terminal', () => s.printer.terminal().some((l) => /Connect ignored: a print/.test(l)) || undefined);
  assert.equal(s.printer.state().text, 'Printing');
  release();
  await waitFor('job done', () => outcome || undefined);
  assert.equal(outcome, 'done');
  assert.equal(s.printer.state().text, 'Operational');
  assert.deepEqual(seen.filter((n) => /^(Connecting|Disconnected|Disconnecting|PrintFailed|PrintCancelled)$/.test(n)), []);
  // Connected and idle, connect reconnects (the interface spec).
  const reconnecting = nextEvent(s.events, 'Connecting');
  assert.equal((await post(s, '/api/connection', connect)).status, 204);
  await reconnecting;
  await waitFor('Operational again', () => s.printer.state().text === 'Operational' || undefined);
});

test('commands from clients: at most MAX_WAITING_COMMANDS wait unwritten, more answer 409, an emergency stop still goes', async (t) => {
  const s = await connectedServer(t);
  // A dwell of ten minutes (the test's printer runs 1,000 times fast) holds everything behind it in the queue.
  assert.equal((await post(s, '/api/printer/command', { command: 'G4 S600000' })).status, 204);
  await waitFor('the dwell sent', () => s.printer.terminal().some((l) => /^Send: (N\d+ )?G4 S600000/.test(l)) || undefined);
  const batch = Array.from({ length: 7_500 }, (_, i) => `M117 ${i}`);
  const full = Math.floor(MAX_WAITING_COMMANDS / batch.length);
  for (let i = 0; i < full; i++) assert.equal((await post(s, '/api/printer/command', { commands: batch })).status, 204, `batch ${i + 1}`);
  const refused = await post(s, '/api/printer/command', { commands: batch });
  assert.equal(refused.status, 409);
  assert.match(String(refused.body?.error), /^The printer's command queue is full: \d+ commands wait to be sent \(at most 50000\)/);
  assert.equal((await post(s, '/api/printer/printhead', { command: 'jog', x: 1 })).status, 204, 'a jog still fits');
  // Filled to the last place, in ever smaller requests: then a jog does not fit either.
  for (const size of [1000, 100, 10, 1]) {
    while ((await post(s, '/api/printer/command', { commands: batch.slice(0, size) })).status === 204);
  }
  assert.equal((await post(s, '/api/printer/printhead', { command: 'jog', x: 1 })).status, 409, 'until the queue is full');
  // Without a bound, 300 requests like these had queued 2.4 million commands and grown the server by 210 MB.
  assert.equal((await post(s, '/api/printer/command', { command: 'M112' })).status, 204);
  await waitFor('the emergency stop', () => s.printer.terminal().some((l) => /^Send: (N\d+ )?M112/.test(l)) || undefined);
});

test('a profile without heated bed: bed routes answer 409 and /api/printer has no bed', async (t) => {
  const s = await startTestServer(t, { settings: { devel: { virtualPrinter: { throttle: 0.001 } } } });
  const created = await post(s, '/api/printerprofiles', { profile: { id: 'nobed', name: 'No bed', heatedBed: false } });
  assert.equal(created.status, 200);
  assert.equal((await post(s, '/api/connection', { command: 'connect', port: 'VIRTUAL', baudrate: 115200, printerProfile: 'nobed' })).status, 204);
  await waitFor('Operational', () => s.printer.isOperational() || undefined);
  assert.equal(((await get(s, '/api/connection')).body.current as { printerProfile: string }).printerProfile, 'nobed');
  const noBed = { error: 'Printer does not have a heated bed' };
  assert.deepEqual(await get(s, '/api/printer/bed'), { status: 409, body: noBed });
  assert.deepEqual(await post(s, '/api/printer/bed', { command: 'target', target: 60 }), { status: 409, body: noBed });
  await waitFor('temperatures', async () => ((await get(s, '/api/printer')).body.temperature as Record<string, unknown>).tool0 !== undefined || undefined);
  assert.equal(((await get(s, '/api/printer')).body.temperature as Record<string, unknown>).bed, undefined);
});

test('autoconnect on start, and connect with save/autoconnect stores the preferences', async (t) => {
  const s = await startTestServer(t, { settings: { serial: { autoconnect: true, port: 'VIRTUAL', baudrate: 115200 }, devel: { virtualPrinter: { throttle: 0.001 } } } });
  await waitFor('autoconnected', () => s.printer.isOperational() || undefined);
  assert.equal(((await get(s, '/api/connection')).body.current as { port: string }).port, 'VIRTUAL');
  const r = await post(s, '/api/connection', { command: 'connect', port: 'VIRTUAL', baudrate: 250000, save: true, autoconnect: false });
  assert.equal(r.status, 204);
  assert.equal(s.config.current.serial.baudrate, 250000);
  assert.equal(s.config.current.serial.autoconnect, false);
  await waitFor('reconnected at 250000', async () => ((await get(s, '/api/connection')).body.current as { baudrate: number }).baudrate === 250000 || undefined);
  await waitFor('Operational', () => s.printer.isOperational() || undefined);
  const options = (await get(s, '/api/connection')).body.options as Record<string, unknown>;
  assert.equal(options.baudratePreference, 250000);
  assert.equal(options.portPreference, 'VIRTUAL');
  assert.equal(options.autoconnect, false);
});

test('scripts through the command API expand snippets and context', async (t) => {
  const s = await connectedServer(t, { scripts: { gcode: { myScript: "{% snippet 'disable_bed' %}\nM117 {{ context.greeting }}" } } });
  const r = await post(s, '/api/printer/command', { script: 'myScript', context: { greeting: 'hello' } });
  assert.equal(r.status, 204);
  await sent(s, 'M140 S0');
  await sent(s, 'M117 hello');
});
