// The one job lifecycle: its transition table, what the printer shows, and how both drivers end a job.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JOB_TRANSITIONS, JobLifecycle, canJobTransition, displayState, type JobState } from '../../../src/printer/job/job-lifecycle.ts';

test('moves follow the table; refused moves change nothing and are not announced', () => {
  const seen: JobState[] = [];
  const l = new JobLifecycle((s) => seen.push(s));
  assert.equal(l.move('PAUSED'), false);
  assert.equal(l.move('STARTING'), true);
  assert.equal(l.move('STARTING'), true, 'staying is always allowed');
  assert.equal(l.move('FINISHING'), false);
  assert.equal(l.move('PRINTING'), true);
  assert.equal(l.move('PAUSING'), true);
  assert.equal(l.move('IDLE'), false, 'a pausing job does not just vanish');
  assert.deepEqual(seen, ['STARTING', 'PRINTING', 'PAUSING']);
  for (const [from, tos] of Object.entries(JOB_TRANSITIONS)) for (const to of tos) assert.ok(canJobTransition(from as JobState, to));
});

test('end goes back to IDLE from anywhere, announced only while allowed; reset is silent', () => {
  let up = true;
  const seen: JobState[] = [];
  const l = new JobLifecycle((s) => seen.push(s), () => up);
  l.move('PRINTING');
  l.move('PAUSED');
  l.end();
  assert.equal(l.state, 'IDLE');
  assert.deepEqual(seen, ['PRINTING', 'PAUSED', 'IDLE']);
  l.move('PRINTING');
  up = false;
  assert.equal(l.move('PAUSING'), false, 'no moves while the link is down');
  l.end();
  assert.equal(l.state, 'IDLE');
  assert.deepEqual(seen, ['PRINTING', 'PAUSED', 'IDLE', 'PRINTING']);
  up = true;
  l.move('STARTING');
  l.reset();
  assert.equal(l.state, 'IDLE');
});

test('the printer shows the job state only while the link is Operational', () => {
  assert.equal(displayState('OPERATIONAL', 'IDLE'), 'OPERATIONAL');
  assert.equal(displayState('OPERATIONAL', 'PAUSED'), 'PAUSED');
  assert.equal(displayState('ERROR', 'PRINTING'), 'ERROR');
});
