// The host-side skip filter against a simulated printer: random programs (absolute and relative E, retractions, Z
// changes, state lines) with objects cancelled at random moments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ObjectSkipFilter } from '../../src/objects/skip-filter.ts';
import { ObjectLabels } from '../../src/objects/object-labels.ts';

/** A printer as the lines move it: position, E coordinate, retraction depth and what was extruded where. */
class SimPrinter {
  x = 0; y = 0; z = 0; e = 0; depth = 0; relE = false;
  extruded = 0;
  apply(line: string): { dE: number; before: { x: number; y: number; z: number; depth: number } } | null {
    const code = line.split(';')[0].trim();
    if (code === 'M82') this.relE = false;
    else if (code === 'M83') this.relE = true;
    const w = new Map([...code.matchAll(/([A-Z])(-?[\d.]+)/g)].map((m) => [m[1], Number(m[2])]));
    if (/^G92\b/.test(code) && w.has('E')) this.e = w.get('E')!;
    if (!/^G[01]\b/.test(code)) return null;
    const before = { x: this.x, y: this.y, z: this.z, depth: this.depth };
    this.x = w.get('X') ?? this.x;
    this.y = w.get('Y') ?? this.y;
    this.z = w.get('Z') ?? this.z;
    let dE = 0;
    if (w.has('E')) {
      dE = this.relE ? w.get('E')! : w.get('E')! - this.e;
      this.e = this.relE ? this.e + dE : w.get('E')!;
      if (dE < 0) this.depth -= dE;
      else {
        this.extruded += Math.max(0, dE - this.depth);
        this.depth = Math.max(0, this.depth - dE);
      }
    }
    return { dE, before };
  }
}

type Step = { kind: 'extrude'; x: number; y: number; e: number } | { kind: 'travel'; x: number; y: number } | { kind: 'retract' }
  | { kind: 'prime' } | { kind: 'z' } | { kind: 'state'; line: string } | { kind: 'reset' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('extrude' as const), x: fc.integer({ min: 0, max: 200 }), y: fc.integer({ min: 0, max: 200 }), e: fc.integer({ min: 1, max: 50 }) }),
  fc.record({ kind: fc.constant('travel' as const), x: fc.integer({ min: 0, max: 200 }), y: fc.integer({ min: 0, max: 200 }) }),
  fc.constant({ kind: 'retract' as const }), fc.constant({ kind: 'prime' as const }), fc.constant({ kind: 'z' as const }),
  fc.constant({ kind: 'reset' as const }),
  fc.constantFrom('M106 S128', 'M104 S210', 'M107', 'T0', 'M204 S800', 'G4 P0').map((line) => ({ kind: 'state' as const, line })),
);

/** A file: objects 0..n-1 in layers, each section a list of steps, in PrusaSlicer's OctoPrint label style. */
function program(relE: boolean, layers: Step[][][]): string[] {
  const out = ['G90', relE ? 'M83' : 'M82', 'G92 E0'];
  let e = 0;
  let z = 0.2;
  let retracted = false;
  for (const layer of layers) {
    out.push(`G1 Z${z.toFixed(2)} F720`);
    layer.forEach((steps, obj) => {
      out.push(`; printing object cube_${obj}`);
      for (const s of steps) {
        if (s.kind === 'extrude') {
          const d = s.e / 100;
          e += d;
          out.push(`G1 X${s.x} Y${s.y} E${(relE ? d : e).toFixed(5)}`);
          retracted = false;
        } else if (s.kind === 'travel') out.push(`G1 X${s.x} Y${s.y} F9000`);
        else if (s.kind === 'retract' && !retracted) {
          e -= 0.8;
          out.push(`G1 E${(relE ? -0.8 : e).toFixed(5)} F2100`);
          retracted = true;
        } else if (s.kind === 'prime' && retracted) {
          e += 0.8;
          out.push(`G1 E${(relE ? 0.8 : e).toFixed(5)} F2100`);
          retracted = false;
        } else if (s.kind === 'z') out.push(`G1 Z${(z + 0.4).toFixed(2)}`, `G1 Z${z.toFixed(2)}`);
        else if (s.kind === 'reset' && !relE) {
          out.push('G92 E0');
          e = 0;
        } else if (s.kind === 'state') out.push(s.line);
      }
      out.push(`; stop printing object cube_${obj}`);
    });
    z += 0.2;
  }
  // Each line made unique (a tag after the code; label lines carry the name only, as slicers write them).
  return out.map((l, i) => (l.startsWith(';') ? l : `${l} ;L${i}`));
}


test('skip filter: nothing extruded in a cancelled object after the cancel, every other line once, E and position continuous', () => {
  fc.assert(fc.property(
    fc.boolean(),
    fc.integer({ min: 2, max: 4 }).chain((n) => fc.array(fc.array(fc.array(step, { maxLength: 8 }), { minLength: n, maxLength: n }), { minLength: 1, maxLength: 5 })),
    fc.array(fc.tuple(fc.nat(3), fc.nat(500)), { maxLength: 3 }),
    fc.boolean(),
    (relE, layers, cancels, withScripts) => {
      const input = program(relE, layers);
      const filter = new ObjectSkipFilter(withScripts ? { before: ['M117 skipping'], after: ['M117 back'] } : {});
      const file = new SimPrinter(); // every line, as the file means it
      const printer = new SimPrinter(); // what the filter sends
      const seen: number[] = [];
      const dropped: number[] = [];
      for (let i = 0; i < input.length; i++) {
        for (const [id, at] of cancels) if (at === i) filter.cancel(id);
        const fileMove = new SimPrinter();
        Object.assign(fileMove, file);
        const out = filter.filter(input[i]);
        const wasSkipping = filter.isSkipping;
        file.apply(input[i]);
        if (!out.includes(input[i])) dropped.push(i);
        for (const l of out) {
          const k = l === input[i] ? i : null;
          const extrudedBefore = printer.extruded;
          const r = printer.apply(l);
          if (k !== null) {
            seen.push(k);
            if (r !== null && r.dE > 0 && /X|Y/.test(l.split(';')[0])) {
              // A kept extrusion starts where the file has the head, with the filament where the file has it.
              assert.deepEqual({ x: r.before.x, y: r.before.y, z: r.before.z }, { x: fileMove.x, y: fileMove.y, z: fileMove.z }, `position before line ${k}`);
              assert.ok(Math.abs(r.before.depth - fileMove.depth) < 1e-6, `retraction before line ${k}: ${r.before.depth} vs ${fileMove.depth}`);
              assert.ok(Math.abs(r.dE - (relE ? Number(/E(-?[\d.]+)/.exec(l)![1]) : Number(/E(-?[\d.]+)/.exec(l)![1]) - fileMove.e)) < 1e-6, `E step of line ${k}`);
            }
          } else if (wasSkipping) {
            assert.equal(printer.extruded, extrudedBefore, `an inserted line extruded while skipping: ${l}`);
          } else {
            // Lines inserted on leaving a skip only prime back what the section retracted.
            assert.ok(printer.extruded - extrudedBefore < 1e-6, `an inserted line extruded: ${l}`);
          }
        }
        if (filter.isSkipping && out.includes(input[i])) {
          // Kept inside a skip: never a move that extrudes.
          assert.ok(!/^G[0-3]\b/.test(input[i]), `a move was kept inside a cancelled object: ${input[i]}`);
        }
      }
      // Every line the filter did not drop went out exactly once, in order; only moves in cancelled objects dropped.
      assert.deepEqual(seen, input.map((_, i) => i).filter((i) => !dropped.includes(i)));
      for (const i of dropped) assert.match(input[i], /^G[01] /);
      // Nothing extruded beyond what the file extrudes outside the cancelled sections.
      assert.ok(printer.extruded <= file.extruded + 1e-6);
      if (cancels.length === 0) assert.equal(dropped.length, 0);
    },
  ), { numRuns: 300 });
});

test('skip filter: a cancelled object never extrudes, the others extrude exactly what the file says', () => {
  const input = program(false, [[[{ kind: 'extrude', x: 10, y: 10, e: 30 }], [{ kind: 'extrude', x: 50, y: 50, e: 40 }], [{ kind: 'extrude', x: 90, y: 90, e: 50 }]],
    [[{ kind: 'extrude', x: 11, y: 10, e: 30 }], [{ kind: 'retract' }, { kind: 'travel', x: 60, y: 60 }, { kind: 'extrude', x: 51, y: 50, e: 40 }], [{ kind: 'extrude', x: 91, y: 90, e: 50 }]]]);
  const filter = new ObjectSkipFilter();
  filter.cancel(1);
  const out = input.flatMap((l) => filter.filter(l));
  const p = new SimPrinter();
  for (const l of out) p.apply(l);
  // cube_0 0.3 + 0.3, cube_2 0.5 + 0.1 (the file leaves 0.4 of cube_1's retraction for cube_2's first move to take up).
  assert.ok(Math.abs(p.extruded - 1.2) < 1e-6, `${p.extruded}\n${out.join('\n')}`);
  assert.ok(!out.some((l) => /X5\d Y5\d E/.test(l)));
  // Absolute E: the printer's E is set to the file's where the skip ends (this one left 0.4 of a retraction).
  assert.deepEqual(out.filter((l) => !/;L\d+$/.test(l) && !l.startsWith(';')).slice(0, 2), ['G92 E0.7', 'G0 X50 Y50'], out.join('\n'));
});

test('object labels: every style, ids by first appearance, names as the plugin gives them', () => {
  const names = (lines: string[]) => {
    const l = new ObjectLabels();
    const starts = lines.map((x) => l.feed(x)).filter((e) => e?.kind === 'start').map((e) => (e as { id: number }).id);
    return { names: l.names, starts };
  };
  assert.deepEqual(names(['; printing object a.stl id:0 copy 0', '; stop printing object a.stl id:0 copy 0', '; printing object b.stl id:1 copy 0', '; printing object a.stl id:0 copy 0']),
    { names: ['a.stl id:0 copy 0', 'b.stl id:1 copy 0'], starts: [0, 1, 0] });
  assert.deepEqual(names(['M486 S0', 'M486 Acube', 'M486 S-1', 'M486 S1', 'M486 Aball', 'M486 S-1', 'M486 S1', 'G1 X1', 'M486 S-1', 'M486 S0']),
    { names: ['Acube', 'Aball'], starts: [0, 1, 1, 0] });
  assert.deepEqual(names(['M486 S3 A"gear"', 'M486 S-1']), { names: ['gear'], starts: [0] });
  assert.deepEqual(names([';MESH:cube.stl', ';MESH:NONMESH', ';MESH:pyramid.stl', ';MESH:cube.stl']), { names: ['cube.stl', 'pyramid.stl'], starts: [0, 1, 0] });
  assert.deepEqual(names(["EXCLUDE_OBJECT_DEFINE NAME='b_1' CENTER=1,2", 'EXCLUDE_OBJECT_DEFINE NAME=a_0', 'EXCLUDE_OBJECT_START NAME=a_0', 'EXCLUDE_OBJECT_END NAME=a_0']),
    { names: ['b_1', 'a_0'], starts: [1] });
});
