// Tool-change scripts in the engine: lines around a T<n> that changes the tool, from a job (filepos, pause, resend) and
// from queued commands (the tool planned by earlier queued T lines), never asked again for the scripts' own T lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ToolChangeLines } from '../../src/printer/link/printer-line-rules.ts';
import { batches, makeRig, runTranscript, newJob } from './scripted.ts';

function scriptsRig(make: (oldTool: number, newTool: number) => ToolChangeLines | null, streaming = false) {
  const calls: Array<[number, number]> = [];
  const rig = makeRig({}, { toolChangeLines: (o, n) => { calls.push([o, n]); return make(o, n); } }, streaming);
  return { rig, calls, tools: () => rig.events.filter(([n]) => n === 'toolChanged').map(([, p]) => p) };
}

const around = (o: number, n: number): ToolChangeLines => ({ before: [`M117 before ${o}>${n}`], after: [`M117 after ${o}>${n}`] });

test('job: the scripts go around a T line that changes the tool; filepos moves with the file, through a pause and a resend', async () => {
  const { rig, calls, tools } = scriptsRig(around);
  await runTranscript(rig, '! ready Marlin');
  const file = ['G1 X1', 'T1', 'G1 X2', 'T1 ; same tool', 't0', 'G1 X3'];
  const ends: number[] = [];
  for (const l of file) ends.push((ends.at(-1) ?? 0) + l.length + 1);
  const progress: number[] = [];
  rig.job = newJob(rig, batches(file, 2), { progress: (p) => progress.push(p), finished: (o) => { rig.outcome = o; } });
  rig.job.start();
  await runTranscript(rig, `
> N0 M110 N0*125
< ok
> N1 G1 X1*?
< ok
> N2 M117 before 0>1*?
# Paused between the script and its T line: the pause's own lines come first, the rest of the change after resuming.
! pause
< ok
> N3 M400*?
< ok
> N4 M114*?
< X:1.00 Y:0.00 Z:0.00 E:0.00 Count X:100 Y:0 Z:0
< ok
! state PAUSED
! nothing-sent`);
  assert.equal(rig.job.filepos, ends[0], 'the before script does not move filepos');
  await runTranscript(rig, `
! resume
> N5 T1*?
< ok
> N6 M117 after 0>1*?
< Error:checksum mismatch, Last Line: 5
< Resend: 6
< ok
> N6 M117 after 0>1*?`);
  assert.equal(rig.job.filepos, ends[1], 'the T line and its after script are at the T line\'s end');
  await runTranscript(rig, `
< ok
> N7 G1 X2*?
< ok
> N8 T1*?
< ok
> N9 M117 before 1>0*?
< ok
> N10 t0*?
< ok
> N11 M117 after 1>0*?
< ok
> N12 G1 X3*?
< ok
> N13 M400*?
< ok
! outcome done
! nothing-sent`);
  assert.deepEqual(calls, [[0, 1], [1, 0]]);
  // ToolChange is announced for the repeated T1 too (no scripts for it).
  assert.deepEqual(tools(), [[1, 0], [1, 1], [0, 1]]);
  assert.deepEqual(progress.at(-1), ends.at(-1));
  assert.ok(progress.every((p, i) => i === 0 || p >= progress[i - 1]), `progress never goes back: ${progress}`);
});

test('job on the streaming path (next line framed ahead): the same order, a command between job lines plans from the current tool', async () => {
  const { rig, calls } = scriptsRig(around, true);
  await runTranscript(rig, `
! ready Marlin
! job G1 X1|T1|G1 X2|T0
> N0 M110 N0*125
< ok
> N1 G1 X1*?
< ok
> N2 M117 before 0>1*?
< ok
> N3 T1*?
! send T2
< ok
> N4 M117 before 1>2*?
< ok
> N5 T2*?
< ok
> N6 M117 after 1>2*?
< ok
> N7 M117 after 0>1*?
< ok
> N8 G1 X2*?
< ok
> N9 M117 before 2>0*?
< ok
> N10 T0*?
< ok
> N11 M117 after 2>0*?
< ok
> N12 M400*?
< ok
! outcome done`);
  assert.deepEqual(calls, [[0, 1], [1, 2], [2, 0]]);
});

test('commands: scripts around a queued T that changes the planned tool; a T inside the scripts never asks again', async () => {
  const { rig, calls, tools } = scriptsRig((o, n) => ({ before: [`M117 before ${o}>${n}`, 'T5'], after: [`M117 after ${o}>${n}`] }));
  await runTranscript(rig, `
! ready Marlin
! send T1
> M117 before 0>1
< ok
> T5
< ok
> T1
< ok
> M117 after 0>1
< ok
! send T1
> T1
< ok
# Queued together: the second T2 finds T2 already planned, T0 is a change from 2.
! send T2
! send T2
! send T0
> M117 before 1>2
< ok
> T5
< ok
> T2
< ok
> M117 after 1>2
< ok
> T2
< ok
> M117 before 2>0
< ok
> T5
< ok
> T0
< ok
> M117 after 2>0
< ok
! nothing-sent`);
  assert.deepEqual(calls, [[0, 1], [1, 2], [2, 0]]);
  assert.deepEqual(tools(), [[5, 0], [1, 5], [1, 1], [5, 1], [2, 5], [2, 2], [5, 2], [0, 5]]);
});

test('no scripts (null): T lines go out alone and cost one hook call per change', async () => {
  const { rig, calls } = scriptsRig(() => null);
  await runTranscript(rig, `
! ready Marlin
! job G1 X1|T1|T1|G1 X2
> N0 M110 N0*125
< ok
> N1 G1 X1*?
< ok
> N2 T1*?
< ok
> N3 T1*?
< ok
> N4 G1 X2*?
< ok
> N5 M400*?
< ok
! outcome done`);
  assert.deepEqual(calls, [[0, 1]]);
});
