// Reads a bed mesh out of the firmware's replies, line by line, in every layout the common firmware prints (Marlin
// bilinear `G29`/`M420 V`, Marlin UBL `G29 T`, Marlin MBL, Prusa `G81`, Klipper `BED_MESH_OUTPUT`): one grid with row 0
// at the front of the bed. Pure: the bed-mesh service feeds it what printer.watchReplies gives.

export type MeshFormat = 'marlin-bilinear' | 'marlin-ubl' | 'marlin-mbl' | 'prusa' | 'klipper';

export interface CapturedMesh {
  format: MeshFormat;
  /** z[row][col]: row 0 at the front (smallest Y), col 0 at the left (smallest X); the cells as printed, in mm. */
  z: number[][];
  /** Probe point coordinates the firmware gave (UBL's corners), else null: the bed's extents decide. */
  extents: { xMin: number; xMax: number; yMin: number; yMax: number } | null;
}

const STARTS: [RegExp, MeshFormat][] = [
  [/^Bilinear Leveling Grid:/, 'marlin-bilinear'],
  [/^Subdivided with CATMULL ROM Leveling Grid:/, 'marlin-bilinear'],
  [/^Bed Topography Report/, 'marlin-ubl'],
  [/^Mesh Bed Level data:/, 'marlin-mbl'],
  [/^Num X,Y:/, 'prusa'],
  [/^Mesh X,Y:/, 'klipper'],
];

/** A row of numbers: digits, signs, dots, brackets (UBL's probe mark) and spaces, nothing else (not `T:20.0 /0.0`). */
const ROW = /^[\s\d.+\-[\]]+$/;
const PAIR = /\((-?\d{1,6}(?:\.\d{1,6})?),(-?\d{1,6}(?:\.\d{1,6})?)\)/g;
/** At most this many rows or columns: a longer run is not a mesh. */
const MAX_SIDE = 64;

export class MeshCapture {
  private format: MeshFormat | null = null;
  private rows: number[][] = [];
  private pairLines: [number, number][][] = [];
  private expected: [number, number] | null = null;
  /** Klipper and Prusa print their rows after `Measured points:`; lines before it are headers. */
  private measured = false;

  /** Whether a mesh is being read. */
  get active(): boolean { return this.format !== null; }

  /** Feeds one received line; returns the mesh when this line completed one. */
  feed(raw: string): CapturedMesh | null {
    const line = raw.trim();
    for (const [re, format] of STARTS) {
      if (re.test(line)) {
        // A subdivided grid replaces the probed one printed before it; any other start begins afresh.
        this.begin(format);
        const size = /^(?:Num|Mesh) X,Y:\s*(\d{1,2}),\s*(\d{1,2})/.exec(line);
        if (size) this.expected = [Number(size[1]), Number(size[2])];
        return null;
      }
    }
    if (!this.format) return null;
    if (/^ok\b/.test(line)) return this.finish();
    if (/^Measured points:/.test(line)) {
      this.measured = true;
      this.rows = [];
      return null;
    }
    if (this.format === 'marlin-ubl' && line.includes('(')) {
      const pairs = [...line.matchAll(PAIR)].map((m) => [Number(m[1]), Number(m[2])] as [number, number]);
      if (pairs.length === 2) this.pairLines.push(pairs);
      return null;
    }
    if (line === '' || !ROW.test(line)) return null;
    if ((this.format === 'klipper' || this.format === 'prusa') && !this.measured) return null;
    // Only numbers with a decimal point are cells: row and column labels are integers.
    const cells = line.replace(/[[\]]/g, ' ').split(/\s+/).filter((t) => t.includes('.')).map(Number);
    if (cells.length === 0 || cells.some((c) => !Number.isFinite(c))) return null;
    if (cells.length > MAX_SIDE || this.rows.length >= MAX_SIDE) return this.abandon();
    this.rows.push(cells);
    if (this.expected && this.rows.length === this.expected[1]) return this.finish();
    return null;
  }

  private begin(format: MeshFormat): void {
    this.format = format;
    this.rows = [];
    this.pairLines = [];
    this.expected = null;
    this.measured = false;
  }

  private abandon(): null {
    this.format = null;
    return null;
  }

  private finish(): CapturedMesh | null {
    const format = this.format;
    const rows = this.rows;
    this.format = null;
    if (!format || rows.length < 2) return null;
    const width = rows[0].length;
    if (width < 2 || rows.some((r) => r.length !== width)) return null;
    // UBL and Klipper print the back row first.
    const z = format === 'marlin-ubl' || format === 'klipper' ? [...rows].reverse() : rows;
    let extents: CapturedMesh['extents'] = null;
    // UBL's second and third corner lines are in mm (the first and last are mesh indices).
    if (format === 'marlin-ubl' && this.pairLines.length >= 3) {
      const mm = [...this.pairLines[1], ...this.pairLines[2]];
      extents = { xMin: Math.min(...mm.map((p) => p[0])), xMax: Math.max(...mm.map((p) => p[0])), yMin: Math.min(...mm.map((p) => p[1])), yMax: Math.max(...mm.map((p) => p[1])) };
    }
    return { format, z, extents };
  }
}
