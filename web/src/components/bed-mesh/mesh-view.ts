// Drawing a bed mesh on a 2D canvas: a colour scale in mm, a flat heat map, and a 3D surface seen from a rotatable
// viewpoint (a painter's-order projection: the mesh is at most 15×15 quads, no WebGL needed).

export interface Grid { x: number[]; y: number[]; z: number[][] }

/** Blue (low) → white (zero) → red (high), symmetric around 0 so a flat bed looks white. */
export function colour(v: number, limit: number): string {
  const t = Math.max(-1, Math.min(1, limit > 0 ? v / limit : 0));
  const k = Math.round(255 * (1 - Math.abs(t)));
  return t >= 0 ? `rgb(255,${k},${k})` : `rgb(${k},${k},255)`;
}

export function limitOf(z: number[][]): number {
  return Math.max(0.001, ...z.flat().map(Math.abs));
}

export function drawHeatMap(ctx: CanvasRenderingContext2D, g: Grid, w: number, h: number, text: string): void {
  const rows = g.z.length;
  const cols = g.z[0].length;
  const limit = limitOf(g.z);
  const cw = w / cols;
  const ch = h / rows;
  ctx.clearRect(0, 0, w, h);
  ctx.font = `${Math.max(9, Math.min(14, cw / 4))}px sans-serif`;
  ctx.textAlign = 'center';
  ctx.textBaseline = 'middle';
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      // Row 0 is the front of the bed: drawn at the bottom, as one looks at the printer.
      const top = h - (r + 1) * ch;
      ctx.fillStyle = colour(g.z[r][c], limit);
      ctx.fillRect(c * cw, top, cw, ch);
      ctx.fillStyle = '#111';
      ctx.fillText(g.z[r][c].toFixed(3), c * cw + cw / 2, top + ch / 2);
    }
  }
  ctx.strokeStyle = text;
  ctx.strokeRect(0.5, 0.5, w - 1, h - 1);
}

export interface View { yaw: number; pitch: number; zoom: number; exaggerate: number }

export function drawSurface(ctx: CanvasRenderingContext2D, g: Grid, w: number, h: number, view: View, text: string): void {
  const rows = g.z.length;
  const cols = g.z[0].length;
  const limit = limitOf(g.z);
  const xs = g.x, ys = g.y;
  const spanX = (xs.at(-1)! - xs[0]) || 1;
  const spanY = (ys.at(-1)! - ys[0]) || 1;
  const span = Math.max(spanX, spanY);
  const scale = (Math.min(w, h) / span) * 0.6 * view.zoom;
  const cy = Math.cos(view.yaw), sy = Math.sin(view.yaw), cp = Math.cos(view.pitch), sp = Math.sin(view.pitch);
  // Bed centre at the origin; z exaggerated so tenths of a millimetre show on a 200 mm bed.
  const zScale = (span * 0.3 * view.exaggerate) / limit;
  const project = (px: number, py: number, pz: number) => {
    const x = px - (xs[0] + spanX / 2), y = py - (ys[0] + spanY / 2), z = pz * zScale;
    const rx = x * cy - y * sy;
    const ry = x * sy + y * cy;
    return { sx: w / 2 + rx * scale, sy: h / 2 + (ry * sp - z * cp) * scale, depth: ry * cp + z * sp };
  };
  const quads: { pts: { sx: number; sy: number }[]; depth: number; v: number }[] = [];
  for (let r = 0; r + 1 < rows; r++) {
    for (let c = 0; c + 1 < cols; c++) {
      const corners = [[r, c], [r, c + 1], [r + 1, c + 1], [r + 1, c]].map(([i, j]) => project(xs[j], ys[i], g.z[i][j]));
      const v = (g.z[r][c] + g.z[r][c + 1] + g.z[r + 1][c + 1] + g.z[r + 1][c]) / 4;
      quads.push({ pts: corners, depth: corners.reduce((a, p) => a + p.depth, 0) / 4, v });
    }
  }
  ctx.clearRect(0, 0, w, h);
  // Far quads first.
  quads.sort((a, b) => b.depth - a.depth);
  ctx.strokeStyle = 'rgba(0,0,0,0.35)';
  for (const q of quads) {
    ctx.beginPath();
    q.pts.forEach((p, i) => (i === 0 ? ctx.moveTo(p.sx, p.sy) : ctx.lineTo(p.sx, p.sy)));
    ctx.closePath();
    ctx.fillStyle = colour(q.v, limit);
    ctx.fill();
    ctx.stroke();
  }
  // The probe points.
  ctx.fillStyle = text;
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) {
    const p = project(xs[c], ys[r], g.z[r][c]);
    ctx.beginPath();
    ctx.arc(p.sx, p.sy, 2.5, 0, Math.PI * 2);
    ctx.fill();
  }
  // Front edge label, so the viewer knows which way the bed faces.
  const front = project(xs[0] + spanX / 2, ys[0] - spanY * 0.08, 0);
  ctx.font = '12px sans-serif';
  ctx.textAlign = 'center';
  ctx.fillText('front', front.sx, front.sy);
}

/** B − A cell by cell, when both have the same grid. */
export function difference(a: Grid, b: Grid): Grid | null {
  if (a.z.length !== b.z.length || a.z[0].length !== b.z[0].length) return null;
  return { x: b.x, y: b.y, z: b.z.map((row, r) => row.map((v, c) => Math.round((v - a.z[r][c]) * 1000) / 1000)) };
}
