// G-code-triggered events (Home, Dwelling, Waiting, Alert, …) fire when their command is sent, from the API and from a job.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer, waitFor } from './helpers.ts';
import { jobCommand, recorder, uploadFile } from './job/helpers.ts';

const TRIGGERS: Array<[string, string]> = [
  ['G28 X', 'Home'], ['M80', 'PowerOn'], ['M81', 'PowerOff'], ['G4 P1', 'Dwelling'], ['M226 P1 S0', 'Waiting'],
  ['M245', 'Cooling'], ['M300 S440 P10', 'Alert'], ['M240', 'Conveyor'], ['M40', 'Eject'], ['M600', 'FilamentChange'],
  ['M701', 'FilamentChange'], ['M702', 'FilamentChange'],
];

test('each triggering command sent from the API fires its event once, after it is sent; M0 is blocked and fires none', async (t) => {
  const s = await connectedServer(t);
  const rec = recorder(s);
  for (const [cmd, name] of TRIGGERS) {
    const before = rec.names().filter((n) => n === name).length;
    const r = await s.api('/api/printer/command', { method: 'POST', json: { command: cmd } });
    assert.equal(r.status, 204, cmd);
    await waitFor(`${name} after ${cmd}`, () => rec.names().filter((n) => n === name).length === before + 1 || undefined, 5000);
    // The terminal hears from the link thread in batches, so the line may show a moment after the event.
    await waitFor(`${cmd} reached the printer`, () => s.printer.terminal().some((l) => l === `Send: ${cmd}`) || undefined, 5000);
    assert.deepEqual(rec.events.filter((e) => e.name === name).at(-1)?.payload, {});
  }
  // Ordinary commands fire none of them.
  const count = rec.events.length;
  await s.api('/api/printer/command', { method: 'POST', json: { commands: ['G1 X5', 'M105', 'G40'] } });
  await waitFor('G40 sent', () => s.printer.terminal().some((l) => l === 'Send: G40') || undefined, 5000);
  const names = new Set(TRIGGERS.map(([, n]) => n));
  assert.deepEqual(rec.events.slice(count).filter((e) => names.has(e.name)), []);
  // M0 is in serial.blockedCommands by default: suppressed, so no Waiting.
  const waiting = rec.names().filter((n) => n === 'Waiting').length;
  await s.api('/api/printer/command', { method: 'POST', json: { command: 'M0' } });
  await waitFor('CommandSuppressed', () => rec.events.some((e) => e.name === 'CommandSuppressed' && e.payload.command === 'M0') || undefined, 5000);
  assert.equal(rec.names().filter((n) => n === 'Waiting').length, waiting);
});

test('a streamed job\'s lines fire the same events', async (t) => {
  const s = await connectedServer(t);
  const rec = recorder(s);
  const gcode = ['G28', 'G1 Z0.3 F3000', 'G4 P1', 'M300 S440 P5', 'G1 X10 Y10 E0.5', ''].join('\n');
  assert.equal((await uploadFile(s, 'events.gcode', gcode)).status, 201);
  const sel = await s.api('/api/files/local/events.gcode', { method: 'POST', json: { command: 'select' } });
  assert.equal(sel.status, 204);
  assert.equal(await jobCommand(s, 'start'), 204);
  await waitFor('PrintDone', () => rec.names().includes('PrintDone') || undefined, 15_000);
  const between = rec.names().slice(rec.names().indexOf('PrintStarted'), rec.names().indexOf('PrintDone'));
  assert.deepEqual(between.filter((n) => n === 'Home' || n === 'Dwelling' || n === 'Alert'), ['Home', 'Dwelling', 'Alert']);
});
