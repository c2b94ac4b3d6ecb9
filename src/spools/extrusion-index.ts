// How much filament a G-code file has pushed through each tool by any byte offset, found once per print: the print then
// looks its file position up here (a binary search), so following the extrusion costs the streamed lines nothing.
// Only E beyond the highest E reached counts (docs/reference/plugins.md §5.4: a retract and its prime cancel out);
// G92 moves the coordinates, not the filament; M82/M83 and G90/G91 switch absolute and relative E.
import { fileChunks } from '../core/file-chunks.ts';

/** A sample at most every this many bytes: the look-up never reports more than was sent, and at most this much less. */
const SAMPLE_BYTES = 512;

export interface ExtrusionIndex {
  /** Byte offsets of the samples, ascending; the first is 0, the last the file's size. */
  offsets: number[];
  /** Per tool: the filament (mm) pushed by every line that ends before the sample's offset. */
  used: number[][];
}

function eWord(cmd: string): number | null {
  let i = cmd.indexOf('E');
  while (i !== -1) {
    const before = cmd.charCodeAt(i - 1);
    if (i > 0 && (before === 32 || before === 9)) {
      let j = i + 1;
      while (j < cmd.length && cmd.charCodeAt(j) !== 32 && cmd.charCodeAt(j) !== 9) j++;
      const text = cmd.slice(i + 1, j);
      const v = Number(text);
      if (text !== '' && Number.isFinite(v)) return v;
    }
    i = cmd.indexOf('E', i + 1);
  }
  return null;
}

/** What one line does to the extruders, kept line by line (exported for the unit test). */
export class ExtrusionState {
  tool = 0;
  relative = false;
  /** Per tool: E in the file's coordinates, the filament fed so far (continuous across G92), and the most fed. */
  private e: number[] = [0];
  private fed: number[] = [0];
  private high: number[] = [0];
  readonly used: number[] = [0];

  private ensure(t: number): void {
    while (this.used.length <= t) { this.e.push(0); this.fed.push(0); this.high.push(0); this.used.push(0); }
  }

  line(raw: string): void {
    const semi = raw.indexOf(';');
    let cmd = (semi >= 0 ? raw.slice(0, semi) : raw).trim();
    if (cmd === '') return;
    // A line number (`N12 G1 …*93`) is framing, not the command.
    if (cmd.charCodeAt(0) === 78 || cmd.charCodeAt(0) === 110) cmd = cmd.slice(cmd.indexOf(' ') + 1);
    const star = cmd.lastIndexOf('*');
    if (star >= 0) cmd = cmd.slice(0, star);
    const c = cmd.charCodeAt(0) & ~32;
    const sp = cmd.indexOf(' ');
    const word = (sp < 0 ? cmd : cmd.slice(0, sp)).toUpperCase();
    if (c === 71) { // G
      if (word === 'G1' || word === 'G0' || word === 'G01' || word === 'G00' || word === 'G2' || word === 'G3' || word === 'G02' || word === 'G03') {
        const v = eWord(cmd);
        if (v === null) return;
        const t = this.tool;
        this.ensure(t);
        const delta = this.relative ? v : v - this.e[t];
        this.e[t] = this.relative ? this.e[t] + v : v;
        this.fed[t] += delta;
        if (this.fed[t] > this.high[t]) {
          this.used[t] += this.fed[t] - this.high[t];
          this.high[t] = this.fed[t];
        }
      } else if (word === 'G92') {
        const v = eWord(cmd);
        if (v !== null) { this.ensure(this.tool); this.e[this.tool] = v; }
      } else if (word === 'G90') this.relative = false;
      else if (word === 'G91') this.relative = true;
    } else if (c === 77) { // M
      if (word === 'M82') this.relative = false;
      else if (word === 'M83') this.relative = true;
    } else if (c === 84) { // T
      const n = Number(word.slice(1));
      if (word.length > 1 && Number.isInteger(n) && n >= 0 && n < 64) { this.tool = n; this.ensure(n); }
    }
  }
}

export async function buildExtrusionIndex(path: string): Promise<ExtrusionIndex> {
  const st = new ExtrusionState();
  const offsets: number[] = [0];
  const samples: number[][] = [[0]];
  let lastSample = 0;
  let carry = '';
  let pos = 0;
  const sample = (at: number) => {
    offsets.push(at);
    samples.push([...st.used]);
    lastSample = at;
  };
  for await (const chunk of fileChunks(path)) {
    const text = chunk.toString('latin1');
    let from = 0;
    for (;;) {
      const nl = text.indexOf('\n', from);
      if (nl < 0) break;
      const line = carry + text.slice(from, nl);
      carry = '';
      st.line(line);
      const end = pos + nl + 1;
      if (end - lastSample >= SAMPLE_BYTES) sample(end);
      from = nl + 1;
    }
    if (from < text.length) carry += text.slice(from);
    pos += chunk.length;
  }
  if (carry !== '') st.line(carry);
  if (offsets[offsets.length - 1] !== pos) sample(pos);
  const tools = st.used.length;
  const used: number[][] = Array.from({ length: tools }, (_, t) => samples.map((s) => s[t] ?? 0));
  return { offsets, used };
}

/** The filament each tool was fed by the lines before `filepos` (never more; less by at most a sample's lines). */
export function usedAt(idx: ExtrusionIndex, filepos: number): number[] {
  const o = idx.offsets;
  let lo = 0, hi = o.length - 1;
  if (filepos >= o[hi]) lo = hi;
  else {
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (o[mid] <= filepos) lo = mid;
      else hi = mid - 1;
    }
  }
  return idx.used.map((u) => u[lo]);
}
