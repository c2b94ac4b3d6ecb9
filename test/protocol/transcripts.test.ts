// Protocol engine against recorded firmware dialogues (test/fixtures/transcripts): connect, resends, errors, jobs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeRig, runTranscript, transcript } from './scripted.ts';

test('Marlin connect: hello, M115, capabilities, autoreport, busy keepalive', async () => {
  const rig = makeRig();
  await runTranscript(rig, transcript('marlin-connect.txt'));
  assert.equal(rig.engine.firmwareName.startsWith('Marlin'), true);
  assert.equal(rig.engine.autoreportTemp, true);
  assert.equal(rig.engine.emergencyParser, true);
  assert.equal(rig.engine.currentZ, 5);
  const temps = rig.events.filter(([n]) => n === 'temperatures');
  assert.equal(temps.length, 2);
  assert.ok(rig.events.some(([n]) => n === 'position'));
});
