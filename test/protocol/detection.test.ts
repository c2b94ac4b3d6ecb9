// Port/baudrate auto-detection with scripted transports: silent candidates are skipped, the first that answers wins.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ScriptedTransport, flush, makeRig } from './scripted.ts';

function scriptedFactory(answers: Record<string, string | null>) {
  const made: Record<string, ScriptedTransport> = {};
  const create = (port: string, baudrate: number) => {
    const key = `${port}@${baudrate}`;
    const t = new ScriptedTransport();
    made[key] = t;
    let answer = answers[key] ?? null;
    const write = t.write.bind(t);
    t.write = async (line: string) => {
      await write(line);
      // The firmware answers the first hello only; later lines are the regular dialogue.
      if (answer !== null && line.includes('M110')) {
        const a = answer;
        answer = null;
        queueMicrotask(() => t.reply(a));
      }
    };
    return t;
  };
  return { create, made };
}

test('auto-detection: silent candidates are tried three times, then the one answering with start is kept', async () => {
  const rig = makeRig({ timeout: { ...makeRig().engine.settings.timeout, detectionConsecutive: 2 } });
  const { create, made } = scriptedFactory({ '/dev/ttyUSB0@250000': 'start' });
  const done = rig.engine.connectAuto([{ port: '/dev/ttyUSB0', baudrate: 115200 }, { port: '/dev/ttyUSB0', baudrate: 250000 }], create);
  for (let i = 0; i < 10; i++) {
    await flush();
    rig.timers.advance(2000);
  }
  await done;
  assert.equal(rig.engine.state, 'OPERATIONAL');
  assert.equal(rig.engine.connectedBaudrate, 250000);
  assert.deepEqual(made['/dev/ttyUSB0@115200'].written, ['', 'N0 M110 N0*125', '', 'N0 M110 N0*125', '', 'N0 M110 N0*125']);
  assert.equal(made['/dev/ttyUSB0@115200'].closed, true);
  assert.equal(made['/dev/ttyUSB0@250000'].closed, false);
  assert.deepEqual(rig.states, ['DETECT_SERIAL', 'OPERATIONAL']);
});

test('auto-detection: nobody answers → Error, then Offline after error', async () => {
  const rig = makeRig();
  const { create } = scriptedFactory({});
  const done = rig.engine.connectAuto([{ port: '/dev/ttyACM0', baudrate: 115200 }], create);
  for (let i = 0; i < 5; i++) {
    await flush();
    rig.timers.advance(2000);
  }
  await done;
  assert.deepEqual(rig.states, ['DETECT_SERIAL', 'ERROR', 'CLOSED_WITH_ERROR']);
  assert.match(rig.engine.error, /no working port\/baudrate combination/);
});
