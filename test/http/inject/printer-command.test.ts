// /api/printer/command through app.inject with a fake printer: the exact lines it receives, scripts, and the refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FORBIDDEN, injectApp } from '../../helpers/inject-app.ts';

test('commands reach the printer line by line, in order; parameters are filled in', async (t) => {
  const a = await injectApp(t);
  assert.deepEqual(await a.request('POST', '/api/printer/command', { command: 'M117 single' }), { status: 204, body: '' });
  assert.deepEqual(await a.request('POST', '/api/printer/command', { commands: ['M18', 'M106 S0'] }), { status: 204, body: '' });
  assert.deepEqual(await a.request('POST', '/api/printer/command', { command: 'M104 S%(temp)s', parameters: { temp: 180 } }), { status: 204, body: '' });
  // A command holding newlines is several lines.
  assert.deepEqual(await a.request('POST', '/api/printer/command', { commands: ['G28\nG1 Z5', 'M400'] }), { status: 204, body: '' });
  assert.deepEqual(a.printer.lines, ['M117 single', 'M18', 'M106 S0', 'M104 S180', 'G28', 'G1 Z5', 'M400']);
  assert.deepEqual(a.printer.calls.map((c) => c[0]), ['clientCommands', 'clientCommands', 'clientCommands', 'clientCommands']);
});

test('a script runs by name with its context and parameters; an unknown one is 404', async (t) => {
  const a = await injectApp(t);
  const r = await a.request('POST', '/api/printer/command', { script: 'afterPrintCancelled', context: { a: 1 }, parameters: { p: 2 } });
  assert.deepEqual(r, { status: 204, body: '' });
  assert.deepEqual(a.printer.calls, [['runScript', 'afterPrintCancelled', { a: 1, parameters: { p: 2 }, context: { a: 1 } }]]);
  assert.deepEqual(await a.request('POST', '/api/printer/command', { script: 'noSuchScript' }), { status: 404, body: { error: 'Unknown script' } });
  assert.deepEqual(a.printer.lines, []);
});

test('bad bodies are 400 with the reason, and nothing reaches the printer', async (t) => {
  const a = await injectApp(t);
  const bad: Array<[unknown, string]> = [
    [{ command: 'M1', commands: ['M2'] }, "'command' and 'commands' are mutually exclusive"],
    [{ command: 'M1', script: 'x' }, "'command'/'commands' and 'script' are mutually exclusive"],
    // All three: the command/commands clash is the one reported.
    [{ command: 'M1', commands: ['M2'], script: 'x' }, "'command' and 'commands' are mutually exclusive"],
    [{ commands: ['M1'], script: 'x' }, "'command'/'commands' and 'script' are mutually exclusive"],
    [{}, "Need one of 'command', 'commands' or 'script'"],
    [{ commands: 'M18' }, 'commands is invalid'],
    [{ commands: ['M18', 5] }, 'commands is invalid'],
    [{ command: 7 }, 'command is invalid'],
    [{ script: 7 }, 'script is invalid'],
    [{ command: 'M1', parameters: [1] }, 'parameters is invalid'],
  ];
  for (const [body, error] of bad) {
    assert.deepEqual(await a.request('POST', '/api/printer/command', body), { status: 400, body: { error } }, JSON.stringify(body));
  }
  assert.deepEqual(a.printer.calls, []);
});

test('not operational: 409 before the body is looked at; no CONTROL permission: 403', async (t) => {
  const a = await injectApp(t);
  a.printer.operational = false;
  for (const body of [{ command: 'M105' }, { script: 'afterPrintCancelled' }, {}]) {
    assert.deepEqual(await a.request('POST', '/api/printer/command', body), { status: 409, body: { error: 'Printer is not operational' } });
  }
  a.printer.operational = true;
  assert.deepEqual(await a.request('POST', '/api/printer/command', { command: 'M105' }, a.readonlyKey), FORBIDDEN);
  assert.deepEqual(a.printer.calls, []);
});
