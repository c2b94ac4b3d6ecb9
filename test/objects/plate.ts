// The cancel-object tests' plate: three cubes sliced by the PrusaSlicer CLI with object labels, and the file's
// command lines with the object each belongs to.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cubeStl } from '../helpers/stl.ts';
import { ObjectLabels } from '../../src/objects/object-labels.ts';

const run = promisify(execFile);

/** Three 8 mm cubes on one plate, PrusaSlicer's `; printing object` labels (its "OctoPrint" label mode). */
export async function slicePlate(dir: string): Promise<string> {
  const stl = join(dir, 'cube.stl');
  await writeFile(stl, cubeStl(8));
  const out = join(dir, 'plate.gcode');
  await run('prusa-slicer', ['--export-gcode', '--gcode-label-objects', '--layer-height', '0.3', '--fill-density', '10%', '--perimeters', '1',
    '--skirts', '0', '--duplicate', '3', '-o', out, stl], { timeout: 120_000 });
  return readFile(out, 'utf8');
}

/** `no`: the 1-based line number in the file. */
export interface FileLine { cmd: string; object: number; move: boolean; no: number }

/** The file's command lines with the object each belongs to (-1 outside any). */
export function fileLines(gcode: string): FileLine[] {
  const labels = new ObjectLabels();
  let object = -1;
  const out: FileLine[] = [];
  let no = 0;
  for (const raw of gcode.split('\n')) {
    no++;
    const ev = labels.feed(raw.trim());
    if (ev !== null && ev.kind !== 'define') object = ev.kind === 'start' ? ev.id : -1;
    const cmd = raw.replace(/;.*/, '').trim();
    if (cmd !== '') out.push({ cmd, object, move: /^G[0-3](?![0-9])/.test(cmd), no });
  }
  return out;
}

