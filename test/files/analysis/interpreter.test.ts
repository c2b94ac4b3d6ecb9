// G-code semantics of the analyser: arcs, units, extrusion modes, tools, bounds, limits from the file, slicer comments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyseBuffer } from '../../../src/files/analysis/analyse-file.ts';
import { parseDuration, parseSlicerComments } from '../../../src/files/analysis/slicer-meta.ts';
import { trapezoidTime } from '../../../src/files/analysis/planner.ts';

const close = (actual: number | null | undefined, expected: number, tol = 1e-6, msg = ''): void =>
  assert.ok(actual !== null && actual !== undefined && Math.abs(actual - expected) <= tol,
    `${msg} expected ${expected}, got ${actual}`);

test('a full circle (G2 with only I) is 2πr long and its bounds are the whole circle', () => {
  // 10 mm/s: the duration-only time is the length / 10.
  const r = analyseBuffer('G21\nG90\nM83\nG1 X0 Y0 F600\nG2 I10 J0 E5\n');
  close(r.gantry.naivePrintTime, (2 * Math.PI * 10) / 10, 1e-9);
  const a = r.printingArea;
  close(a.minX, 0); close(a.maxX, 20); close(a.minY, -10); close(a.maxY, 10);
});

test('quarter arcs: G3 sweeps the short way, G2 the long way; bounds follow the sweep', () => {
  const ccw = analyseBuffer('M83\nG1 X10 Y0 F600\nG3 X0 Y10 I-10 J0 E1\n');
  close(ccw.gantry.naivePrintTime, 1 + (Math.PI / 2) * 10 / 10, 1e-9);
  close(ccw.printingArea.minX, 0); close(ccw.printingArea.maxX, 10);
  close(ccw.printingArea.minY, 0); close(ccw.printingArea.maxY, 10);
  const cw = analyseBuffer('M83\nG1 X10 Y0 F600\nG2 X0 Y10 I-10 J0 E1\n');
  close(cw.gantry.naivePrintTime, 1 + (3 * Math.PI / 2) * 10 / 10, 1e-9);
  close(cw.printingArea.minX, -10); close(cw.printingArea.maxX, 10);
  close(cw.printingArea.minY, -10); close(cw.printingArea.maxY, 10);
});

test('R-form arcs: G2 X20 R10 from the origin is the upper semicircle', () => {
  const r = analyseBuffer('M83\nG1 X0 Y0 F600\nG2 X20 Y0 R10 E1\n');
  close(r.printingArea.maxY, 10);
  close(r.printingArea.minY, 0);
  close(r.gantry.naivePrintTime, Math.PI, 1e-9);
});

test('G20 switches to inches for coordinates, E and F; G21 back to mm', () => {
  const r = analyseBuffer('M83\nG20\nG1 X1 Y1 E0.1 F60\nG21\nG1 X30 E1\n');
  close(r.printingArea.maxX, 30);
  close(r.printingArea.maxY, 25.4);
  close(r.dimensions.depth, 25.4);
  close(r.filament.tool0?.length, 2.54 + 1);
});

test('filament: M82 absolute with retract/prime and G92 resets, then M83 relative', () => {
  const gcode = [
    'M82', 'G1 X10 E5 F1200', 'G1 E3', 'G1 E5', 'G1 X20 E10', 'G92 E0', 'G1 X30 E2',
    'M83', 'G1 X40 E1', 'G1 E-1', 'G1 E1', 'G1 X50 E1',
  ].join('\n');
  const r = analyseBuffer(gcode, { filamentDiameter: [1.75] });
  close(r.filament.tool0?.length, 14);
  close(r.filament.tool0?.volume, (14 * Math.PI * 0.875 ** 2) / 1000);
});

test('G91 makes E relative too; G92 with no words zeroes everything', () => {
  const r = analyseBuffer('G91\nG1 X10 E2 F600\nG1 X10 E2\nG90\nG92\nG1 X5 E1\n');
  close(r.filament.tool0?.length, 4 + 1);
  close(r.printingArea.minX, 0);
  close(r.printingArea.maxX, 20);
});

test('tools: T<n> switches the extruder counted; T beyond the tool count is ignored', () => {
  const r = analyseBuffer('M83\nG1 X1 E2 F600\nT1\nG1 X2 E3\nT255\nG1 X3 E4\nT0\nG1 X4 E1\n');
  close(r.filament.tool0?.length, 3);
  close(r.filament.tool1?.length, 7);
  assert.deepEqual(r.gantry.toolsUsed, [1, 0]);
});

test('G28 homes the named axes to 0; printing area ignores travel, travel area includes it', () => {
  const r = analyseBuffer('M83\nG1 X50 Y50 Z5 F6000\nG28 X\nG1 Y60 Z0.2 E1\n');
  close(r.printingArea.minX, 0); close(r.printingArea.maxX, 0);
  close(r.printingArea.minY, 50); close(r.printingArea.maxY, 60);
  close(r.travelArea.maxX, 50);
  close(r.travelArea.maxZ, 5);
  close(r.printingArea.minZ, 0, 0, 'minZ starts at bedZ');
  close(r.dimensions.height, 5);
});

test('parameters without spaces, lower case, line numbers and checksums parse', () => {
  const r = analyseBuffer('N1 m83*12\nN2 g1x10y5e1f600*99 ; comment E99\n(paren) G1 X99 E99\n');
  close(r.printingArea.maxX, 10);
  close(r.printingArea.maxY, 5);
  close(r.filament.tool0?.length, 1);
});

test('G4 dwell adds time (S seconds, P milliseconds) to both estimates', () => {
  const base = analyseBuffer('M83\nG1 X10 E1 F600\n');
  const dwell = analyseBuffer('M83\nG1 X10 E1 F600\nG4 S2\nG4 P500\n');
  close(dwell.estimatedPrintTime! - base.estimatedPrintTime!, 2.5, 1e-6);
  close(dwell.gantry.naivePrintTime - base.gantry.naivePrintTime, 2.5, 1e-9);
});

test('no extrusion: the OctoPrint empty result', () => {
  const r = analyseBuffer('G28\nG1 X10 Y10 F6000\n');
  assert.equal(r._empty, true);
  assert.deepEqual(r.filament, {});
  assert.equal(r.estimatedPrintTime, undefined);
  assert.deepEqual(r.printingArea, { minX: 0, maxX: 0, minY: 0, maxY: 0, minZ: 0, maxZ: 0 });
});

test('limits in the file (M201/M203/M204/M205) drive the estimate and the cornering model', () => {
  const moves = 'M83\nG1 X100 E1 F6000\n';
  const limited = analyseBuffer('M201 X100 Y100\nM203 X1000 Y1000\nM204 P100 T100\nM205 X0 Y0 E0\n' + moves);
  close(limited.estimatedPrintTime, trapezoidTime(100, 0, 0, 100, 100), 1e-9);
  assert.equal(limited.gantry.limitsSource, 'file');
  assert.equal(limited.gantry.cornering, 'jerk');
  const jd = analyseBuffer('M205 J0.02\n' + moves);
  assert.equal(jd.gantry.cornering, 'junction-deviation');
  // Nothing in the file: the profile's limits, else Marlin's defaults (3000 mm/s², 300 mm/s).
  const profile = analyseBuffer(moves, { limits: { printAcceleration: 100, maxAcceleration: { x: 100 } } });
  assert.equal(profile.gantry.limitsSource, 'profile');
  close(profile.estimatedPrintTime, trapezoidTime(100, 0.05, 0, 100, 100), 1e-9); // junction deviation: from 0.05 mm/s
  const defaults = analyseBuffer(moves);
  assert.equal(defaults.gantry.limitsSource, 'default');
  close(defaults.estimatedPrintTime, trapezoidTime(100, 0.05, 0, 100, 3000), 1e-9);
});

test('the firmware\'s reported limits sit below the profile\'s and the file\'s own', () => {
  const moves = 'M83\nG1 X100 E1 F6000\n';
  const firmwareLimits = ['M201 X100.00 Y100.00 Z100.00 E5000.00', 'M203 X500.00 Y500.00 Z5.00 E25.00', 'M204 P100.00 R100.00 T100.00',
    'M205 B20000.00 S0.00 T0.00 J0.013'];
  const fw = analyseBuffer(moves, { firmwareLimits });
  assert.equal(fw.gantry.limitsSource, 'firmware');
  close(fw.estimatedPrintTime, trapezoidTime(100, 0.05, 0, 100, 100), 1e-9);
  assert.equal(fw.gantry.lines, 2, 'the report is not counted as the file\'s lines');
  // A classic-jerk firmware (no J, X/Y jerk) switches the cornering model.
  assert.equal(analyseBuffer(moves, { firmwareLimits: ['M205 B20000 S0 T0 X8.00 Y8.00 Z0.40 E5.00'] }).gantry.cornering, 'jerk');
  // The profile's figures beat the firmware's; fields the profile leaves out keep the firmware's.
  const profile = analyseBuffer(moves, { firmwareLimits, limits: { printAcceleration: 50 } });
  assert.equal(profile.gantry.limitsSource, 'profile');
  close(profile.estimatedPrintTime, trapezoidTime(100, 0.05, 0, 100, 50), 1e-9);
  // The file's own commands beat both.
  const file = analyseBuffer('M204 P1000\nM201 X1000\n' + moves, { firmwareLimits, limits: { printAcceleration: 50 } });
  assert.equal(file.gantry.limitsSource, 'file');
  close(file.estimatedPrintTime, trapezoidTime(100, 0.05, 0, 100, 1000), 1e-9);
  // Lines that state nothing leave the defaults in charge.
  assert.equal(analyseBuffer(moves, { firmwareLimits: ['M117 hello'] }).gantry.limitsSource, 'default');
});

test('the profile\'s filament diameter gives the volume; without one the slicer\'s comment, else 1.75 mm', () => {
  const gcode = 'M83\nG1 X10 Y0 Z0.2 F1200\nG1 X20 E100 F1200\n';
  const volume = (d: number): number => (100 * Math.PI * (d / 2) ** 2) / 1000;
  close(analyseBuffer(gcode, { filamentDiameter: [2.85] }).filament.tool0.volume, volume(2.85), 1e-9);
  close(analyseBuffer(gcode + '; filament_diameter = 2.5\n').filament.tool0.volume, volume(2.5), 1e-9);
  close(analyseBuffer(gcode + '; filament_diameter = 2.5\n', { filamentDiameter: [2.85] }).filament.tool0.volume, volume(2.85), 1e-9);
  close(analyseBuffer(gcode).filament.tool0.volume, volume(1.75), 1e-9);
});

test('a PrusaSlicer config block states the limits even without M201..M205 lines', () => {
  const footer = '; machine_max_acceleration_extruding = 100,50\n; machine_max_acceleration_x = 100,50\n'
    + '; machine_max_jerk_x = 0,0\n; machine_max_jerk_y = 0,0\n; machine_max_feedrate_x = 500,200\n';
  const r = analyseBuffer('M83\nG1 X100 E1 F6000\n' + footer);
  close(r.estimatedPrintTime, trapezoidTime(100, 0, 0, 100, 100), 1e-9);
  assert.equal(r.gantry.limitsSource, 'file');
});

test('slicer comments: names, estimates, filament and diameters of each slicer family', () => {
  assert.equal(parseDuration('1d 2h 3m 4s'), 93784);
  assert.equal(parseDuration('3 hours 45 minutes'), 13500);
  assert.equal(parseDuration('58m 5s'), 3485);
  const prusa = parseSlicerComments('; generated by PrusaSlicer 2.7.1+win64 on 2024-01-19 at 09:01:30 UTC\n'
    + '; filament used [mm] = 4069.38\n; estimated printing time (normal mode) = 1h 16m 1s\n; filament_diameter = 1.75\n');
  assert.deepEqual(prusa.report, { name: 'PrusaSlicer 2.7.1+win64', estimatedPrintTime: 4561, estimatedModelTime: null,
    filamentLength: [4069.38], filamentDiameter: [1.75] });
  const cura = parseSlicerComments(';FLAVOR:Marlin\n;TIME:420\n;Filament used: 0.32958m, 1.5m\n;Generated with Cura_SteamEngine 4.8.0\n');
  assert.equal(cura.report.name, 'Cura_SteamEngine 4.8.0');
  assert.equal(cura.report.estimatedPrintTime, 420);
  assert.deepEqual(cura.report.filamentLength, [329.58, 1500]);
  const s3d = parseSlicerComments('; G-Code generated by Simplify3D(R) Version 4.1.2\n;   filamentDiameter,2.85\n'
    + ';   Build time: 1 hours 2 minutes\n;   Filament length: 1234.5 mm (1.23 m)\n');
  assert.deepEqual(s3d.report, { name: 'Simplify3D 4.1.2', estimatedPrintTime: 3720, estimatedModelTime: null,
    filamentLength: [1234.5], filamentDiameter: [2.85] });
  const bambu = parseSlicerComments('; BambuStudio 01.08.04.51\n; model printing time: 1h 0m 1s; total estimated time: 1h 6m 2s\n'
    + '; filament_diameter: 1.75,1.75\n');
  assert.deepEqual(bambu.report, { name: 'BambuStudio 01.08.04.51', estimatedPrintTime: 3962, estimatedModelTime: 3601,
    filamentLength: null, filamentDiameter: [1.75, 1.75] });
  // What the file was sliced for (the farm queue's profile match), from PrusaSlicer's config block at the end.
  const target = parseSlicerComments('; generated by PrusaSlicer 2.7.1\n; bed_shape = 0x0,250x0,250x210,0x210\n'
    + '; filament_type = PETG;PLA\n; nozzle_diameter = 0.6,0.4\n');
  assert.deepEqual(target.report.slicedFor, { bedX: 250, bedY: 210, nozzleDiameter: 0.6, filamentType: 'PETG' });
  assert.deepEqual(parseSlicerComments('; bed_shape = nonsense\n; nozzle_diameter = 0.4\n').report.slicedFor,
    { bedX: null, bedY: null, nozzleDiameter: 0.4, filamentType: null });
});

test('comment values with long runs (digits, spaces) are read in time linear in their length, as short ones are', () => {
  // Read by backtracking expressions, a 200 KB file of one such comment took 249 s to analyse; these took ≈ 4 s together.
  const n = 20_000;
  const t0 = performance.now();
  const meta = parseSlicerComments([
    `; estimated printing time (normal mode) = ${'1'.repeat(n)}x 2h`,
    `;SETTING_3 {"global_quality": "[general]\\\\nfoo = x${' '.repeat(n)}y\\\\nbar =  2 \\\\n"}`,
    `; Filament length: ${'1'.repeat(n)} x 12.5 mm`,
  ].join('\n'));
  const ms = performance.now() - t0;
  assert.equal(meta.report.estimatedPrintTime, 7200);
  assert.equal(meta.config.get('foo'), `x${' '.repeat(n)}y`);
  assert.equal(meta.config.get('bar'), '2');
  assert.deepEqual(meta.report.filamentLength, [12.5]);
  assert.ok(ms < 1500, `${ms.toFixed(0)} ms`);
  // Short forms read as before: a number is read whole, a Cura value is trimmed and one line.
  assert.equal(parseDuration('1.5.5h'), 5.5 * 3600);
  assert.equal(parseDuration('12.5 h 30m'), 12.5 * 3600 + 1800);
  const cura = parseSlicerComments(';SETTING_3 {"x": "[s]\\\\na = b \\\\nc =\\\\nd=e\rf\\\\n"}').config;
  assert.equal(cura.get('a'), 'b');
  assert.equal(cura.get('c'), '');
  assert.equal(cura.has('d'), false, 'a value with a line break inside is not a value');
});

test('a line longer than the read buffer is skipped, the lines around it still count', async () => {
  const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { analyseFile } = await import('../../../src/files/analysis/analyse-file.ts');
  const dir = await mkdtemp(join(tmpdir(), 'gantry-analysis-'));
  try {
    const path = join(dir, 'long.gcode');
    await writeFile(path, `M83\nG1 X10 E1 F600\n;${'x'.repeat(3 << 20)}\nG1 X20 E1\n`);
    const r = analyseFile(path);
    close(r.filament.tool0?.length, 2);
    close(r.printingArea.maxX, 20);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('random bytes and G-code-like junk never throw and never give infinite or NaN figures', () => {
  // A fixed-seed generator keeps the test deterministic.
  let seed = 42;
  const rand = (): number => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x7fffffff; };
  const alphabet = 'GMTXYZEFIJRSP0123456789.-+ ;*()\n\t\r ';
  for (let round = 0; round < 20; round++) {
    const bytes = Buffer.alloc(20000);
    for (let i = 0; i < bytes.length; i++) {
      bytes[i] = round % 2 === 0 ? Math.floor(rand() * 256) : alphabet.charCodeAt(Math.floor(rand() * alphabet.length));
    }
    const r = analyseBuffer(Buffer.concat([bytes, Buffer.from(`\nG1 X1 E${'9'.repeat(400)}\nM83\nG1 X2 E1\n`)]));
    for (const v of [...Object.values(r.printingArea), ...Object.values(r.travelArea), ...Object.values(r.dimensions)]) {
      assert.ok(v === null || Number.isFinite(v), `round ${round}: ${v}`);
    }
    assert.ok(r.estimatedPrintTime === undefined || Number.isFinite(r.estimatedPrintTime), `round ${round}: time`);
    for (const f of Object.values(r.filament)) assert.ok(Number.isFinite(f.length) && Number.isFinite(f.volume));
  }
});

test('arcs are planned as 1 mm chords: a tight circle runs slower than a straight line of the same length, a wide one not', () => {
  const limits = 'M201 X1000 Y1000\nM204 P1000 T1000\nM205 X8 Y8\n';
  const line = (len: number): number => analyseBuffer(`${limits}M83\nG1 X0 Y0 F6000\nG1 X${len} E1\n`).estimatedPrintTime!;
  const circle = (r: number): number => analyseBuffer(`${limits}M83\nG1 X0 Y0 F6000\nG2 I${r} J0 E1\n`).estimatedPrintTime!;
  const tight = circle(2), wide = circle(100);
  assert.ok(tight > 1.5 * line(2 * Math.PI * 2), `r=2 circle ${tight} s vs line ${line(2 * Math.PI * 2)} s`);
  assert.ok(Math.abs(wide / line(2 * Math.PI * 100) - 1) < 0.01, `r=100 circle ${wide} s vs line ${line(2 * Math.PI * 100)} s`);
});

test('an arc takes exactly as long as the same 1 mm chords written out as G1 moves (CW helix and CCW circle)', () => {
  const limits = 'M201 X1500 Y1500 Z200\nM203 Z12\nM204 P1500 T1500\nM205 X8 Y8 Z0.4 E4.5\n';
  const polygon = (cx: number, cy: number, r: number, a0: number, sweep: number, z0: number, dz: number, e: number): string => {
    const n = Math.round(Math.abs(sweep) * r); // the firmware's chord count: arc length / 1 mm
    let out = '';
    for (let i = 1; i <= n; i++) {
      const a = a0 + (sweep * i) / n; // fixed notation: "1e-16" would read as an E word
      out += `G1 X${(cx + r * Math.cos(a)).toFixed(9)} Y${(cy + r * Math.sin(a)).toFixed(9)} Z${(z0 + (dz * i) / n).toFixed(9)} E${(e / n).toFixed(9)}\n`;
    }
    return out;
  };
  const start = `${limits}M83\nG1 X10 Y0 Z1 F3000\n`;
  // Clockwise about the origin from (10, 0) to (0, 10) is 270°, climbing 2 mm on the way.
  const helix = analyseBuffer(`${start}G2 X0 Y10 Z3 I-10 J0 E9\nG1 X0 Y20 E1\n`).estimatedPrintTime!;
  const helixChords = analyseBuffer(`${start}${polygon(0, 0, 10, 0, -1.5 * Math.PI, 1, 2, 9)}G1 X0 Y20 E1\n`).estimatedPrintTime!;
  close(helix, helixChords, 1e-6 * helixChords, 'CW helix');
  const circle = analyseBuffer(`${start}G3 I-4 J3 E5\n`).estimatedPrintTime!; // r = 5 about (6, 3)
  const a0 = Math.atan2(-3, 4);
  const circleChords = analyseBuffer(`${start}${polygon(6, 3, 5, a0, 2 * Math.PI, 1, 0, 5)}`).estimatedPrintTime!;
  close(circle, circleChords, 1e-6 * circleChords, 'CCW circle');
});

test('degenerate arcs (zero radius, R between identical points) move straight and count E once', () => {
  const r = analyseBuffer('M83\nG1 X10 Y0 F600\nG2 X20 Y0 I0 J0 E2\nG2 X20 Y0 R5 E3\nG3 X30 Y0 R5 E1\n');
  close(r.filament.tool0?.length, 6);
  close(r.printingArea.maxX, 30);
});

test("Klipper: SET_VELOCITY_LIMIT sets the acceleration and a 90° corner passes at square_corner_velocity", () => {
  const r = analyseBuffer('SET_VELOCITY_LIMIT ACCEL=1000 SQUARE_CORNER_VELOCITY=5\nM83\nG1 F3000\nG1 X10 E1\nG1 Y10 E1\n');
  assert.equal(r.gantry.cornering, 'square-corner-velocity');
  assert.equal(r.gantry.limitsSource, 'file');
  close(r.estimatedPrintTime, trapezoidTime(10, 0.05, 5, 50, 1000) + trapezoidTime(10, 5, 0, 50, 1000), 1e-9);
  // A Klipper-flavoured slicer config alone selects the model with Klipper's default of 5 mm/s.
  const flavoured = analyseBuffer('M83\nG1 F3000\nG1 X10 E1\nG1 Y10 E1\n; gcode_flavor = klipper\n; machine_max_acceleration_extruding = 1000\n'
    + '; machine_max_acceleration_x = 1000\n; machine_max_acceleration_y = 1000\n');
  assert.equal(flavoured.gantry.cornering, 'square-corner-velocity');
  close(flavoured.estimatedPrintTime, r.estimatedPrintTime!, 1e-9);
});

test("filament: a Cura file counts from its first ;LAYER: as Cura does, the total keeps the start G-code's purge", () => {
  const body = 'M82\nG92 E0\nG1 X0.1 Y20 Z0.3 F1500 E15 ; purge line\nG1 X0.4 Y200 E30\nG92 E0\nG1 E-5\n'
    + ';LAYER:0\nG1 X10 Y10 E0\nG1 X20 Y10 E12\nG1 E7\n;LAYER:1\nG1 X20 Y20 E20\n';
  const cura = analyseBuffer(`;FLAVOR:Marlin\n;Generated with Cura_SteamEngine 4.8.0\n${body}`);
  assert.equal(cura.gantry.filamentAccounting, 'from-first-layer');
  close(cura.gantry.filamentTotal.tool0?.length, 50); // 30 of purge, the 5 retracted are primed back, then 20 more
  close(cura.filament.tool0?.length, 20);
  close(cura.filament.tool0?.volume, (20 * Math.PI * 0.875 ** 2) / 1000, 1e-9);
  // The same moves from another slicer: its figure counts the whole file, and so do we.
  const other = analyseBuffer(`; generated by PrusaSlicer 2.7.1 on 2024-01-19\n${body}`);
  assert.equal(other.gantry.filamentAccounting, 'whole-file');
  close(other.filament.tool0?.length, 50);
  close(other.gantry.filamentTotal.tool0?.length, 50);
});
