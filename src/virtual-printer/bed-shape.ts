// The virtual printer's bed: a tilt plus a warp (set in its options), probed on a grid and reported in the text each
// firmware prints (Marlin bilinear and UBL, Marlin MBL, Prusa G81, Klipper BED_MESH_OUTPUT), so bed-mesh features can
// be tried without hardware.

export type MeshFormat = 'bilinear' | 'ubl' | 'mbl' | 'prusa' | 'klipper';

export interface BedShape {
  /** Bed size in mm; the probe grid keeps `margin` mm from the edges. */
  width: number;
  depth: number;
  margin: number;
  /** mm of height per 100 mm along X and along Y. */
  tiltX: number;
  tiltY: number;
  /** Amplitude in mm of a dome (positive: the centre is high). */
  warp: number;
  /** Probe points per axis. */
  points: number;
  /** What G29/M420 V print. */
  format: MeshFormat;
}

export const DEFAULT_BED_SHAPE: BedShape = { width: 220, depth: 220, margin: 10, tiltX: 0.15, tiltY: -0.1, warp: 0.08, points: 5, format: 'bilinear' };

/** The bed's height at (x, y), relative to its centre. */
export function bedHeight(shape: BedShape, x: number, y: number): number {
  const cx = shape.width / 2;
  const cy = shape.depth / 2;
  const u = (x - cx) / cx;
  const v = (y - cy) / cy;
  return shape.tiltX * (x - cx) / 100 + shape.tiltY * (y - cy) / 100 + shape.warp * (1 - (u * u + v * v) / 2);
}

export interface ProbedMesh { xs: number[]; ys: number[]; z: number[][] }

/** Probes the grid: z[row][col], row 0 at the front (smallest Y). */
export function probe(shape: BedShape): ProbedMesh {
  const n = Math.max(2, Math.min(15, Math.round(shape.points)));
  const axis = (size: number) => Array.from({ length: n }, (_, i) => shape.margin + (i * (size - 2 * shape.margin)) / (n - 1));
  const xs = axis(shape.width);
  const ys = axis(shape.depth);
  const z = ys.map((y) => xs.map((x) => Math.round(bedHeight(shape, x, y) * 1000) / 1000));
  return { xs, ys, z };
}

const signed = (v: number, digits = 3) => `${v >= 0 ? '+' : ''}${v.toFixed(digits)}`;
const pad = (s: string, w: number) => s.padStart(w);

/** The lines the firmware prints for a mesh, in its own layout. */
export function meshReport(format: MeshFormat, mesh: ProbedMesh): string[] {
  const { xs, ys, z } = mesh;
  const n = xs.length;
  const header = xs.map((_, i) => pad(String(i), 7)).join('');
  switch (format) {
    case 'bilinear':
      return ['Bilinear Leveling Grid:', `   ${header}`, ...z.map((row, j) => ` ${j} ${row.map((v) => pad(signed(v), 7)).join('')}`)];
    case 'mbl':
      return ['Mesh Bed Level data:', `${n} x ${n} mesh. Z offset: 0.00000`, 'Measured points:', `   ${header}`,
        ...z.map((row, j) => ` ${j} ${row.map((v) => pad(signed(v, 5), 10)).join('')}`)];
    case 'prusa':
      return [`Num X,Y: ${n},${n}`, 'Z search height: 5', 'Measured points:', ...z.map((row) => row.map((v) => pad(v.toFixed(5), 9)).join(''))];
    case 'klipper':
      return ['// Mesh Leveling Probed Z positions:', ...z.map((row) => `// ${row.map((v) => v.toFixed(6)).join(' ')}`),
        `Mesh X,Y: ${n},${n}`, 'Search Height: 5', 'Mesh Offsets: X=0.0000, Y=0.0000',
        `Mesh Average: ${(z.flat().reduce((a, b) => a + b, 0) / (n * n)).toFixed(2)}`,
        `Mesh Range: min=${Math.min(...z.flat()).toFixed(4)} max=${Math.max(...z.flat()).toFixed(4)}`,
        'Interpolation Algorithm: lagrange', 'Measured points:',
        // Klipper prints the highest Y first.
        ...[...z].reverse().map((row) => `  ${row.map((v) => v.toFixed(6)).join('  ')}`)];
    case 'ubl': {
      const last = n - 1;
      const mm = (x: number, y: number) => `(${Math.round(x)},${Math.round(y)})`;
      const corners = (a: string, b: string) => a + ' '.repeat(Math.max(1, 9 * n - a.length - b.length)) + b;
      const rows: string[] = [];
      // The back row first, a blank line between rows, the probe's last position in brackets.
      for (let j = last; j >= 0; j--) {
        rows.push(z[j].map((v, i) => (i === 0 && j === 0 ? `[${pad(v.toFixed(3), 6)}]` : ` ${pad(v.toFixed(3), 6)} `)).join(' '));
        if (j > 0) rows.push('');
      }
      return ['Bed Topography Report:', '', corners(`(0,${last})`, `(${last},${last})`), corners(mm(xs[0], ys[last]), mm(xs[last], ys[last])),
        ...rows, corners(mm(xs[0], ys[0]), mm(xs[last], ys[0])), corners('(0,0)', `(${last},0)`)];
    }
  }
}
