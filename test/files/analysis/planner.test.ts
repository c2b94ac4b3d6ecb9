// Motion planner model: textbook trapezoid and triangle times, junction limits (junction deviation, classic jerk, Cura's XY jerk), dwells.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MIN_PLANNER_SPEED as V0, Planner, junctionDeviationSpeed, trapezoidTime } from '../../../src/files/analysis/planner.ts';
import { marlinDefaults } from '../../../src/files/analysis/limits.ts';
import type { MachineLimits } from '../../../src/files/analysis/types.ts';

const close = (actual: number, expected: number, tol = 1e-9, msg?: string): void =>
  assert.ok(Math.abs(actual - expected) <= tol, `${msg ?? ''} expected ${expected}, got ${actual}`);

// Limits that never bind except the acceleration under test; cornering per the caller.
function limits(accel: number, over: Partial<MachineLimits> = {}): MachineLimits {
  const big = { x: 1e6, y: 1e6, z: 1e6, e: 1e6 };
  return {
    ...marlinDefaults(),
    maxFeedrate: { ...big }, maxAcceleration: { ...big },
    printAcceleration: accel, travelAcceleration: accel, retractAcceleration: accel,
    jerk: { x: 0, y: 0, z: 0, e: 0 }, junctionDeviation: 0, combinedXyJerk: false,
    ...over,
  };
}

test('a single move from rest to rest is the textbook trapezoid', () => {
  // 100 mm at 50 mm/s with 1000 mm/s²: 1.25 mm to accelerate, 1.25 mm to brake, 97.5 mm cruising.
  const expected = 50 / 1000 + 50 / 1000 + 97.5 / 50;
  close(trapezoidTime(100, 0, 0, 50, 1000), expected);
  const p = new Planner(limits(1000));
  p.add(100, 1, 0, 0, 0, 50, 1);
  close(p.totalSeconds(), expected);
});

test('a move too short to reach its feedrate is a triangle', () => {
  // 1 mm at 1000 mm/s²: peak sqrt(a·L) = 31.6 mm/s < 100 mm/s; t = 2·sqrt(L/a).
  close(trapezoidTime(1, 0, 0, 100, 1000), 2 * Math.sqrt(1 / 1000));
  const p = new Planner(limits(1000));
  p.add(1, 0, 1, 0, 0, 100, 1);
  close(p.totalSeconds(), 2 * Math.sqrt(1 / 1000));
});

test('entry and exit speeds shorten the ramps', () => {
  // From 20 to 10 mm/s around a 50 mm/s cruise: (50-20)/a + (50-10)/a + cruise.
  const a = 500;
  const da = (50 * 50 - 20 * 20) / (2 * a), dd = (50 * 50 - 10 * 10) / (2 * a);
  close(trapezoidTime(30, 20, 10, 50, a), 30 / a + 40 / a + (30 - da - dd) / 50);
});

test('collinear moves join at full speed: two halves take as long as the whole', () => {
  for (const over of [{ junctionDeviation: 0.013 }, { jerk: { x: 10, y: 10, z: 1, e: 5 } }]) {
    const whole = new Planner(limits(1000, over));
    whole.add(20, 1, 0, 0, 0, 50, 1);
    const halves = new Planner(limits(1000, over));
    halves.add(10, 1, 0, 0, 0, 50, 1);
    halves.add(10, 1, 0, 0, 0, 50, 1);
    close(halves.totalSeconds(), whole.totalSeconds(), 1e-9, JSON.stringify(over));
  }
});

test('a 90° corner with junction deviation slows to sqrt(a·δ·sin(θ/2)/(1-sin(θ/2)))', () => {
  const a = 1000, jd = 0.013;
  const sinHalf = Math.sqrt(0.5);
  const vj = Math.sqrt((a * jd * sinHalf) / (1 - sinHalf));
  close(junctionDeviationSpeed(0, a, jd), vj);
  assert.equal(junctionDeviationSpeed(-1, a, jd), Infinity, 'straight on is unlimited');
  const p = new Planner(limits(a, { junctionDeviation: jd }));
  p.add(10, 1, 0, 0, 0, 50, 1);
  p.add(10, 0, 1, 0, 0, 50, 1);
  // Marlin 2 starts from its minimum planner speed after a stop.
  close(p.totalSeconds(), trapezoidTime(10, V0, vj, 50, a) + trapezoidTime(10, vj, 0, 50, a));
});

test('a 90° corner with classic jerk passes at the jerk speed, and starts at it from rest', () => {
  // X then Y at 50 mm/s, jerk 10: X drops 50 → 0, so the junction is scaled to 10 mm/s; both moves can start at 10.
  const a = 1000;
  const p = new Planner(limits(a, { jerk: { x: 10, y: 10, z: 1, e: 5 } }));
  p.add(10, 1, 0, 0, 0, 50, 1);
  p.add(10, 0, 1, 0, 0, 50, 1);
  close(p.totalSeconds(), trapezoidTime(10, 10, 10, 50, a) + trapezoidTime(10, 10, 0, 50, a));
});

test("Cura's combined XY jerk is stricter on diagonals and starts from half the jerk", () => {
  // +X then +Y at 50 mm/s: the XY vector changes by 70.7 mm/s, so the junction is 50·10/70.7 = 7.07 mm/s.
  const a = 1000;
  const p = new Planner(limits(a, { jerk: { x: 10, y: 10, z: 1, e: 5 }, combinedXyJerk: true }));
  p.add(10, 1, 0, 0, 0, 50, 1);
  p.add(10, 0, 1, 0, 0, 50, 1);
  const vj = (50 * 10) / Math.sqrt(50 * 50 * 2);
  close(p.totalSeconds(), trapezoidTime(10, 5, vj, 50, a) + trapezoidTime(10, vj, 0, 50, a));
});

test('axis limits clamp the feedrate and the acceleration of a move', () => {
  // Z limited to 5 mm/s and 100 mm/s²: a 10 mm Z move asked at 50 mm/s runs at the Z limits.
  const l = limits(3000);
  l.maxFeedrate.z = 5;
  l.maxAcceleration.z = 100;
  const p = new Planner(l);
  p.add(10, 0, 0, 1, 0, 50, 1);
  close(p.totalSeconds(), trapezoidTime(10, 0, 0, 5, 100));
});

test('look-ahead spans more moves than the window: a long straight line in tiny pieces cruises at full speed', () => {
  const p = new Planner(limits(1000, { junctionDeviation: 0.013 }));
  for (let i = 0; i < 5000; i++) p.add(0.1, 1, 0, 0, 0, 50, 1);
  close(p.totalSeconds(), trapezoidTime(500, V0, 0, 50, 1000), 1e-6);
});

test('a dwell adds its time and stops the machine (no junction speed carries across it)', () => {
  const p = new Planner(limits(1000, { junctionDeviation: 0.013 }));
  p.add(10, 1, 0, 0, 0, 50, 1);
  p.dwell(2);
  p.add(10, 1, 0, 0, 0, 50, 1);
  close(p.totalSeconds(), 2 * trapezoidTime(10, V0, 0, 50, 1000) + 2);
});
