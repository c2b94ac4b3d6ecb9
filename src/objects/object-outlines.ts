// The objects of a G-code file as the analysis stores them: each label's name and id (by first appearance), and its
// outline, the convex hull of the points its extrusion moves reach (issue #54; plugins.md §2.2).
import { ObjectLabels } from './object-labels.ts';

/** One object in the file metadata (`gcodeAnalysis.gantry.objects`). */
export interface FileObject {
  id: number;
  name: string;
  /** Convex hull of the extrusion end points, counter-clockwise, in mm; [] when nothing of it was extruded. */
  polygon: [number, number][];
  /** Bounding box of the polygon (the plugin's min/max fields), null when empty. */
  min: [number, number] | null;
  max: [number, number] | null;
}

/** Points are kept on a 0.1 mm grid, so a file of millions of moves holds a few thousand points per object. */
const GRID = 10;

export class ObjectOutlines {
  readonly labels = new ObjectLabels();
  private current = -1;
  private readonly points: Array<Set<number>> = [];

  /** One file line (text, no line break). */
  line(text: string): void {
    const ev = this.labels.feed(text);
    if (ev === null || ev.kind === 'define') return;
    this.current = ev.kind === 'start' ? ev.id : -1;
  }

  /** An extruding move from (x0, y0) to (x1, y1) inside whatever object is current. */
  extruded(x0: number, y0: number, x1: number, y1: number): void {
    if (this.current < 0) return;
    const set = (this.points[this.current] ??= new Set());
    set.add(key(x0, y0));
    set.add(key(x1, y1));
  }

  get active(): boolean { return this.labels.names.length > 0; }

  result(): FileObject[] {
    return this.labels.names.map((name, id) => {
      const pts = [...(this.points[id] ?? [])].map(unkey);
      const polygon = convexHull(pts);
      if (polygon.length === 0) return { id, name, polygon, min: null, max: null };
      const xs = polygon.map((p) => p[0]);
      const ys = polygon.map((p) => p[1]);
      return { id, name, polygon, min: [Math.min(...xs), Math.min(...ys)], max: [Math.max(...xs), Math.max(...ys)] };
    });
  }
}

// Integer grid coordinates packed in one number (±50 m on 0.1 mm).
const SPAN = 1_000_000;
function key(x: number, y: number): number {
  return (Math.round(x * GRID) + SPAN / 2) * SPAN + (Math.round(y * GRID) + SPAN / 2);
}
function unkey(k: number): [number, number] {
  const gx = Math.floor(k / SPAN);
  const gy = k - gx * SPAN;
  return [(gx - SPAN / 2) / GRID, (gy - SPAN / 2) / GRID];
}

/** Andrew's monotone chain; counter-clockwise, no repeated first point. */
export function convexHull(points: [number, number][]): [number, number][] {
  const p = [...points].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  if (p.length < 3) return p;
  const cross = (o: [number, number], a: [number, number], b: [number, number]) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const lower: [number, number][] = [];
  for (const q of p) {
    while (lower.length >= 2 && cross(lower[lower.length - 2], lower[lower.length - 1], q) <= 0) lower.pop();
    lower.push(q);
  }
  const upper: [number, number][] = [];
  for (let i = p.length - 1; i >= 0; i--) {
    const q = p[i];
    while (upper.length >= 2 && cross(upper[upper.length - 2], upper[upper.length - 1], q) <= 0) upper.pop();
    upper.push(q);
  }
  return [...lower.slice(0, -1), ...upper.slice(0, -1)];
}
