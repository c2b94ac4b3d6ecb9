// The one job state machine: its transition table, what the printer shows, how both drivers end a job, the kind of
// job under way, and (fast-check) that no sequence of moves leaves the table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { JOB_TRANSITIONS, JobLifecycle, canJobTransition, displayState, stateText, type JobKind, type JobState } from '../../../src/printer/job/job-lifecycle.ts';

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

test('the kind of job is known from its first move until it is back in IDLE, and sets the state texts', () => {
  const l = new JobLifecycle();
  l.begin('sd');
  assert.equal(l.kind, 'sd');
  l.move('PRINTING');
  assert.equal(stateText(displayState('OPERATIONAL', l.state), l.kind), 'Printing from SD');
  l.begin('transfer');
  assert.equal(l.kind, 'sd', 'a job under way keeps its kind');
  l.move('PAUSED');
  assert.equal(stateText('PAUSED', l.kind), 'Paused');
  l.end();
  assert.equal(l.kind, null);
  assert.equal(stateText('OPERATIONAL', l.kind), 'Operational');
  l.begin('transfer');
  l.move('STARTING');
  assert.equal(stateText('STARTING', l.kind), 'Starting to send file to SD');
  l.reset();
  assert.equal(l.kind, null);
  l.begin('print');
  assert.equal(l.move('PAUSED'), false);
  assert.equal(l.kind, null, 'a refused first move forgets the kind');
});

// Every sequence of what the drivers and the link do to the machine: begin, move, end, reset, the link going up and down.
const STATES = Object.keys(JOB_TRANSITIONS) as JobState[];
const KINDS: JobKind[] = ['print', 'transfer', 'sd'];
type Op = { op: 'begin'; kind: JobKind } | { op: 'move'; to: JobState } | { op: 'end' } | { op: 'reset' } | { op: 'link'; up: boolean };
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.constantFrom(...KINDS).map((kind) => ({ op: 'begin' as const, kind })),
  fc.constantFrom(...STATES).map((to) => ({ op: 'move' as const, to })),
  fc.constant({ op: 'end' as const }),
  fc.constant({ op: 'reset' as const }),
  fc.boolean().map((up) => ({ op: 'link' as const, up })),
);

test('property: every change follows the table or ends the job, is announced once, and the kind lives exactly as long as the job', () => {
  fc.assert(fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
    let up = true;
    const announced: JobState[] = [];
    const l = new JobLifecycle((s) => announced.push(s), () => up);
    let begun: JobKind | null = null;
    for (const o of ops) {
      const from: JobState = l.state;
      const kindBefore: JobKind | null = l.kind;
      const heard = announced.length;
      switch (o.op) {
        case 'link': up = o.up; break;
        case 'begin':
          l.begin(o.kind);
          if (from === 'IDLE') begun = o.kind;
          assert.equal(l.kind, from === 'IDLE' ? o.kind : kindBefore);
          break;
        case 'move': {
          const ok: boolean = l.move(o.to);
          const legal: boolean = o.to === from || (up && canJobTransition(from, o.to));
          assert.equal(ok, legal, `${from} → ${o.to} (link ${up ? 'up' : 'down'})`);
          assert.equal(l.state, ok ? o.to : from);
          assert.deepEqual(announced.slice(heard), ok && o.to !== from ? [o.to] : []);
          if ((!ok && from === 'IDLE') || (ok && o.to === 'IDLE' && from !== 'IDLE')) begun = null;
          break;
        }
        case 'end':
          l.end();
          begun = null;
          assert.equal(l.state, 'IDLE');
          assert.deepEqual(announced.slice(heard), from !== 'IDLE' && up ? ['IDLE'] : []);
          break;
        case 'reset':
          l.reset();
          begun = null;
          assert.equal(l.state, 'IDLE');
          assert.equal(announced.length, heard, 'a reset is silent');
          break;
      }
      // The kind is the one begun for this job while it runs; in IDLE only a begin waiting for its first move holds one.
      assert.equal(l.kind, begun);
    }
  }), { numRuns: 2000 });
});
