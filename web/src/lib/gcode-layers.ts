// G-code → layers of line segments for the preview: tracks absolute/relative moves and extrusion, groups by Z height.

export interface Layer {
  z: number;
  /** x1, y1, x2, y2 per segment. */
  segments: Float32Array;
  /** 1 = extruding, 0 = travel, per segment. */
  extruding: Uint8Array;
}

export interface ParsedGcode {
  layers: Layer[];
  bounds: { minX: number; maxX: number; minY: number; maxY: number };
  lines: number;
}

interface Building {
  z: number;
  seg: number[];
  ext: number[];
  hasExtrusion: boolean;
}

const WORD = /([GMTXYZEF])\s*(-?\d*\.?\d+)/gi;

export function parseGcode(text: string): ParsedGcode {
  let x = 0, y = 0, z = 0, e = 0;
  let absXYZ = true, absE = true;
  const layers = new Map<number, Building>();
  let cur: Building | undefined;
  const bounds = { minX: Infinity, maxX: -Infinity, minY: Infinity, maxY: -Infinity };
  let lines = 0;

  const layerAt = (height: number): Building => {
    const key = Math.round(height * 1000) / 1000;
    let l = layers.get(key);
    if (!l) {
      l = { z: key, seg: [], ext: [], hasExtrusion: false };
      layers.set(key, l);
    }
    return l;
  };

  // Lines end at LF, CR LF or a lone CR, as the server reads files. The next LF and CR are looked up only once a line
  // passes them (-1: none left), so a file with one kind of break is not scanned to its end for the other at every line.
  let start = 0;
  let nextLf = -2;
  let nextCr = -2;
  while (start <= text.length) {
    if (nextLf !== -1 && nextLf < start) nextLf = text.indexOf('\n', start);
    if (nextCr !== -1 && nextCr < start) nextCr = text.indexOf('\r', start);
    let end = text.length;
    let next = text.length + 1;
    if (nextCr !== -1 && (nextLf === -1 || nextCr < nextLf)) {
      end = nextCr;
      next = nextLf === nextCr + 1 ? nextCr + 2 : nextCr + 1;
    } else if (nextLf !== -1) {
      end = nextLf;
      next = nextLf + 1;
    }
    let line = text.slice(start, end);
    start = next;
    lines++;
    const semi = line.indexOf(';');
    if (semi >= 0) line = line.slice(0, semi);
    if (line.length < 2) continue;
    const c0 = line.charCodeAt(0) | 0x20;
    if (c0 !== 0x67 /* g */ && c0 !== 0x6d /* m */) {
      if (c0 !== 0x6e /* n: line number */) continue;
    }
    let g = -1, m = -1;
    let nx: number | undefined, ny: number | undefined, nz: number | undefined, ne: number | undefined;
    WORD.lastIndex = 0;
    let w: RegExpExecArray | null;
    while ((w = WORD.exec(line))) {
      const v = parseFloat(w[2]);
      switch (w[1].toUpperCase()) {
        case 'G': if (g < 0) g = v; break;
        case 'M': if (m < 0) m = v; break;
        case 'X': nx = v; break;
        case 'Y': ny = v; break;
        case 'Z': nz = v; break;
        case 'E': ne = v; break;
      }
    }
    if (m === 82) absE = true;
    else if (m === 83) absE = false;
    if (g === 90) { absXYZ = true; absE = true; continue; }
    if (g === 91) { absXYZ = false; absE = false; continue; }
    if (g === 92) {
      if (nx !== undefined) x = nx;
      if (ny !== undefined) y = ny;
      if (nz !== undefined) z = nz;
      if (ne !== undefined) e = ne;
      continue;
    }
    if (g === 28) { x = 0; y = 0; z = 0; continue; }
    if (g !== 0 && g !== 1 && g !== 2 && g !== 3) continue;
    const tx = nx === undefined ? x : absXYZ ? nx : x + nx;
    const ty = ny === undefined ? y : absXYZ ? ny : y + ny;
    const tz = nz === undefined ? z : absXYZ ? nz : z + nz;
    let de = 0;
    if (ne !== undefined) {
      de = absE ? ne - e : ne;
      e = absE ? ne : e + ne;
    }
    if (tz !== z || !cur) cur = layerAt(tz);
    if (tx !== x || ty !== y) {
      const extr = de > 0;
      cur.seg.push(x, y, tx, ty);
      cur.ext.push(extr ? 1 : 0);
      if (extr) {
        cur.hasExtrusion = true;
        if (tx < bounds.minX) bounds.minX = tx;
        if (tx > bounds.maxX) bounds.maxX = tx;
        if (ty < bounds.minY) bounds.minY = ty;
        if (ty > bounds.maxY) bounds.maxY = ty;
        if (x < bounds.minX) bounds.minX = x;
        if (x > bounds.maxX) bounds.maxX = x;
        if (y < bounds.minY) bounds.minY = y;
        if (y > bounds.maxY) bounds.maxY = y;
      }
    }
    x = tx; y = ty; z = tz;
  }

  // Heights with only travel (z-hops, the final lift) are not layers.
  const result = [...layers.values()].filter((l) => l.hasExtrusion).sort((a, b) => a.z - b.z)
    .map((l) => ({ z: l.z, segments: new Float32Array(l.seg), extruding: new Uint8Array(l.ext) }));
  if (!result.length) Object.assign(bounds, { minX: 0, maxX: 0, minY: 0, maxY: 0 });
  return { layers: result, bounds, lines };
}
