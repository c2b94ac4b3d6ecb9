// Every real slicer file of the shared corpus analysed through the worker queue, checked against independently known values.
import { before, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AnalysisQueue, type GcodeAnalysis } from '../../../src/files/analysis/index.ts';
import { silentLogger } from '../../../src/core/logger.ts';
import { referenceFilament } from './reference.ts';
import { needs } from '../../helpers/tools.ts';
import { GCODE_DIR } from '../../helpers/shared-data.ts';

const DIR = GCODE_DIR;

interface Expect {
  /** The slicer's own time as written in the file (s), and the one our estimate is compared with. */
  slicerTime: number | null;
  compareTime: number | null;
  /** Filament length the slicer wrote (mm) and how close ours must be. */
  slicerFilament: number | null;
  filamentTolerance: number;
  maxZ?: number;
}

const CORPUS: Record<string, Expect> = {
  // Truncated by its publisher (part of layer 1) but with the full Benchy's header/footer: figures not comparable.
  'prusaslicer-2.6.1_small.gcode': { slicerTime: 2323, compareTime: null, slicerFilament: 4282.06, filamentTolerance: Infinity },
  'cura-2.3.1_puzzle_all.gcode': { slicerTime: 3485, compareTime: 3485, slicerFilament: null, filamentTolerance: 0 },
  'prusaslicer-2.3.3_3dbenchy.gcode': { slicerTime: 3775, compareTime: 3775, slicerFilament: 4366.1, filamentTolerance: 0.005 },
  // BambuStudio's total adds ~6 min for the printer's start sequence (heating, levelling); its model time covers the moves.
  'bambustudio-1.8.4_eline_arcs.gcode': { slicerTime: 3962, compareTime: 3601, slicerFilament: null, filamentTolerance: 0 },
  'simplify3d-4.1.2_flowerpot.gcode': { slicerTime: 13500, compareTime: 13500, slicerFilament: 128589.2, filamentTolerance: 0.005, maxZ: 583 },
  'prusaslicer-2.7.1_benchy_mini.gcode': { slicerTime: 4561, compareTime: 4561, slicerFilament: 4069.38, filamentTolerance: 0.005 },
  // Cura counts from the first layer: its start G-code's two purge lines (30 mm) are only in the total.
  'cura-4.8.0_ce3_3dbenchy.gcode': { slicerTime: 6018, compareTime: 6018, slicerFilament: 4165.48, filamentTolerance: 0.005, maxZ: 48 },
  'prusaslicer-2.5.0-debian_vase_0.1mm_generated.gcode': { slicerTime: 26009, compareTime: 26009, slicerFilament: 9522.12, filamentTolerance: 0.005 },
};

const results = new Map<string, GcodeAnalysis>();
const progress = new Map<string, number[]>();
let queue: AnalysisQueue;

const skip = needs('shared-data');

before(async () => {
  if (skip) return;
  queue = new AnalysisQueue({ logger: silentLogger, workers: 2 });
  queue.start();
  await Promise.all(Object.keys(CORPUS).map(async (name) => {
    const seen: number[] = [];
    progress.set(name, seen);
    results.set(name, await queue.analyse(join(DIR, name), { filamentDiameter: [1.75] }, (f) => seen.push(f)));
  }));
});
after(() => queue?.stop());

for (const [name, expect] of Object.entries(CORPUS)) {
  test(`${name}: analysed, total filament = independent E sum, slicer figures read, estimate within 5 %`, { skip }, async () => {
    const r = results.get(name);
    assert.ok(r, 'analysed without error');
    assert.equal(r._empty, undefined);
    assert.equal(progress.get(name)?.at(-1), 1);

    const reference = referenceFilament(await readFile(join(DIR, name), 'latin1'));
    const total = r.gantry.filamentTotal.tool0.length;
    assert.ok(Math.abs(total / reference[0] - 1) < 0.005, `total filament ${total} vs E sum ${reference[0]}`);
    const ours = r.filament.tool0.length;
    if (r.gantry.filamentAccounting === 'whole-file') assert.equal(ours, total);
    else assert.ok(ours < total);
    assert.ok(Math.abs(r.filament.tool0.volume - (ours * Math.PI * 0.875 ** 2) / 1000) < 1e-9);
    assert.ok(Math.abs(r.gantry.filamentTotal.tool0.volume - (total * Math.PI * 0.875 ** 2) / 1000) < 1e-9);

    const slicer = r.gantry.slicer;
    assert.ok(slicer.name, 'slicer named');
    assert.equal(slicer.estimatedPrintTime, expect.slicerTime);
    if (expect.slicerFilament !== null) {
      assert.equal(slicer.filamentLength?.[0], expect.slicerFilament);
      const err = Math.abs(ours / expect.slicerFilament - 1);
      assert.ok(err <= expect.filamentTolerance, `filament ${ours} vs slicer ${expect.slicerFilament}: ${(err * 100).toFixed(2)} %`);
    }
    if (expect.compareTime !== null) {
      const err = r.estimatedPrintTime! / expect.compareTime - 1;
      assert.ok(Math.abs(err) < 0.05, `estimate ${r.estimatedPrintTime?.toFixed(0)} s vs slicer ${expect.compareTime} s: ${(err * 100).toFixed(1)} %`);
    }
    if (expect.maxZ !== undefined) assert.ok(Math.abs((r.printingArea.maxZ ?? NaN) - expect.maxZ) < 1e-6, `maxZ ${r.printingArea.maxZ}`);
    for (const v of [...Object.values(r.printingArea), ...Object.values(r.travelArea)]) assert.ok(Number.isFinite(v));
    assert.ok(r.dimensions.width > 0 && r.dimensions.depth > 0 && r.dimensions.height > 0);
  });
}

test("Cura files count filament from the first ;LAYER: as Cura does; the others count the whole file as their slicers do", { skip }, () => {
  const fromLayer = [...results].filter(([, r]) => r.gantry.filamentAccounting === 'from-first-layer').map(([n]) => n).sort();
  assert.deepEqual(fromLayer, ['cura-2.3.1_puzzle_all.gcode', 'cura-4.8.0_ce3_3dbenchy.gcode']);
  // The Ender-3 start G-code draws two purge lines (E15, then E30 from the same origin) before the first layer.
  const cura = results.get('cura-4.8.0_ce3_3dbenchy.gcode')!;
  assert.ok(Math.abs(cura.gantry.filamentTotal.tool0.length - cura.filament.tool0.length - 30) < 1e-6);
});

test('the files with M73 lines are flagged, the others not', { skip }, () => {
  const withM73 = [...results].filter(([, r]) => r.gantry.hasM73).map(([n]) => n).sort();
  assert.deepEqual(withM73, ['bambustudio-1.8.4_eline_arcs.gcode', 'prusaslicer-2.6.1_small.gcode', 'prusaslicer-2.7.1_benchy_mini.gcode']);
});

test('the 36 MB file reports progress along the way', { skip }, () => {
  const seen = progress.get('prusaslicer-2.5.0-debian_vase_0.1mm_generated.gcode') ?? [];
  assert.ok(seen.filter((f) => f < 1).length >= 10, `progress updates: ${seen.length}`);
});

test("the timeline follows the slicer's own M73 progress through the Prusa MINI Benchy", { skip }, async () => {
  const name = 'prusaslicer-2.7.1_benchy_mini.gcode';
  const r = results.get(name)!;
  const timeline = r.gantry.timeline;
  assert.deepEqual(timeline.at(-1), [3938617, Math.round(r.estimatedPrintTime! * 10) / 10]);
  const at = (pos: number): number => {
    const i = timeline.findIndex(([p]) => p >= pos);
    if (i <= 0) return i === 0 ? timeline[0][1] * (pos / timeline[0][0]) : timeline.at(-1)![1];
    const [p0, t0] = timeline[i - 1], [p1, t1] = timeline[i];
    return t0 + ((t1 - t0) * (pos - p0)) / (p1 - p0);
  };
  const text = await readFile(join(DIR, name), 'latin1');
  const total = r.gantry.slicer.estimatedPrintTime!;
  let checked = 0;
  for (const m of text.matchAll(/^M73 P(\d+) R(\d+)/gm)) {
    // The slicer's elapsed time there (R is whole minutes left), against ours at the same byte.
    const slicerElapsed = total - Number(m[2]) * 60;
    const ours = at(m.index);
    assert.ok(Math.abs(ours - slicerElapsed) < 0.05 * total, `at byte ${m.index}: ours ${ours.toFixed(0)} s, slicer ${slicerElapsed} s`);
    checked++;
  }
  assert.ok(checked > 50, `${checked} M73 lines`);
});
