// The layers of a G-code file, found once per selected file (docs/reference/plugins.md §3.1): where each layer starts
// (a slicer's layer comment — Cura/ideaMaker `;LAYER:<n>`, PrusaSlicer `;LAYER_CHANGE`, Slic3r `;BEFORE_LAYER_CHANGE`,
// Simplify3D `; layer <n>,`, KISSlicer `; BEGIN_LAYER_OBJECT` — or, without any, each new highest Z of a move), the fan
// and feed rate changes, M600 filament changes and the first layer's temperatures. The print then looks its position
// up here (a binary search per look), so following the layers costs the streamed lines nothing.
import { fileChunks } from '../core/file-chunks.ts';

export interface LayerIndex {
  /** Byte offset where each layer starts, ascending. */
  starts: number[];
  /** The layer number shown for each (the comment's own number, or 1, 2, 3 … for counted markers and Z layers). */
  numbers: number[];
  /** The Z of the first move of each layer (NaN when none). */
  heights: number[];
  /** What the layers were found from. */
  source: 'numbered' | 'counted' | 'z' | 'none';
  maxZ: number;
  /** Fan changes: offset and percent (0 = off). */
  fan: Array<[number, number]>;
  /** Feed rate samples (offset, G0 F, G1 F), at most one per FEED_SAMPLE_BYTES. */
  feed: Array<[number, number, number]>;
  /** Offsets of M600 lines. */
  m600: number[];
  /** First non-zero targets before the second layer: tool0…, bed. */
  firstLayerTemps: Record<string, number>;
}

const FEED_SAMPLE_BYTES = 2048;
/** Marker styles in the plugin's order of preference; the first one found in a file is used for all of it. */
type Marker = { re: RegExp; numbered: boolean };
const MARKERS: Marker[] = [
  { re: /^;\s*LAYER:\s*(\d+)/, numbered: true },
  { re: /^; layer (\d+),/, numbered: true },
  { re: /^; BEGIN_LAYER_OBJECT/, numbered: false },
  { re: /^;BEFORE_LAYER_CHANGE/, numbered: false },
  { re: /^;LAYER_CHANGE/, numbered: false },
];

function word(line: string, letter: string): number | null {
  // Parameters are space-separated words: ` S200`, ` Z0.2`.
  let i = line.indexOf(` ${letter}`);
  while (i !== -1) {
    let j = i + 2;
    while (j < line.length && line.charCodeAt(j) !== 32 && line.charCodeAt(j) !== 59) j++;
    const v = Number(line.slice(i + 2, j));
    if (line.slice(i + 2, j) !== '' && Number.isFinite(v)) return v;
    i = line.indexOf(` ${letter}`, i + 1);
  }
  return null;
}

export async function buildLayerIndex(path: string): Promise<LayerIndex> {
  const idx: LayerIndex = { starts: [], numbers: [], heights: [], source: 'none', maxZ: 0, fan: [], feed: [], m600: [], firstLayerTemps: {} };
  const zStarts: number[] = [], zHeights: number[] = [];
  let marker: Marker | null = null;
  let count = 0;
  let relative = false;
  let z = 0, f0 = 0, f1 = 0, lastFeedAt = -Infinity, tool = 0;
  let awaitingHeight = false;
  let offset = 0;
  let carry = '';
  const line = (text: string, at: number) => {
    const c = text.charCodeAt(0);
    if (c === 59) { // ';'
      if (marker === null) {
        for (const m of MARKERS) if (m.re.test(text)) { marker = m; break; }
      }
      if (marker !== null) {
        const m = marker.re.exec(text);
        if (m) {
          idx.starts.push(at);
          idx.numbers.push(marker.numbered ? Number(m[1]) : ++count);
          idx.heights.push(NaN);
          awaitingHeight = true;
        }
      }
      return;
    }
    if (c !== 71 && c !== 77 && c !== 84) return; // G, M, T
    const semi = text.indexOf(';');
    const cmd = (semi === -1 ? text : text.slice(0, semi)).trimEnd();
    const sp = cmd.indexOf(' ');
    const code = sp === -1 ? cmd : cmd.slice(0, sp);
    if (code === 'G0' || code === 'G1') {
      const zv = word(cmd, 'Z');
      const fv = word(cmd, 'F');
      if (fv !== null) {
        if (code === 'G0') f0 = fv; else f1 = fv;
        if (at - lastFeedAt >= FEED_SAMPLE_BYTES) { idx.feed.push([at, f0, f1]); lastFeedAt = at; }
      }
      if (zv !== null) {
        z = relative ? z + zv : zv;
        if (awaitingHeight) { idx.heights[idx.heights.length - 1] = z; awaitingHeight = false; }
        if (z > idx.maxZ + 1e-6) {
          idx.maxZ = z;
          zStarts.push(at);
          zHeights.push(z);
        }
      }
    } else if (code === 'G90') relative = false;
    else if (code === 'G91') relative = true;
    else if (code === 'M106') {
      const s = word(cmd, 'S');
      idx.fan.push([at, s === null ? 100 : Math.round((s * 100) / 255)]);
    } else if (code === 'M107') idx.fan.push([at, 0]);
    else if (code === 'M600') idx.m600.push(at);
    else if (code[0] === 'T' && /^T\d+$/.test(code)) tool = Number(code.slice(1));
    else if (code === 'M104' || code === 'M109' || code === 'M140' || code === 'M190') {
      // The first layer: before a second layer marker (or the second Z layer).
      if ((idx.starts.length > 0 ? idx.starts.length : zStarts.length) >= 2) return;
      const s = word(cmd, 'S') ?? word(cmd, 'R');
      if (s === null || s <= 0) return;
      const t = word(cmd, 'T');
      const key = code === 'M140' || code === 'M190' ? 'bed' : `tool${t ?? tool}`;
      idx.firstLayerTemps[key] ??= s;
    }
  };
  for await (const chunk of fileChunks(path)) {
    const text = carry + chunk.toString('latin1');
    let start = 0;
    const base = offset - carry.length;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      let s = start;
      while (s < nl && (text.charCodeAt(s) === 32 || text.charCodeAt(s) === 9)) s++;
      if (s < nl) line(text.slice(s, text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl), base + start);
      start = nl + 1;
    }
    carry = text.slice(start);
    offset += chunk.length;
    // Yield to the event loop between chunks: a large file is indexed without holding up requests and the link.
    await new Promise<void>((r) => setImmediate(r));
  }
  if (carry.trim() !== '') line(carry.trimStart(), offset - carry.length);
  if (idx.starts.length > 0) {
    idx.source = (marker as Marker | null)?.numbered ? 'numbered' : 'counted';
  } else if (zStarts.length > 0) {
    idx.source = 'z';
    idx.starts = zStarts;
    idx.heights = zHeights;
    idx.numbers = zStarts.map((_, i) => i + 1);
  }
  return idx;
}

/** Index of the last entry whose offset is ≤ `pos` (-1 when none). */
export function lastAtOrBefore<T>(offsets: ArrayLike<T>, pos: number, get: (i: number) => number = (i) => offsets[i] as number): number {
  let lo = 0, hi = offsets.length - 1, found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (get(mid) <= pos) { found = mid; lo = mid + 1; } else hi = mid - 1;
  }
  return found;
}
