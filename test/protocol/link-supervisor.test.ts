// The link supervisor on its own, through the sender's interface (SupervisedSender) and a fake clock: the handshake's
// hellos and its give-up, the temperature poll (faster with a target set, none while a long command runs), and what a
// communication timeout does — the sender's remedy, what is said about it, and the consecutive-timeout limits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LinkSupervisor, type SupervisedSender, type SupervisorHost, type TimeoutRemedy } from '../../src/protocol/link-supervisor.ts';
import { DEFAULT_ENGINE_SETTINGS, type EngineSettings } from '../../src/protocol/settings.ts';
import { FakeTimers } from './scripted.ts';

function rig(over: Partial<EngineSettings> = {}) {
  const settings: EngineSettings = { ...DEFAULT_ENGINE_SETTINGS, ...over };
  const timers = new FakeTimers();
  const calls: string[] = [];
  const remedies: TimeoutRemedy[] = [];
  const sender = {
    attached: true as boolean, jobActive: false as boolean, linesInFlight: 0, longRunning: false as boolean,
    remedy: 'dropped' as TimeoutRemedy,
    enqueue: (cmd: string, opts?: { poll?: boolean }) => calls.push(`enqueue ${cmd}${opts?.poll ? ' poll' : ''}`),
    writeHello: (command: string) => calls.push(`hello ${command}`),
    recoverFromTimeout(): TimeoutRemedy { remedies.push(this.remedy); return this.remedy; },
  } satisfies SupervisedSender & { remedy: TimeoutRemedy };
  const state = { connecting: true, operational: false };
  const said: string[] = [];
  const host: SupervisorHost = {
    connecting: () => state.connecting, operational: () => state.operational,
    giveUp: () => { calls.push('giveUp'); state.connecting = false; },
    fail: (text, reason) => { said.push(`fail ${reason}: ${text}`); sender.attached = false; },
    message: (text) => said.push(text),
  };
  const supervisor = new LinkSupervisor(() => settings, timers, sender, host);
  const operational = () => { state.connecting = false; state.operational = true; supervisor.connected(); };
  return { supervisor, sender, timers, calls, remedies, said, operational, settings };
}

const count = (calls: string[], what: string) => calls.filter((c) => c === what).length;

test('handshake: two hellos at once, one more per communication timeout up to three, then it gives up', () => {
  const r = rig();
  r.supervisor.beginHandshake();
  assert.deepEqual(r.calls, ['hello M110 N0', 'hello M110 N0']);
  r.timers.advance(30_000);
  assert.equal(count(r.calls, 'hello M110 N0'), 3);
  r.timers.advance(30_000);
  assert.ok(r.calls.includes('giveUp'));
  assert.deepEqual(r.said, ['Timeout while trying to connect']);
  // `start` while connecting is answered with one more hello, once.
  const s = rig({ waitForStartOnConnect: true });
  s.supervisor.beginHandshake();
  assert.deepEqual(s.calls, []);
  assert.equal(s.supervisor.startWhileConnecting(), true);
  assert.equal(s.supervisor.startWhileConnecting(), false);
  assert.deepEqual(s.calls, ['hello M110 N0']);
  assert.equal(s.supervisor.sawStart, true);
});

test('temperature poll: every timeout.temperature seconds, faster with a target set while idle, none while a long command runs or the firmware reports by itself', () => {
  const r = rig();
  r.supervisor.beginDetected();
  r.operational();
  r.timers.advance(5_000);
  assert.equal(count(r.calls, 'enqueue M105 poll'), 1);
  r.supervisor.targets.reported(0, 210);
  r.timers.advance(2_000);
  assert.equal(count(r.calls, 'enqueue M105 poll'), 2, 'timeout.temperatureTargetSet (2 s) while a target is set');
  r.sender.jobActive = true;
  r.timers.advance(2_000);
  assert.equal(count(r.calls, 'enqueue M105 poll'), 2, 'printing: back to timeout.temperature');
  r.timers.advance(3_000);
  assert.equal(count(r.calls, 'enqueue M105 poll'), 3);
  r.sender.longRunning = true;
  r.timers.advance(10_000);
  assert.equal(count(r.calls, 'enqueue M105 poll'), 3, 'no poll behind a long command');
  r.sender.longRunning = false;
  r.supervisor.autoreportTemp = true;
  r.timers.advance(10_000);
  assert.equal(count(r.calls, 'enqueue M105 poll'), 3, 'no poll with M155 autoreport');
});

test('communication timeout: the sender recovers, the supervisor says what it did, and too many in a row fail the link', () => {
  const r = rig({ timeout: { ...DEFAULT_ENGINE_SETTINGS.timeout, temperature: 1000 } });
  r.supervisor.beginDetected();
  r.operational();
  assert.equal(r.supervisor.communicationTimeoutMs(), 1_001_000, 'never shorter than the poll interval');
  const quick = rig();
  quick.supervisor.busyConfirmed = true;
  assert.equal(quick.supervisor.communicationTimeoutMs(), 6000, 'communicationBusy (3 s), but not below the 5 s poll + 1');

  // Printing, an ok lost: the sender probes (its remedy), the supervisor says so.
  const p = rig();
  p.supervisor.beginDetected();
  p.operational();
  p.sender.jobActive = true;
  p.sender.linesInFlight = 1;
  p.sender.remedy = 'probe';
  // Replies keep coming (temperatures), only the ok is missing: not silent, but the ok is lost.
  for (let k = 0; k < 121; k++) { p.timers.advance(250); p.supervisor.lineReceived(); }
  assert.deepEqual(p.remedies, ['probe']);
  assert.deepEqual(p.said, ['Communication timeout while printing, trying to trigger response from printer']);

  // A held resend: the requested line goes out, and that is said.
  p.sender.remedy = 'resend';
  p.timers.advance(30_000);
  assert.equal(p.said.at(-1), 'Communication timeout during an active resend, resending requested line');

  // Idle, silent: limits.idle (2) timeouts in a row are tolerated, the third fails the link and ends the ticks.
  const i = rig();
  i.supervisor.beginDetected();
  i.operational();
  i.timers.advance(30_250);
  i.timers.advance(30_000);
  assert.deepEqual(i.remedies, ['dropped', 'dropped']);
  assert.deepEqual(i.said, []);
  i.timers.advance(30_000);
  assert.deepEqual(i.said, ['fail timeout: Too many consecutive timeouts, printer still connected and alive?']);
  assert.equal(i.remedies.length, 2, 'no remedy once the limit is passed');
  i.timers.advance(120_000);
  assert.equal(i.said.length, 1, 'the ticks stop with the link');

  // A line between timeouts starts the count again; a long command uses limits.long.
  const l = rig();
  l.supervisor.beginDetected();
  l.operational();
  l.sender.longRunning = true;
  l.sender.remedy = 'long';
  for (let k = 0; k < 5; k++) l.timers.advance(30_000);
  assert.deepEqual(l.said, [], 'limits.long (5) timeouts behind a long command');
  l.supervisor.lineReceived();
  for (let k = 0; k < 5; k++) l.timers.advance(30_000);
  assert.deepEqual(l.said, [], 'a received line resets the count');
  l.timers.advance(30_000);
  assert.equal(l.said.length, 1);
});
