// The file state at a resume position: layers, Z, E (absolute and relative, G92), fan, temperatures, line/layer offsets; the byte reader against the reference reader.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { applyLineBytes, initialState, offsetOfLayer, offsetOfLine, scanTo, type MachineState } from '../../src/recovery/gcode-state.ts';
import { fileLineSource } from '../../src/printer/job/file-line-source.ts';
import { GCODE_DIR } from '../helpers/shared-data.ts';
import { needs } from '../helpers/tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const GCODE = [
  'M140 S55', 'M104 S210', 'G28', 'G90', 'M82', 'G92 E0', // 1-6
  'G1 Z0.2 F600', 'G1 X10 Y10 E1.5 F1200', 'M106 S100', // 7-9: layer 0
  'G1 Z0.6 F600', 'G1 Z0.4', 'G1 X20 E3', // 10-12: a lift and back down, then layer 1 at 0.4
  'M83', 'G92 E0', 'G1 Z0.6', 'G1 X30 E0.5 ; relative', 'G1 X40 E0.5', 'M107', // 13-18: layer 2
].join('\n') + '\n';

test('scanning a file gives Z, layer, E, fan and targets at a position, and finds lines and layers', async (t) => {
  const dir = await tempDir(t, 'gantry-gstate-');
  const file = join(dir, 'a.gcode');
  await writeFile(file, GCODE);
  const line13 = await offsetOfLine(file, 13);
  assert.equal(line13, Buffer.byteLength(GCODE.split('\n').slice(0, 12).join('\n')) + 1);
  const s = await scanTo(file, initialState(), line13!);
  assert.equal(s.line, 12);
  assert.equal(s.layer, 1, 'a Z lift without extrusion is no layer');
  assert.equal(s.z, 0.4);
  assert.equal(s.e, 3);
  assert.equal(s.relativeE, false);
  assert.equal(s.fan, 100);
  assert.deepEqual([s.tools.tool0, s.bed], [210, 55]);
  // Incremental: continuing from there equals scanning from the start.
  const size = Buffer.byteLength(GCODE);
  const end = await scanTo(file, s, size);
  const fresh = await scanTo(file, initialState(), size);
  assert.deepEqual(end, fresh);
  assert.equal(end.layer, 2);
  assert.equal(end.e, 1);
  assert.equal(end.relativeE, true);
  assert.equal(end.fan, 0);
  // Layer 1 begins at its Z move (line 11), layer 2 at line 15; layer 3 does not exist; nor does line 99.
  assert.equal(await offsetOfLayer(file, 1, size), await offsetOfLine(file, 11));
  assert.equal(await offsetOfLayer(file, 2, size), await offsetOfLine(file, 15));
  assert.equal(await offsetOfLayer(file, 3, size), null);
  assert.equal(await offsetOfLine(file, 99), null);
});

/** The line reader as first written (a regex per word, a Map and a string per line): the byte reader must agree with it. */
function referenceApply(s: MachineState, raw: string, lineStart: number): void {
  const semi = raw.indexOf(';');
  const cmd = (semi === -1 ? raw : raw.slice(0, semi)).trim().toUpperCase();
  if (!cmd) return;
  const sp = cmd.search(/[\s]/);
  const code = (sp === -1 ? cmd : cmd.slice(0, sp)).replace(/^N\d+\s*/, '');
  if (code[0] === 'T' && /^T\d+$/.test(code)) { s.tool = Number(code.slice(1)); return; }
  const w = new Map<string, number>();
  for (const m of (sp === -1 ? '' : cmd.slice(sp)).matchAll(/([A-Z])\s*(-?\d*\.?\d+)/g)) if (!w.has(m[1])) w.set(m[1], Number(m[2]));
  const axis = (k: 'x' | 'y' | 'z', v: number | undefined) => { if (v !== undefined) s[k] = s.relativeXYZ && s[k] !== null ? (s[k] as number) + v : v; };
  const t = w.get('S') ?? w.get('R');
  switch (code) {
    case 'G0': case 'G1': case 'G2': case 'G3': {
      const zBefore = s.z;
      axis('x', w.get('X')); axis('y', w.get('Y')); axis('z', w.get('Z'));
      if (s.z !== zBefore && s.z !== null && (s.layerZ === null || s.z > s.layerZ)) s.layerStart = { filepos: lineStart, line: s.line };
      if (w.has('F')) s.f = w.get('F')!;
      const e = w.get('E');
      if (e !== undefined) {
        const delta = s.relativeE ? e : e - s.e;
        s.e = s.relativeE ? s.e + e : e;
        if (delta > 0 && s.z !== null && (s.layerZ === null || s.z > s.layerZ + 1e-6)) { s.layer++; s.layerZ = s.z; }
      }
      return;
    }
    case 'G28': s.x = s.y = s.z = null; if (w.size === 0 || w.has('Z')) s.z = 0; return;
    case 'G90': s.relativeXYZ = false; s.relativeE = false; return;
    case 'G91': s.relativeXYZ = true; s.relativeE = true; return;
    case 'M82': s.relativeE = false; return;
    case 'M83': s.relativeE = true; return;
    case 'G92': if (w.has('E')) s.e = w.get('E')!; if (w.has('Z')) s.z = w.get('Z')!; return;
    case 'M104': case 'M109': if (t !== undefined) s.tools[`tool${w.get('T') ?? s.tool}`] = t; return;
    case 'M140': case 'M190': if (t !== undefined) s.bed = t; return;
    case 'M141': case 'M191': if (t !== undefined) s.chamber = t; return;
    case 'M106': s.fan = Math.max(0, Math.min(255, w.get('S') ?? 255)); return;
    case 'M107': s.fan = 0; return;
    default:
  }
}

function referenceScan(text: string): MachineState {
  const s = initialState();
  let pos = 0;
  for (const line of text.split('\n').slice(0, -1)) {
    referenceApply(s, line, pos);
    s.line++;
    pos += Buffer.byteLength(line) + 1;
    s.filepos = pos;
  }
  return s;
}

test('the byte reader agrees with the reference reader on random lines (words, spacing, case, comments, numbers)', () => {
  const token = fc.oneof(
    fc.constantFrom('G0', 'G1', 'g1', 'G01', 'G2', 'G28', 'G90', 'G91', 'G92', 'M82', 'M83', 'M104', 'm109', 'M140', 'M190', 'M141', 'M106', 'M107', 'T0', 'T1', 'T01', 'N12', 'N5G1', 'G1000082', 'M117'),
    fc.tuple(fc.constantFrom('X', 'Y', 'Z', 'E', 'F', 'S', 'R', 'T', 'x', 'e', 'P', '-', '.', ' '), fc.stringMatching(/^ ?-?[0-9]{0,18}\.?[0-9]{0,18}\.?$/)).map(([a, b]) => a + b),
    fc.constantFrom(' ', '\t', ';', '; Z9 E9', '\r', '*12', '..', '-'),
  );
  const line = fc.array(token, { maxLength: 8 }).map((ts) => ts.join(ts.length % 2 ? ' ' : ''));
  fc.assert(fc.property(fc.array(line, { maxLength: 40 }), (lines) => {
    const text = lines.map((l) => `${l}\n`).join('');
    const s = initialState();
    const buf = Buffer.from(text, 'latin1');
    let start = 0;
    for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10, start)) {
      applyLineBytes(s, buf, start, nl, start);
      s.line++;
      start = nl + 1;
      s.filepos = start;
    }
    assert.deepEqual(s, referenceScan(text));
  }), { numRuns: 2000, examples: [[["T150000000000750300"]]] }); // a tool number beyond 2^53, found by this property once
});

test('the byte reader agrees with the reference reader on every line of real slicers\' files, across chunk boundaries', { skip: needs('shared-data') }, async () => {
  for (const name of ['prusaslicer-2.7.1_benchy_mini.gcode', 'cura-2.3.1_puzzle_all.gcode', 'bambustudio-1.8.4_eline_arcs.gcode', 'simplify3d-4.1.2_flowerpot.gcode']) {
    const path = join(GCODE_DIR, name);
    const text = await readFile(path, 'latin1');
    const size = Buffer.byteLength(text, 'latin1');
    const reference = referenceScan(text);
    assert.ok(reference.line > 10_000 && reference.layer >= 1 && reference.e !== 0, `${name}: ${reference.line} lines, ${reference.layer} layers read`);
    // In uneven steps, so that lines straddle the 64 KiB chunks at many places.
    const s = initialState();
    for (let to = 0; to < size;) {
      to = Math.min(size, to + 200_003);
      const at = text.indexOf('\n', to - 1);
      await scanTo(path, s, at === -1 ? size : at + 1);
    }
    assert.deepEqual(s, reference, name);
  }
});

test('a file with CR or CR LF line breaks scans to the same state, and its lines are found where the print reads them', { skip: needs('shared-data') }, async (t) => {
  const dir = await tempDir(t, 'gantry-breaks-');
  const lf = await readFile(join(GCODE_DIR, 'cura-2.3.1_puzzle_all.gcode'));
  const reference = referenceScan(lf.toString('latin1'));
  // CR alone keeps every offset; CR LF moves them, so only what does not depend on them is compared.
  const crPath = join(dir, 'cr.gcode');
  await writeFile(crPath, Buffer.from(lf.toString('latin1').replaceAll('\n', '\r'), 'latin1'));
  assert.deepEqual(await scanTo(crPath, initialState(), lf.length), reference, 'CR');
  const crlf = Buffer.from(lf.toString('latin1').replaceAll('\n', '\r\n'), 'latin1');
  const crlfPath = join(dir, 'crlf.gcode');
  await writeFile(crlfPath, crlf);
  const viaCrlf = await scanTo(crlfPath, initialState(), crlf.length);
  const shape = (s: MachineState) => ({ ...s, filepos: 0, layerStart: s.layerStart && { ...s.layerStart, filepos: 0 } });
  assert.deepEqual(shape(viaCrlf), shape(reference), 'CR LF');
  assert.equal(viaCrlf.filepos, crlf.length);

  // Line N starts where the print's reader ends line N − 1, for each kind of break.
  for (const path of [crPath, crlfPath]) {
    const ends: number[] = [];
    for await (const batch of fileLineSource(path)) ends.push(...batch.ends);
    assert.equal(ends.length, reference.line);
    for (const n of [2, 3, 1000, 7777, reference.line]) assert.equal(await offsetOfLine(path, n), ends[n - 2], `${path} line ${n}`);
  }
});

test('a line too long to be G-code is counted and passed over, and what follows it is read as usual', async (t) => {
  const dir = await tempDir(t, 'gantry-junk-');
  const text = `G1 Z0.2\nG1 X1 E1\n${'A'.repeat(200_000)}\rG1 Z0.4 E2\n; end\n`;
  const path = join(dir, 'junk.gcode');
  await writeFile(path, text);
  const s = await scanTo(path, initialState(), text.length);
  assert.deepEqual([s.line, s.z, s.e, s.filepos], [5, 0.4, 2, text.length]);
  assert.equal(await offsetOfLine(path, 4), text.indexOf('G1 Z0.4'));
});
