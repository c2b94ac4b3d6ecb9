// /api/printer/tool, /bed, /chamber through app.inject with a fake printer: the calls it receives, the refusals and
// their texts, and the GET shapes built from its readings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FORBIDDEN, injectApp, type InjectApp } from '../../helpers/inject-app.ts';
import { builtinDefaultProfile } from '../../../src/printer/profiles/printer-profile-shape.ts';

const notOperational = { status: 409, body: { error: 'Printer is not operational' } };
const busy = { status: 409, body: { error: 'Printer is currently printing' } };
const ok = { status: 204, body: '' };

/** A printer with two tools, a heated bed and chamber, and readings for all of them. */
function twoToolsAllHeaters(a: InjectApp): void {
  const base = builtinDefaultProfile();
  a.printer.linkProfile = { ...base, heatedChamber: true, extruder: { ...base.extruder, count: 2 } };
  a.printer.temps = {
    tool0: { actual: 201.5, target: 200, offset: 0 }, tool1: { actual: 24, target: 0, offset: 5 },
    bed: { actual: 59.8, target: 60, offset: -2 }, chamber: { actual: 30, target: 35, offset: 0 },
  };
  a.printer.history = [
    { time: 100, tool0: { actual: 150, target: 200 }, tool1: { actual: 24, target: 0 }, bed: { actual: 40, target: 60 } },
    { time: 101, tool0: { actual: 180, target: 200 }, tool1: { actual: 24, target: 0 }, bed: { actual: 50, target: 60 }, chamber: { actual: 29, target: 35 } },
    { time: 102, tool0: { actual: 201.5, target: 200 }, tool1: { actual: 24, target: 0 }, bed: { actual: 59.8, target: 60 }, chamber: { actual: 30, target: 35 } },
  ];
}

test('tool commands: target, offset, select, extrude, flowrate reach the printer as checked values', async (t) => {
  const a = await injectApp(t);
  twoToolsAllHeaters(a);
  const post = (body: unknown) => a.request('POST', '/api/printer/tool', body);
  assert.deepEqual(await post({ command: 'target', targets: { tool0: 200, tool1: 180.5 } }), ok);
  assert.deepEqual(await post({ command: 'offset', offsets: { tool0: 10, tool1: -50 } }), ok);
  assert.deepEqual(await post({ command: 'select', tool: 'tool1' }), ok);
  assert.deepEqual(await post({ command: 'extrude', amount: 5 }), ok);
  assert.deepEqual(await post({ command: 'extrude', amount: -2, speed: 1200 }), ok);
  assert.deepEqual(await post({ command: 'flowrate', factor: 1.1 }), ok);
  assert.deepEqual(await post({ command: 'flowrate', factor: 90 }), ok);
  assert.deepEqual(a.printer.calls, [
    ['setTemperature', 'tool0', 200], ['setTemperature', 'tool1', 180.5],
    ['setTemperatureOffsets', { tool0: 10, tool1: -50 }],
    ['selectTool', 1],
    ['extrude', 5, undefined], ['extrude', -2, 1200],
    ['flowRate', 110], ['flowRate', 90],
  ]);
});

test('tool: bad bodies are 400 with the reason; a bad target among good ones sets none', async (t) => {
  const a = await injectApp(t);
  const bad: Array<[unknown, string]> = [
    [{ command: 'target', targets: { tool0: 200, tool1: 200 } }, 'Invalid tool: "tool1"'],
    [{ command: 'target', targets: { hotend: 200 } }, 'Invalid tool: "hotend"'],
    [{ command: 'target', targets: { tool0: 'hot' } }, 'Not a number or out of range for tool0: "hot"'],
    [{ command: 'target', targets: { tool0: 1501 } }, 'Not a number or out of range for tool0: 1501'],
    [{ command: 'target', targets: 200 }, 'targets is invalid'],
    [{ command: 'target' }, 'Mandatory parameters missing'],
    [{ command: 'offset', offsets: { tool0: 51 } }, 'Offset not in range [-50, 50] for tool0: 51'],
    [{ command: 'offset', offsets: { bed: 5 } }, 'Invalid tool: "bed"'],
    [{ command: 'select', tool: 'tool1' }, 'Invalid tool: "tool1"'],
    [{ command: 'select', tool: 0 }, 'Invalid tool: 0'],
    [{ command: 'extrude', amount: 'lots' }, 'Not a number for extrusion amount: "lots"'],
    [{ command: 'extrude', amount: 1, speed: -5 }, 'speed is invalid: -5'],
    [{ command: 'extrude' }, 'Mandatory parameters missing'],
    [{ command: 'flowrate', factor: 130 }, 'factor is invalid: 130'],
    [{ command: 'flowrate', factor: 0.5 }, 'factor is invalid: 0.5'],
    [{ command: 'melt' }, 'command is invalid'],
    [{}, 'command is invalid'],
  ];
  for (const [body, error] of bad) {
    assert.deepEqual(await a.request('POST', '/api/printer/tool', body), { status: 400, body: { error } }, JSON.stringify(body));
  }
  assert.deepEqual(a.printer.calls, []);
});

test('tool while printing: select and extrude are 409, targets and flow rate still go through', async (t) => {
  const a = await injectApp(t);
  a.printer.busy = true;
  assert.deepEqual(await a.request('POST', '/api/printer/tool', { command: 'select', tool: 'tool0' }), busy);
  assert.deepEqual(await a.request('POST', '/api/printer/tool', { command: 'extrude', amount: 1 }), busy);
  assert.deepEqual(await a.request('POST', '/api/printer/tool', { command: 'target', targets: { tool0: 190 } }), ok);
  assert.deepEqual(await a.request('POST', '/api/printer/tool', { command: 'flowrate', factor: 100 }), ok);
  assert.deepEqual(a.printer.calls, [['setTemperature', 'tool0', 190], ['flowRate', 100]]);
});

test('GET tool: the tool readings only; history keeps only tool keys and honours limit', async (t) => {
  const a = await injectApp(t);
  twoToolsAllHeaters(a);
  assert.deepEqual(await a.request('GET', '/api/printer/tool'), { status: 200, body: {
    tool0: { actual: 201.5, target: 200, offset: 0 }, tool1: { actual: 24, target: 0, offset: 5 },
  } });
  const withHistory = await a.request('GET', '/api/printer/tool?history=true&limit=2', undefined, a.readonlyKey);
  assert.equal(withHistory.status, 200);
  assert.deepEqual((withHistory.body as { history: unknown }).history, [
    { tool0: { actual: 180, target: 200 }, tool1: { actual: 24, target: 0 } },
    { tool0: { actual: 201.5, target: 200 }, tool1: { actual: 24, target: 0 } },
  ]);
  assert.deepEqual(await a.request('GET', '/api/printer/tool?history=true&limit=x'), { status: 400, body: { error: 'limit is invalid' } });
});

test('bed and chamber: target and offset calls, GET shapes with history, 400 texts', async (t) => {
  const a = await injectApp(t);
  twoToolsAllHeaters(a);
  for (const heater of ['bed', 'chamber'] as const) {
    const url = `/api/printer/${heater}`;
    assert.deepEqual(await a.request('POST', url, { command: 'target', target: 60 }), ok);
    assert.deepEqual(await a.request('POST', url, { command: 'offset', offset: -5 }), ok);
    for (const [body, error] of [
      [{ command: 'target', target: 'x' }, 'target is invalid'], [{ command: 'target', target: -1 }, 'target is invalid'],
      [{ command: 'offset', offset: 60 }, 'offset is invalid'], [{ command: 'target' }, 'Mandatory parameters missing'],
      [{ command: 'boil' }, 'command is invalid'],
    ] as Array<[unknown, string]>) {
      assert.deepEqual(await a.request('POST', url, body), { status: 400, body: { error } }, `${heater} ${JSON.stringify(body)}`);
    }
  }
  assert.deepEqual(a.printer.calls, [
    ['setTemperature', 'bed', 60], ['setTemperatureOffsets', { bed: -5 }],
    ['setTemperature', 'chamber', 60], ['setTemperatureOffsets', { chamber: -5 }],
  ]);
  assert.deepEqual(await a.request('GET', '/api/printer/bed'), { status: 200, body: { bed: { actual: 59.8, target: 60, offset: -2 } } });
  // History points without the heater (the chamber's first one) are left out; `time` is not sent.
  assert.deepEqual(await a.request('GET', '/api/printer/chamber?history=true'), { status: 200, body: {
    chamber: { actual: 30, target: 35, offset: 0 },
    history: [{ chamber: { actual: 29, target: 35 } }, { chamber: { actual: 30, target: 35 } }],
  } });
});

test('a profile without the heater: 409 with its text; not operational: 409 on every heater route', async (t) => {
  const a = await injectApp(t);
  // The default profile: one tool, a heated bed, no chamber.
  const noChamber = { status: 409, body: { error: 'Printer does not have a heated chamber' } };
  assert.deepEqual(await a.request('GET', '/api/printer/chamber'), noChamber);
  assert.deepEqual(await a.request('POST', '/api/printer/chamber', { command: 'target', target: 40 }), noChamber);
  a.printer.linkProfile = { ...builtinDefaultProfile(), heatedBed: false };
  const noBed = { status: 409, body: { error: 'Printer does not have a heated bed' } };
  assert.deepEqual(await a.request('GET', '/api/printer/bed'), noBed);
  assert.deepEqual(await a.request('POST', '/api/printer/bed', { command: 'target', target: 60 }), noBed);
  a.printer.operational = false;
  for (const url of ['/api/printer/tool', '/api/printer/bed', '/api/printer/chamber']) {
    assert.deepEqual(await a.request('GET', url), notOperational, url);
    assert.deepEqual(await a.request('POST', url, { command: 'target', target: 1, targets: { tool0: 1 } }), notOperational, url);
  }
  assert.deepEqual(a.printer.calls, []);
});

test('heater commands need CONTROL: a read-only key is 403 and reads still work', async (t) => {
  const a = await injectApp(t);
  assert.equal((await a.request('GET', '/api/printer/bed', undefined, a.readonlyKey)).status, 200);
  for (const url of ['/api/printer/tool', '/api/printer/bed']) {
    assert.deepEqual(await a.request('POST', url, { command: 'target', target: 1, targets: { tool0: 1 } }, a.readonlyKey), FORBIDDEN, url);
  }
  assert.deepEqual(a.printer.calls, []);
});
