// /api/job through app.inject: what the route hands the job runner (a recording fake), and the real JobRunner's
// refusals over a fake printer (nothing selected, no job, not operational, busy) with their texts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FORBIDDEN, injectApp } from '../../helpers/inject-app.ts';
import { conflict } from '../../../src/core/errors.ts';

const ok = { status: 204, body: '' };
const post = (a: Awaited<ReturnType<typeof injectApp>>, body: unknown, key?: string) => a.request('POST', '/api/job', body, key);

test('each job command reaches the runner with its action and the caller', async (t) => {
  const a = await injectApp(t);
  for (const body of [
    { command: 'start' }, { command: 'cancel' }, { command: 'restart' }, { command: 'pause' },
    { command: 'pause', action: 'pause' }, { command: 'pause', action: 'resume' }, { command: 'pause', action: 'toggle' },
  ]) assert.deepEqual(await post(a, body), ok, JSON.stringify(body));
  // The global API key acts as `_api`.
  assert.deepEqual(a.jobs.calls, [
    ['command', 'start', { action: undefined, user: '_api' }], ['command', 'cancel', { action: undefined, user: '_api' }],
    ['command', 'restart', { action: undefined, user: '_api' }], ['command', 'pause', { action: undefined, user: '_api' }],
    ['command', 'pause', { action: 'pause', user: '_api' }], ['command', 'pause', { action: 'resume', user: '_api' }],
    ['command', 'pause', { action: 'toggle', user: '_api' }],
  ]);
});

test("the runner's refusal is the answer; bodies without a command never reach it; PRINT is needed", async (t) => {
  const a = await injectApp(t);
  a.jobs.commandError = conflict('No file selected');
  assert.deepEqual(await post(a, { command: 'start' }), { status: 409, body: { error: 'No file selected' } });
  assert.equal(a.jobs.calls.length, 1);
  a.jobs.commandError = undefined;
  assert.deepEqual(await post(a, {}), { status: 400, body: { error: 'command is invalid' } });
  assert.deepEqual(await post(a, { action: 'pause' }), { status: 400, body: { error: 'command is invalid' } });
  assert.deepEqual(await post(a, 'start'), { status: 400, body: { error: 'Invalid body: must be object' } });
  assert.deepEqual(await post(a, { command: 'start' }, a.readonlyKey), FORBIDDEN);
  assert.equal(a.jobs.calls.length, 1);
});

test('real runner, printer not operational: every command is 409 "Printer is not operational"', async (t) => {
  const a = await injectApp(t, { realJobRunner: true });
  a.printer.operational = false;
  for (const command of ['start', 'cancel', 'restart', 'pause']) {
    assert.deepEqual(await post(a, { command }), { status: 409, body: { error: 'Printer is not operational' } }, command);
  }
  // Malformed commands are 400 first, whatever the printer.
  assert.deepEqual(await post(a, { command: 'frobnicate' }), { status: 400, body: { error: 'command is invalid' } });
  assert.deepEqual(await post(a, { command: 'pause', action: 'sideways' }), { status: 400, body: { error: 'action is invalid' } });
  // Bodies are not coerced (#58 item 10): a number is refused by the body schema, naming the field.
  assert.deepEqual(await post(a, { command: 5 }), { status: 400, body: { error: 'Invalid body field command: must be string' } });
});

test('real runner, operational with nothing selected or running: the 409 texts; a cancel stops an SD upload', async (t) => {
  const a = await injectApp(t, { realJobRunner: true });
  assert.deepEqual(await post(a, { command: 'start' }), { status: 409, body: { error: 'No file selected' } });
  assert.deepEqual(await post(a, { command: 'cancel' }), { status: 409, body: { error: 'No active job to cancel' } });
  assert.deepEqual(await post(a, { command: 'restart' }), { status: 409, body: { error: 'Can only restart a paused job' } });
  for (const action of [undefined, 'pause', 'resume', 'toggle']) {
    assert.deepEqual(await post(a, { command: 'pause', action }), { status: 409, body: { error: 'No active job to pause or resume' } }, String(action));
  }
  assert.deepEqual(a.printer.calls, [['cancelTransfer']]);
  a.printer.transferring = true;
  assert.deepEqual(await post(a, { command: 'cancel' }), ok);
  assert.deepEqual(a.printer.calls, [['cancelTransfer'], ['cancelTransfer']]);
  // Printing (e.g. from the printer's own SD menu): start is refused before the selection is looked at.
  a.printer.busy = true;
  assert.deepEqual(await post(a, { command: 'start' }), { status: 409, body: { error: 'Printer is already printing' } });
});

test('real runner: GET /api/job with nothing selected has the empty document, the printer state text and its error', async (t) => {
  const a = await injectApp(t, { realJobRunner: true });
  const empty = {
    job: { file: { name: null, path: null, origin: null, size: null, date: null }, estimatedPrintTime: null, lastPrintTime: null,
      filament: { length: null, volume: null }, user: null },
    progress: { completion: null, filepos: null, printTime: null, printTimeLeft: null, printTimeOrigin: null },
  };
  assert.deepEqual(await a.request('GET', '/api/job', undefined, a.readonlyKey), { status: 200, body: { ...empty, state: 'Operational' } });
  a.printer.operational = false;
  assert.deepEqual(await a.request('GET', '/api/job'), { status: 200, body: { ...empty, state: 'Offline' } });
  a.printer.error = 'Thermal Runaway';
  assert.deepEqual(await a.request('GET', '/api/job'), { status: 200, body: { ...empty, state: 'Offline', error: 'Thermal Runaway' } });
});
