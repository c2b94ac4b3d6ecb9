// Progress and time left with a cancelled object's spans counted out (issue #54): bytes of the skipped spans are not
// work done or left, the analysis' planned time of them comes off the estimate, and the end is 100 % / 0 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProgressEstimator } from '../../../src/printer/job/progress-estimator.ts';

// 1,000,000 bytes planned at a constant 1 s per 1,000 bytes (1,000 s); the object's spans are 30 % of every 10,000
// bytes of the second half (150 s planned).
const size = 1_000_000;
const timeline: [number, number][] = [];
for (let i = 1; i <= 100; i++) timeline.push([i * 10_000, i * 10]);
const spans: [number, number][] = [];
for (let i = 50; i < 100; i++) spans.push([i * 10_000 + 3_000, i * 10_000 + 6_000]);

test('bytes of the skipped spans count out of progress; it reaches 100 % at the end of the file', () => {
  const est = new ProgressEstimator({ size, analysisTime: 1000, timeline });
  assert.equal(est.byteFraction(size / 2), 0.5);
  est.setSkipped(spans);
  // 150,000 bytes skipped in the second half: half the file done of 850,000 to print.
  assert.ok(Math.abs(est.byteFraction(size / 2) - 500_000 / 850_000) < 1e-9);
  // Inside a skipped span progress stays put; past it, it goes on from there.
  const inside = est.byteFraction(503_000);
  assert.equal(est.byteFraction(505_000), inside);
  assert.ok(est.byteFraction(507_000) > inside);
  assert.equal(est.byteFraction(size), 1);
  // Monotonic over the whole file.
  let last = 0;
  for (let p = 0; p <= size; p += 1_000) {
    const f = est.byteFraction(p);
    assert.ok(f >= last, `at ${p}: ${f} < ${last}`);
    last = f;
  }
});

test('the time left loses the planned time of the skipped spans (analysis prior, planned progress and M73 R)', () => {
  const plain = new ProgressEstimator({ size, analysisTime: 1000, timeline });
  const skipping = new ProgressEstimator({ size, analysisTime: 1000, timeline });
  skipping.setSkipped(spans);
  // Before any time has passed: the prior alone, 1000 s less the 150 s planned for the skipped spans.
  assert.equal(plain.timeLeft(0, 0).seconds, 1000);
  assert.equal(skipping.timeLeft(0, 0).seconds, 850);
  // Half way, on plan (500 s in): 350 s left, not 500.
  assert.equal(plain.timeLeft(size / 2, 500).seconds, 500);
  assert.ok(Math.abs(skipping.timeLeft(size / 2, 500).seconds! - 350) <= 1, String(skipping.timeLeft(size / 2, 500).seconds));
  // Three quarters of the file, on plan: 500 s + 70 % of 250 s printed, as much left.
  assert.ok(Math.abs(skipping.timeLeft(750_000, 675).seconds! - 175) <= 1, String(skipping.timeLeft(750_000, 675).seconds));
  assert.equal(skipping.timeLeft(size, 850).seconds, 0);
  // The slicer's M73 R counts the whole file: the skipped spans still ahead come off it.
  const m73 = new ProgressEstimator({ size, analysisTime: 1000, timeline });
  m73.noteM73({ offset: size / 2, percent: 50, remainingMin: 500 / 60 });
  m73.advance(size / 2, 500);
  assert.equal(m73.timeLeft(size / 2, 500).seconds, 500);
  m73.setSkipped(spans);
  assert.equal(m73.timeLeft(size / 2, 500).seconds, 350);
  // And its P% no longer stands for the progress once bytes are skipped.
  assert.ok(Math.abs(m73.fraction(size / 2) - 500_000 / 850_000) < 1e-9);
});
