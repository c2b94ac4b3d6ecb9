// Protocol engine against recorded firmware dialogues (test/fixtures/transcripts): connect, resends, errors, jobs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeRig, runTranscript, transcript, type StreamingScriptedTransport } from './scripted.ts';

test('Marlin connect: hello, M115, capabilities, autoreport, busy keepalive', async () => {
  const rig = makeRig();
  await runTranscript(rig, transcript('marlin-connect.txt'));
  assert.equal(rig.engine.firmwareName.startsWith('Marlin'), true);
  assert.equal(rig.engine.autoreportTemp, true);
  assert.equal(rig.engine.emergencyParser, true);
  assert.equal(rig.engine.autoreportSd, true);
  const list = rig.events.find(([n]) => n === 'sdList')![1] as Array<{ name: string; longName: string | null }>;
  assert.deepEqual(list.map((e) => [e.name, e.longName]), [['CUBE~1.GCO', null], ['BENCHY~1.GCO', 'Benchy Boat.gcode']]);
  assert.equal(rig.rules.currentZ, 5);
  const temps = rig.events.filter(([n]) => n === 'temperatures');
  assert.equal(temps.length, 2);
  assert.ok(rig.events.some(([n]) => n === 'position'));
});

const cases: Array<{ file: string; settings?: Record<string, unknown>; check?: (rig: ReturnType<typeof makeRig>) => void }> = [
  { file: 'marlin-resend-pingpong.txt', check: (r) => assert.equal(r.engine.resendStats().count, 1) },
  { file: 'marlin-resend-storm.txt', settings: { rxBufferSize: 48 }, check: (r) => assert.equal(r.engine.flowControl, 'send-ahead') },
  { file: 'marlin-resend-without-ok.txt' },
  { file: 'marlin-resend-loop.txt', check: (r) => assert.ok(r.events.some(([n, p]) => n === 'error' && String((p as unknown[])[1]) === 'resend_loop')) },
  { file: 'marlin-lost-ok.txt' },
  { file: 'marlin-busy-homing.txt' },
  {
    file: 'marlin-thermal-runaway.txt',
    check: (r) => {
      assert.match(r.engine.error, /Thermal Runaway.*Printer halted/);
      assert.deepEqual(r.states.slice(-2), ['ERROR', 'CLOSED_WITH_ERROR']);
    },
  },
  { file: 'cable-pulled.txt', check: (r) => assert.match(r.engine.error, /ENXIO/) },
  { file: 'emergency-m112.txt', check: (r) => assert.ok(r.events.some(([n]) => n === 'emergencyStop')) },
  { file: 'cancel-during-heatup.txt' },
  { file: 'cancel-without-emergency-parser.txt' },
  { file: 'advanced-ok.txt', check: (r) => assert.equal(r.engine.flowControl, 'advanced-ok') },
  {
    file: 'klipper.txt',
    check: (r) => {
      assert.ok(r.events.some(([n, p]) => n === 'firmwareError' && (p as unknown[])[1] === false));
      const t = r.events.filter(([n]) => n === 'temperatures').at(-1)![1] as unknown[];
      const temps = t[0] as { tools: Map<number, unknown>; bed: unknown };
      assert.deepEqual(temps.tools.get(0), { actual: 22.9, target: 0 });
      assert.deepEqual(temps.bed, { actual: 23, target: 0 });
    },
  },
  { file: 'rrf.txt', check: (r) => assert.equal(r.engine.state, 'OPERATIONAL') },
  {
    file: 'prusa.txt',
    check: (r) => {
      const t = r.events.filter(([n]) => n === 'temperatures').at(-1)![1] as unknown[];
      const temps = t[0] as { custom: Map<string, unknown> };
      assert.deepEqual(temps.custom.get('A'), { actual: 38.5, target: null });
    },
  },
  { file: 'printer-reset.txt', check: (r) => assert.ok(r.events.some(([n]) => n === 'printerReset')) },
  { file: 'temperature-offsets.txt' },
  { file: 'firmware-error-cancels.txt', settings: { disconnectOnErrors: false } },
  { file: 'firmware-error-ignored.txt', settings: { ignoreErrorsFromFirmware: true }, check: (r) => assert.ok(r.events.some(([n]) => n === 'firmwareError')) },
  { file: 'pausing-command.txt', check: (r) => assert.ok(r.events.some(([n]) => n === 'commandSuppressed')) },
  { file: 'wait-recovers-lost-ok.txt' },
  { file: 'action-pause-resume.txt', check: (r) => assert.ok(r.events.some(([n]) => n === 'position')) },
  { file: 'cancel-then-new-job.txt' },
  { file: 'cancel-then-new-job.txt', settings: { rxBufferSize: 20 } },
  { file: 'command-during-job.txt' },
];

for (const c of cases) {
  const name = `transcript ${c.file}${c.settings ? ` ${JSON.stringify(c.settings)}` : ''}`;
  test(name, async () => {
    const rig = makeRig(c.settings);
    await runTranscript(rig, transcript(c.file));
    c.check?.(rig);
  });
  // The same dialogue through the serial port's streaming path (coalesced writes, job lines framed ahead).
  test(`${name} (streaming transport)`, async () => {
    const rig = makeRig(c.settings, {}, true);
    await runTranscript(rig, transcript(c.file));
    c.check?.(rig);
    assert.ok((rig.transport as StreamingScriptedTransport).sends > 0);
  });
}

test('the engine tells the transport it waits on the reply after ping-pong job lines, not in send-ahead or when idle', async () => {
  const pingPong = makeRig({}, {}, true);
  await runTranscript(pingPong, transcript('marlin-resend-pingpong.txt'));
  const pp = pingPong.transport as StreamingScriptedTransport;
  // Not after the connect dialogue; after every job line written (5, one of them resent) but not the end script's M400.
  assert.ok(pp.awaits >= 4 && pp.awaits <= 6, `awaits: ${pp.awaits}`);
  const sendAhead = makeRig({ rxBufferSize: 48 }, {}, true);
  await runTranscript(sendAhead, transcript('marlin-resend-storm.txt'));
  assert.equal((sendAhead.transport as StreamingScriptedTransport).awaits, 0);
});
