// Pure units of the job side: time-left estimation converges on the truth, M73 wins, scripts render with snippets,
// loops and pause data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ProgressEstimator, parseM73 } from '../../../src/printer/job/progress-estimator.ts';
import { renderJobScript } from '../../../src/printer/job/job-scripts.ts';
import { renderScript } from '../../../src/printer/gcode-scripts.ts';
import type { LinkProfile } from '../../../src/printer/types.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

test('time left blends the analysis estimate with observed progress and converges on the real duration', () => {
  // The real print takes 1000 s at a constant byte rate; the analysis said 600 s (40 % off).
  const size = 1_000_000;
  const est = new ProgressEstimator({ size, analysisTime: 600 });
  const errors: number[] = [];
  for (let t = 0; t <= 1000; t += 50) {
    const pos = (t / 1000) * size;
    const left = est.timeLeft(pos, t);
    assert.ok(left.seconds !== null);
    errors.push(Math.abs(left.seconds - (1000 - t)));
    if (t === 0) assert.equal(left.origin, 'analysis');
    else if (t < 1000) assert.equal(left.origin, 'mixed-analysis');
  }
  assert.equal(errors.at(-1), 0, 'exact at the end');
  // The error shrinks as the print advances.
  assert.ok(errors[18] < errors[4] && errors[4] <= errors[0], errors.join(','));
  assert.ok(errors[18] < 60, `late error ${errors[18]}`);
});

test('with the analysis timeline, progress is counted in planned time, not bytes', () => {
  // The first half of the bytes takes 80 % of the planned 1000 s (slow first layers, fast sparse top).
  const size = 1_000_000;
  const planned = (off: number): number => (off <= size / 2 ? (off / (size / 2)) * 800 : 800 + ((off - size / 2) / (size / 2)) * 200);
  const timeline: [number, number][] = [];
  for (let i = 1; i <= 100; i++) timeline.push([(i / 100) * size, planned((i / 100) * size)]);
  // A printer that runs as planned: exact with the timeline, misled by bytes without it.
  const withTimeline = new ProgressEstimator({ size, analysisTime: 1000, timeline });
  const bytesOnly = new ProgressEstimator({ size, analysisTime: 1000 });
  for (const pos of [size * 0.1, size * 0.25, size * 0.5, size * 0.75]) {
    const t = planned(pos);
    const a = withTimeline.timeLeft(pos, t);
    assert.equal(a.origin, 'mixed-analysis');
    assert.ok(Math.abs(a.seconds! - (1000 - t)) <= 1, `as planned at ${pos}: ${a.seconds}, truth ${1000 - t}`);
    assert.ok(Math.abs(bytesOnly.timeLeft(pos, t).seconds! - (1000 - t)) > 50, `bytes only at ${pos}`);
  }
  // A printer 25 % slower than planned: the error shrinks as the print advances and is exact at the end.
  let last = Infinity;
  for (const pos of [size * 0.1, size * 0.25, size * 0.5, size * 0.75, size * 0.95]) {
    const t = 1.25 * planned(pos);
    const err = Math.abs(withTimeline.timeLeft(pos, t).seconds! - (1250 - t));
    assert.ok(err < last, `slow printer at ${pos}: error ${err} after ${last}`);
    last = err;
  }
  assert.equal(withTimeline.timeLeft(0, 0).seconds, 1000);
  assert.equal(withTimeline.timeLeft(size, 1250).seconds, 0);
});

test('an average of earlier prints is preferred to the analysis; without either the estimate is linear', () => {
  const avg = new ProgressEstimator({ size: 100, analysisTime: 50, averageTime: 200 });
  assert.deepEqual(avg.timeLeft(0, 0), { seconds: 200, origin: 'average' });
  assert.equal(avg.timeLeft(50, 100).origin, 'mixed-average');
  const lin = new ProgressEstimator({ size: 100 });
  assert.deepEqual(lin.timeLeft(0, 0), { seconds: null, origin: null });
  assert.deepEqual(lin.timeLeft(25, 100), { seconds: 300, origin: 'linear' });
});

test('at progress 1 the time left is 0 with no origin (gcode-analysis.md §6.1), whatever the prior or M73', () => {
  assert.deepEqual(new ProgressEstimator({ size: 100, analysisTime: 50 }).timeLeft(100, 60), { seconds: 0, origin: null });
  assert.deepEqual(new ProgressEstimator({ size: 100, averageTime: 50 }).timeLeft(100, 60), { seconds: 0, origin: null });
  assert.deepEqual(new ProgressEstimator({ size: 100 }).timeLeft(100, 60), { seconds: 0, origin: null });
  const m73 = new ProgressEstimator({ size: 100, analysisTime: 50 });
  m73.noteM73({ offset: 90, percent: 99, remainingMin: 1 });
  m73.advance(100, 60);
  assert.deepEqual(m73.timeLeft(100, 60), { seconds: 0, origin: null });
});

test('M73 progress lines from the file take over once the print passes them', () => {
  assert.deepEqual(parseM73('M73 P12 R34'), { percent: 12, remainingMin: 34 });
  assert.deepEqual(parseM73('m73 p5'), { percent: 5, remainingMin: undefined });
  assert.equal(parseM73('M730 P1'), undefined);
  assert.equal(parseM73('G1 X1'), undefined);
  const est = new ProgressEstimator({ size: 1000, analysisTime: 1000 });
  est.noteM73({ offset: 500, percent: 50, remainingMin: 10 });
  est.advance(400, 40);
  assert.equal(est.timeLeft(400, 40).origin, 'mixed-analysis');
  est.advance(520, 60);
  assert.deepEqual(est.timeLeft(520, 60), { seconds: 600, origin: 'estimate' });
  assert.deepEqual(est.timeLeft(600, 90), { seconds: 570, origin: 'estimate' }, 'counts down from when the line was reached');
  assert.equal(est.fraction(520), 0.5);
});

test('M73 lines promising far more time than the file holds (a truncated file) are ignored, not shown as "Left 37 m"', () => {
  // A 20 s file (by its analysis) that kept the slicer's `M73 P0 R37` of the whole print it was cut from.
  const est = new ProgressEstimator({ size: 1000, analysisTime: 20 });
  est.noteM73({ offset: 10, percent: 0, remainingMin: 37 });
  est.noteM73({ offset: 300, percent: 1, remainingMin: 36 });
  est.advance(297, 6);
  const left = est.timeLeft(297, 6);
  assert.notEqual(left.origin, 'estimate');
  assert.ok(left.seconds !== null && left.seconds < 30, `time left ${left.seconds} s`);
  assert.ok(Math.abs(est.fraction(297) - 0.297) < 1e-9, 'progress in bytes, not the foreign M73 P');
  // A plausible later line does not bring them back: the file's M73 lines as a whole describe another print.
  est.advance(400, 8);
  assert.notEqual(est.timeLeft(400, 8).origin, 'estimate');
});

const profile: LinkProfile = {
  id: '_default', name: 'Default', heatedBed: true, heatedChamber: false,
  extruder: { count: 2, sharedNozzle: false }, axes: { x: { speed: 6000 }, y: { speed: 6000 }, z: { speed: 200 }, e: { speed: 300 } },
};

test('scripts: the default afterPrintCancelled, OctoPrint-style snippets, pause data placeholders, the scripts folder', async (t) => {
  const dir = await tempDir(t, 'gantry-scripts-');
  let settings: Record<string, string | null> = {};
  const src = { settings: () => settings, scriptsDir: dir, profile: () => profile };
  assert.deepEqual(await renderJobScript('afterPrintCancelled', src, {}), ['M84', 'M104 T0 S0', 'M104 T1 S0', 'M140 S0', 'M106 S0']);
  assert.deepEqual(await renderJobScript('beforePrintStarted', src, {}), []);
  assert.equal(await renderJobScript('noSuchScript', src, {}), null);

  settings = {
    afterPrintCancelled: "; disable motors\nM84\n\n;disable all heaters\n{% snippet 'disable_hotends' %}\n{% snippet 'disable_bed' %}\n;disable fan\nM106 S0",
    beforePrintResumed: '{% if pause_position.x %}\nG1 X{{ pause_position.x }} Y{{ pause_position.y }} F4800\n{% endif %}\nM109 S{{ pause_temperature.tool0.target }}',
  };
  assert.deepEqual(await renderJobScript('afterPrintCancelled', src, {}), ['M84', 'M104 T0 S0', 'M104 T1 S0', 'M140 S0', 'M106 S0']);
  const resumed = await renderJobScript('beforePrintResumed', src, { pause_position: { x: 12.5, y: 30 }, pause_temperature: { tool0: { target: 210 } } });
  assert.deepEqual(resumed, ['G1 X12.5 Y30 F4800', 'M109 S210']);
  const noPos = await renderJobScript('beforePrintResumed', src, { pause_position: { x: null }, pause_temperature: { tool0: { target: 200 } } });
  assert.deepEqual(noPos, ['M109 S200']);

  settings = { beforePrintResumed: "{% snippet 'restore_temperatures' %}\n{% snippet 'restore_position' %}" };
  const restored = await renderJobScript('beforePrintResumed', src, {
    pause_position: { x: 10, y: 20, z: 1.2, f: 1800 },
    pause_temperature: { bed: { actual: 50, target: 60 }, tool0: { actual: 150, target: 210 }, tool1: { actual: 20, target: 0 } },
  });
  assert.deepEqual(restored, ['M190 S60', 'M109 T0 S210', 'G90', 'G1 X10 Y20 F4800', 'G1 Z1.2 F600', 'G1 F1800']);

  await mkdir(join(dir, 'snippets'));
  await writeFile(join(dir, 'afterPrintDone'), "G91\nG1 Z10\n{% snippet 'park' %}\n");
  await writeFile(join(dir, 'snippets', 'park'), 'G90\nG1 X0 Y200');
  assert.deepEqual(await renderJobScript('afterPrintDone', src, {}), ['G91', 'G1 Z10', 'G90', 'G1 X0 Y200']);
});

test('scripts: the built-in snippets follow the profile, a configured snippet replaces one, {% for %} loops', async () => {
  let settings: Record<string, string | null> = {};
  let p: LinkProfile = { ...profile, extruder: { count: 2, sharedNozzle: true } };
  const src = { settings: () => settings, scriptsDir: null, profile: () => p };
  assert.deepEqual(await renderJobScript('afterPrintCancelled', src, {}), ['M84', 'M104 T0 S0', 'M140 S0', 'M106 S0']);
  p = { ...profile, heatedBed: false, extruder: { count: 3, sharedNozzle: false } };
  assert.deepEqual(await renderJobScript('afterPrintCancelled', src, {}), ['M84', 'M104 T0 S0', 'M104 T1 S0', 'M104 T2 S0', 'M106 S0']);
  // The default cancel script includes the snippets, so replacing one changes what a cancel sends.
  settings = { 'snippets/disable_bed': 'M140 S0\nM141 S0' };
  assert.deepEqual(await renderJobScript('afterPrintCancelled', src, {}), ['M84', 'M104 T0 S0', 'M104 T1 S0', 'M104 T2 S0', 'M140 S0', 'M141 S0', 'M106 S0']);

  const loops = [
    '{% for i in range(2) %}', '{% for j in range(printer_profile.extruder.count) %}', '{% if j %}', 'M117 {{ i }}.{{ j }}',
    '{% endif %}', '{% endfor %}', '{% endfor %}', '{% if nothing %}', '{% for k in range(5) %}', 'M117 never', '{% endfor %}',
    '{% endif %}', '{% for k in range(nothing.here) %}', 'M117 none', '{% endfor %}', 'M117 end {{ i }}',
  ].join('\n');
  assert.deepEqual(renderScript(loops, { printer_profile: p }), ['M117 0.1', 'M117 0.2', 'M117 1.1', 'M117 1.2', 'M117 end']);
  assert.equal(renderScript('{% for i in range(100000) %}\nG4 P0\n{% endfor %}', {}).length, 64);
  // Lines end at LF, CR LF or a lone CR, as in a G-code file.
  assert.deepEqual(renderScript('M117 a\rM117 b\r\n{% if go %}\rM117 c\r{% endif %}\nM117 d', { go: true }), ['M117 a', 'M117 b', 'M117 c', 'M117 d']);
});
