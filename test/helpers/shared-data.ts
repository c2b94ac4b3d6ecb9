// Where the project's shared material lives: `../shared` beside the repository (as in CI), or GANTRY_SHARED.
import { resolve, join } from 'node:path';

export const SHARED_DIR = process.env.GANTRY_SHARED ?? resolve(import.meta.dirname, '../../../shared');
export const GCODE_DIR = join(SHARED_DIR, 'data/gcode');
export const BENCH_SRC_DIR = join(SHARED_DIR, 'bench');
/** A small real slicer file (PrusaSlicer 2.6.1, part of a Benchy's first layer). */
export const SMALL_GCODE = join(GCODE_DIR, 'prusaslicer-2.6.1_small.gcode');
