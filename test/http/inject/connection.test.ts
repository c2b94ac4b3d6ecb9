// /api/connection through app.inject with a fake printer and fake ports: the GET document from their state and the
// real config and profiles, and what connect/disconnect/fake_ack hand the printer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FORBIDDEN, injectApp } from '../../helpers/inject-app.ts';

const ok = { status: 204, body: '' };

test('GET: current from the printer, options from the ports, profiles and serial settings', async (t) => {
  const a = await injectApp(t);
  // Two polls at once share one port scan (not timed apart: a scan is reused for a second only).
  const [first, second] = await Promise.all([a.request('GET', '/api/connection'), a.request('GET', '/api/connection')]);
  assert.deepEqual(a.ports.calls, [['listPorts']]);
  assert.deepEqual(second, first);
  assert.deepEqual(first, { status: 200, body: {
    current: { state: 'Closed', port: null, baudrate: null, printerProfile: '_default' },
    options: {
      ports: ['/dev/ttyUSB0', 'VIRTUAL'], baudrates: [250000, 115200], printerProfiles: [{ id: '_default', name: 'Default' }],
      portPreference: null, baudratePreference: null, printerProfilePreference: '_default', autoconnect: false,
    },
  } });
  a.printer.conn = { state: 'Operational', port: '/dev/ttyUSB0', baudrate: 115200, printerProfile: 'mk3' };
  await a.printerProfiles.add({ id: 'mk3', name: 'MK3' }, { makeDefault: true });
  await a.config.patch({ serial: { port: '/dev/ttyUSB0', baudrate: 115200, autoconnect: true } });
  const r = await a.request('GET', '/api/connection', undefined, a.readonlyKey);
  const body = r.body as { current: unknown; options: Record<string, unknown> };
  assert.equal(r.status, 200);
  assert.deepEqual(body.current, { state: 'Operational', port: '/dev/ttyUSB0', baudrate: 115200, printerProfile: 'mk3' });
  assert.deepEqual(body.options.printerProfiles, [{ id: '_default', name: 'Default' }, { id: 'mk3', name: 'MK3' }]);
  assert.deepEqual([body.options.portPreference, body.options.baudratePreference, body.options.printerProfilePreference, body.options.autoconnect],
    ['/dev/ttyUSB0', 115200, 'mk3', true]);
});

test('connect hands the printer the checked port, baudrate and profile; settings fill what the body leaves out', async (t) => {
  const a = await injectApp(t);
  await a.printerProfiles.add({ id: 'mk3', name: 'MK3' });
  assert.deepEqual(await a.request('POST', '/api/connection', { command: 'connect', port: 'VIRTUAL', baudrate: 115200, printerProfile: 'mk3' }), ok);
  assert.deepEqual(await a.request('POST', '/api/connection', { command: 'connect', port: 'AUTO', baudrate: '0' }), ok);
  assert.deepEqual(await a.request('POST', '/api/connection', { command: 'connect' }), ok);
  await a.config.patch({ serial: { port: '/dev/ttyUSB0', baudrate: 250000 } });
  assert.deepEqual(await a.request('POST', '/api/connection', { command: 'connect', port: null }), ok);
  assert.deepEqual(a.printer.calls, [
    ['connect', { port: 'VIRTUAL', baudrate: 115200, profileId: 'mk3' }],
    ['connect', { port: 'AUTO', baudrate: 0, profileId: undefined }],
    ['connect', { port: undefined, baudrate: undefined, profileId: undefined }],
    ['connect', { port: '/dev/ttyUSB0', baudrate: 250000, profileId: undefined }],
  ]);
  // The port is checked against a fresh scan (the AUTO one is not looked up).
  assert.equal(a.ports.calls.length, 1);
  // Without save/autoconnect nothing was stored.
  assert.equal(a.config.current.printerProfiles.default, null);
});

test('connect with save and autoconnect stores the preferences', async (t) => {
  const a = await injectApp(t);
  await a.printerProfiles.add({ id: 'mk3', name: 'MK3' });
  assert.deepEqual(await a.request('POST', '/api/connection',
    { command: 'connect', port: 'VIRTUAL', baudrate: 250000, printerProfile: 'mk3', save: true, autoconnect: true }), ok);
  assert.deepEqual([a.config.current.serial.port, a.config.current.serial.baudrate, a.config.current.serial.autoconnect], ['VIRTUAL', 250000, true]);
  assert.equal(a.config.current.printerProfiles.default, 'mk3');
  assert.deepEqual(await a.request('POST', '/api/connection', { command: 'connect', port: '/dev/ttyUSB0', autoconnect: false }), ok);
  // autoconnect alone is stored; the port is not (no save).
  assert.deepEqual([a.config.current.serial.port, a.config.current.serial.autoconnect], ['VIRTUAL', false]);
  assert.deepEqual(a.printer.calls.map((c) => c[0]), ['connect', 'connect']);
});

test('a connect that fails later still answered 204 (the link comes up asynchronously)', async (t) => {
  const a = await injectApp(t);
  let rejected!: () => void;
  const seen = new Promise<void>((r) => { rejected = r; });
  a.printer.connect = async () => { rejected(); throw new Error('port busy'); };
  assert.deepEqual(await a.request('POST', '/api/connection', { command: 'connect', port: 'VIRTUAL' }), ok);
  await seen;
});

test('disconnect and fake_ack reach the printer', async (t) => {
  const a = await injectApp(t);
  assert.deepEqual(await a.request('POST', '/api/connection', { command: 'disconnect' }), ok);
  assert.deepEqual(await a.request('POST', '/api/connection', { command: 'fake_ack' }), ok);
  assert.deepEqual(a.printer.calls, [['disconnect'], ['fakeAck']]);
});

test('bad connection commands are 400 with the reason and reach nothing; a read-only key is 403', async (t) => {
  const a = await injectApp(t);
  const bad: Array<[unknown, string]> = [
    [{ command: 'connect', port: '/dev/nope' }, 'port is invalid'],
    [{ command: 'connect', port: 5 }, 'port is invalid'],
    [{ command: 'connect', port: 'VIRTUAL', baudrate: 1234 }, 'baudrate is invalid'],
    [{ command: 'connect', port: 'VIRTUAL', baudrate: 'fast' }, 'baudrate is invalid'],
    [{ command: 'connect', port: 'VIRTUAL', printerProfile: 'nope' }, 'printerProfile is invalid'],
    [{ command: 'connect', port: 'VIRTUAL', printerProfile: 3 }, 'printerProfile is invalid'],
    [{ command: 'frobnicate' }, 'command is invalid'],
    [{}, 'command is invalid'],
  ];
  for (const [body, error] of bad) {
    assert.deepEqual(await a.request('POST', '/api/connection', body), { status: 400, body: { error } }, JSON.stringify(body));
  }
  assert.deepEqual(await a.request('POST', '/api/connection', { command: 'disconnect' }, a.readonlyKey), FORBIDDEN);
  assert.deepEqual(a.printer.calls, []);
  assert.equal(a.config.current.serial.port, null);
});
