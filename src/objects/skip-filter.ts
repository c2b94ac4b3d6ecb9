// The host-side object skip: a pure line filter the job streamer runs each file line through. Inside a cancelled
// object the moves are dropped while the state they carry is kept, and leaving it restores position, E and feedrate
// (docs/reference/plugins.md §2.4; issue #54).
import { ObjectLabels, type LabelsState } from './object-labels.ts';

export interface SkipFilterOptions {
  /** G-code sent where a skipped section begins, and after it ends (settings `beforegcode`/`aftergcode`). */
  before?: string[];
  after?: string[];
}

interface Machine { x: number; y: number; z: number; e: number; f: number; depth: number }

/**
 * Everything the filter knows, as plain data: a filter made from it goes on where this one stopped (in a link
 * thread, or for a print resumed part way after the filter read the lines before the offset).
 */
export interface SkipFilterState {
  labels: LabelsState;
  cancelled: number[];
  current: number;
  skipping: boolean;
  file: Machine;
  relXYZ: boolean;
  relE: boolean;
  at: Machine;
  retractF: number;
  pendingBefore: boolean;
}

/** Lines that replace one file line: `[]` drops it; the file line itself is in the array (once) when it is kept. */
export type FilterResult = readonly string[];

const MOVE = /^G0*([0-3])(?![0-9.])/i;
const WORD = /([A-Z])\s*(-?(?:\d+\.?\d*|\.\d+))/gi;

/** Rounds for the wire: five decimals at most, no trailing zeros. */
export function num(v: number): string {
  // Number() drops the trailing zeros of toFixed (and -0 prints as 0).
  const r = Number(v.toFixed(5));
  return String(r === 0 ? 0 : r);
}

function words(code: string): Map<string, number> {
  const out = new Map<string, number>();
  WORD.lastIndex = 0;
  for (let m = WORD.exec(code); m !== null; m = WORD.exec(code)) {
    const k = m[1].toUpperCase();
    if (!out.has(k)) out.set(k, Number(m[2]));
  }
  return out;
}

export class ObjectSkipFilter {
  readonly labels: ObjectLabels;
  private readonly cancelled = new Set<number>();
  private current = -1;
  private skipping = false;
  // The file's view of the machine (what it would be had every line been sent).
  private x = 0;
  private y = 0;
  private z = 0;
  private e = 0;
  private f = 0;
  private relXYZ = false;
  private relE = false;
  /** How far the filament is retracted, as the file sees it. */
  private depth = 0;
  /** At the skip's start: what the printer really has (nothing of the section reaches it). */
  private at = { x: 0, y: 0, z: 0, e: 0, f: 0, depth: 0 };
  private retractF = 2400;
  private pendingBefore = false;

  constructor(private readonly opts: SkipFilterOptions = {}, state?: SkipFilterState) {
    this.labels = new ObjectLabels(state?.labels);
    if (state === undefined) return;
    for (const id of state.cancelled) this.cancelled.add(id);
    this.current = state.current;
    this.skipping = state.skipping;
    ({ x: this.x, y: this.y, z: this.z, e: this.e, f: this.f, depth: this.depth } = state.file);
    this.relXYZ = state.relXYZ;
    this.relE = state.relE;
    this.at = { ...state.at };
    this.retractF = state.retractF;
    this.pendingBefore = state.pendingBefore;
  }

  /** Where the filter is (see SkipFilterState). */
  snapshot(): SkipFilterState {
    return {
      labels: this.labels.snapshot(), cancelled: [...this.cancelled], current: this.current, skipping: this.skipping,
      file: { x: this.x, y: this.y, z: this.z, e: this.e, f: this.f, depth: this.depth }, relXYZ: this.relXYZ, relE: this.relE,
      at: { ...this.at }, retractF: this.retractF, pendingBefore: this.pendingBefore,
    };
  }

  /** The object being printed (-1 between objects). */
  get currentObject(): number { return this.current; }
  get isSkipping(): boolean { return this.skipping; }
  isCancelled(id: number): boolean { return this.cancelled.has(id); }
  cancelledIds(): number[] { return [...this.cancelled].sort((a, b) => a - b); }

  /** Cancels an object; the one being printed is skipped from the next line on. */
  cancel(id: number): void {
    this.cancelled.add(id);
    if (id === this.current && !this.skipping) this.enter();
  }

  /** The lines to send for one file line, in order. */
  filter(line: string): FilterResult {
    const ev = this.labels.feed(line);
    if (ev !== null && ev.kind !== 'define') {
      const next = ev.kind === 'start' ? ev.id : -1;
      const out: string[] = [];
      if (this.skipping && !(next >= 0 && this.cancelled.has(next))) out.push(...this.leave());
      this.current = next;
      if (!this.skipping && next >= 0 && this.cancelled.has(next)) this.enter();
      out.push(line);
      return out;
    }
    const semi = line.indexOf(';');
    const code = (semi === -1 ? line : line.slice(0, semi)).trim();
    const mv = MOVE.exec(code);
    if (mv !== null) {
      const w = words(code.slice(mv[0].length));
      this.track(w);
      if (this.skipping) return this.dropMove();
      return [line];
    }
    this.state(code);
    if (this.skipping && this.pendingBefore) return this.beforeWith(line);
    return [line];
  }

  private beforeWith(line: string): string[] {
    this.pendingBefore = false;
    return [...(this.opts.before ?? []), line];
  }

  private dropMove(): string[] {
    if (this.pendingBefore) {
      this.pendingBefore = false;
      return [...(this.opts.before ?? [])];
    }
    return [];
  }

  private enter(): void {
    this.skipping = true;
    this.pendingBefore = (this.opts.before?.length ?? 0) > 0;
    this.at = { x: this.x, y: this.y, z: this.z, e: this.e, f: this.f, depth: this.depth };
  }

  /** Back from a skip: the retraction the file expects, the position by travel, E and feedrate as the file has them. */
  private leave(): string[] {
    this.skipping = false;
    this.pendingBefore = false;
    const out: string[] = [];
    const comp = this.at.depth - this.depth; // < 0: retract more; > 0: prime back what was retracted
    const eMove = (v: number) => `G1 E${num(v)} F${num(this.retractF)}`;
    if (this.relE) {
      if (Math.abs(comp) > 1e-9) out.push(eMove(comp));
    } else {
      if (Math.abs(comp) > 1e-9) {
        out.push(`G92 E${num(this.e - comp)}`, eMove(this.e));
      } else if (Math.abs(this.e - this.at.e) > 1e-9) out.push(`G92 E${num(this.e)}`);
    }
    const moved = this.x !== this.at.x || this.y !== this.at.y;
    const zUp = this.z > this.at.z;
    const zDown = this.z < this.at.z;
    if (moved || zUp || zDown) {
      if (this.relXYZ) out.push('G90');
      if (zUp) out.push(`G1 Z${num(this.z)}`);
      if (moved) out.push(`G0 X${num(this.x)} Y${num(this.y)}`);
      if (zDown) out.push(`G1 Z${num(this.z)}`);
      if (this.relXYZ) out.push('G91');
    }
    if (this.f > 0 && (out.length > 0 || this.f !== this.at.f)) out.push(`G1 F${num(this.f)}`);
    out.push(...(this.opts.after ?? []));
    return out;
  }

  private track(w: Map<string, number>): void {
    const x = w.get('X');
    const y = w.get('Y');
    const z = w.get('Z');
    const e = w.get('E');
    const f = w.get('F');
    if (x !== undefined) this.x = this.relXYZ ? this.x + x : x;
    if (y !== undefined) this.y = this.relXYZ ? this.y + y : y;
    if (z !== undefined) this.z = this.relXYZ ? this.z + z : z;
    if (f !== undefined && f > 0) this.f = f;
    if (e !== undefined) {
      const d = this.relE ? e : e - this.e;
      this.e = this.relE ? this.e + e : e;
      if (d < 0) this.depth -= d;
      else this.depth = Math.max(0, this.depth - d);
      if (x === undefined && y === undefined && z === undefined && f !== undefined) this.retractF = f;
    }
  }

  /** The non-move lines that change how moves are read. */
  private state(code: string): void {
    const c = code.toUpperCase();
    if (c === 'M82') this.relE = false;
    else if (c === 'M83') this.relE = true;
    else if (c === 'G90') { this.relXYZ = false; this.relE = false; }
    else if (c === 'G91') { this.relXYZ = true; this.relE = true; }
    else if (/^G92(?![0-9])/.test(c)) {
      const w = words(c.slice(3));
      if (w.size === 0) { this.x = 0; this.y = 0; this.z = 0; this.e = 0; }
      if (w.has('X')) this.x = w.get('X')!;
      if (w.has('Y')) this.y = w.get('Y')!;
      if (w.has('Z')) this.z = w.get('Z')!;
      if (w.has('E')) {
        this.e = w.get('E')!;
        // Sent to the printer too, so its E matches the file's from here on.
        if (this.skipping) this.at.e = this.e;
      }
    } else if (/^G28(?![0-9])/.test(c)) {
      const w = words(c.slice(3));
      const all = !w.has('X') && !w.has('Y') && !w.has('Z');
      if (all || w.has('X')) this.x = 0;
      if (all || w.has('Y')) this.y = 0;
      if (all || w.has('Z')) this.z = 0;
      if (this.skipping) { this.at.x = this.x; this.at.y = this.y; this.at.z = this.z; }
    }
  }
}
