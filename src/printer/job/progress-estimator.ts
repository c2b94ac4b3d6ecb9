// Print-time-left estimation during a job: blends a prior (average of earlier prints, or the analysis estimate) with
// what the print shows so far, so the answer converges on the truth as the job advances. M73 lines in the file (the
// slicer's own progress and remaining time) take precedence while they keep coming.
import type { JobLineSource } from '../types.ts';

export type TimeLeftOrigin = 'linear' | 'analysis' | 'average' | 'mixed-analysis' | 'mixed-average' | 'estimate';

export interface EstimatorInput {
  /** File size in bytes. */
  size: number;
  /** Analysis estimate in seconds, if any. */
  analysisTime?: number | null;
  /** Average duration of earlier successful prints on this printer profile, if any. */
  averageTime?: number | null;
  /**
   * The analysis' planned elapsed seconds at file offsets ([offset, seconds], ascending, the last at the end of the
   * file). With it, progress for the time estimate is measured in planned time rather than bytes: a slow first layer
   * or a detailed top is no longer mistaken for a slow printer.
   */
  timeline?: readonly (readonly [number, number])[] | null;
}

export interface TimeLeft {
  seconds: number | null;
  origin: TimeLeftOrigin | null;
}

/** A `M73 P<percent> R<minutes>` seen at a byte offset of the file. */
export interface M73Mark {
  offset: number;
  percent?: number;
  remainingMin?: number;
}

const M73 = /^M73\b(.*)$/i;

/** Parses an M73 line's P and R (PrusaSlicer writes `M73 P12 R34`, Cura/Orca similar); undefined if none. */
export function parseM73(line: string): { percent?: number; remainingMin?: number } | undefined {
  const m = M73.exec(line.trim());
  if (!m) return undefined;
  const p = /\bP(\d+(?:\.\d+)?)/i.exec(m[1]);
  const r = /\bR(\d+(?:\.\d+)?)/i.exec(m[1]);
  if (!p && !r) return undefined;
  return { percent: p ? Number(p[1]) : undefined, remainingMin: r ? Number(r[1]) : undefined };
}

/** Byte spans of the file left out of the print (cancelled objects), ascending, not overlapping. */
export type SkippedSpans = readonly (readonly [number, number])[];

export class ProgressEstimator {
  private readonly marks: M73Mark[] = [];
  /** The spans left out, their bytes, and their planned seconds (from the timeline; 0 without one). */
  private skipped: SkippedSpans = [];
  private skippedBytes = 0;
  private skippedPlanned = 0;
  private m73: { percent?: number; remainingMin?: number; atPrintTime: number } | undefined;
  /**
   * Set once an M73 line promised far more time than the file holds: the lines describe another file (a truncated or
   * cut-down copy keeps the slicer's `M73 P0 R37` of the whole print), so the estimate goes on without them.
   */
  private m73Ignored = false;

  constructor(private readonly input: EstimatorInput) {}

  /** Records M73 lines of a batch the job is about to send (they apply once the file position passes them). */
  noteM73(mark: M73Mark): void {
    this.marks.push(mark);
  }

  /** Applies M73 marks up to `filepos`; `printTime` is the job's elapsed print time then. */
  advance(filepos: number, printTime: number): void {
    let i = 0;
    while (i < this.marks.length && this.marks[i].offset <= filepos) {
      const m = this.marks[i++];
      if (this.m73Ignored) continue;
      if (m.remainingMin !== undefined && !this.plausible(m.remainingMin * 60, m.offset)) {
        this.m73Ignored = true;
        this.m73 = undefined;
        continue;
      }
      this.m73 = {
        percent: m.percent ?? this.m73?.percent,
        remainingMin: m.remainingMin ?? (m.percent !== undefined ? undefined : this.m73?.remainingMin),
        atPrintTime: printTime,
      };
    }
    if (i) this.marks.splice(0, i);
  }

  /**
   * The file's spans the print leaves out (a cancelled object's lines are dropped): their bytes and planned time
   * count out of the job, so progress moves over what is printed and the time left loses the object's rest.
   */
  setSkipped(spans: SkippedSpans): void {
    if (spans === this.skipped) return;
    this.skipped = spans;
    this.skippedBytes = 0;
    this.skippedPlanned = 0;
    for (const [a, b] of spans) {
      this.skippedBytes += b - a;
      const t0 = this.plannedAt(a);
      const t1 = this.plannedAt(b);
      if (t0 !== undefined && t1 !== undefined) this.skippedPlanned += t1 - t0;
    }
  }

  /** Of the skipped spans, the part before `filepos`, measured by `at` (bytes: the identity). */
  private skippedBefore(filepos: number, at: (pos: number) => number): number {
    let sum = 0;
    for (const [a, b] of this.skipped) {
      if (a >= filepos) break;
      sum += at(Math.min(b, filepos)) - at(a);
    }
    return sum;
  }

  /** Share 0..1 of the file's bytes to print that are done at `filepos` (the skipped spans counted out). */
  byteFraction(filepos: number): number {
    const size = this.input.size - this.skippedBytes;
    if (!(size > 0)) return this.input.size > 0 && filepos >= this.input.size ? 1 : 0;
    const done = filepos - (this.skippedBytes > 0 ? this.skippedBefore(filepos, (p) => p) : 0);
    return Math.min(1, Math.max(0, done / size));
  }

  /** Fraction 0..1 of the job done: the slicer's own percentage if the file reports it (and nothing is skipped), else bytes. */
  fraction(filepos: number): number {
    if (this.m73?.percent !== undefined && this.skippedBytes === 0) return Math.min(1, this.m73.percent / 100);
    return this.byteFraction(filepos);
  }

  timeLeft(filepos: number, printTime: number): TimeLeft {
    // docs/reference/gcode-analysis.md §6.1: at progress 1 nothing is left and nothing was estimated.
    if (this.input.size > 0 && filepos >= this.input.size) return { seconds: 0, origin: null };
    if (this.m73?.remainingMin !== undefined) {
      // The slicer's remaining time, counted down since the line was reached.
      // The slicer counted the skipped objects' rest in; the analysis' planned time of it comes off.
      const skippedAhead = this.skippedPlanned > 0 ? this.skippedPlanned - this.skippedBefore(filepos, (p) => this.plannedAt(p) ?? 0) : 0;
      const left = this.m73.remainingMin * 60 - (printTime - this.m73.atPrintTime) - skippedAhead;
      return { seconds: Math.max(0, Math.round(left)), origin: 'estimate' };
    }
    const p = this.m73?.percent !== undefined && this.skippedBytes === 0 ? this.fraction(filepos) : this.plannedFraction(filepos) ?? this.fraction(filepos);
    const prior = this.prior();
    // Bytes say little until a few percent are done and some time has passed (heat-up moves no bytes).
    const linearTotal = p > 0.005 && printTime > 5 ? printTime / p : null;
    if (prior === null || prior <= 0) {
      return linearTotal === null ? { seconds: null, origin: null } : { seconds: Math.max(0, Math.round(linearTotal - printTime)), origin: 'linear' };
    }
    if (linearTotal === null) return { seconds: Math.max(0, Math.round(prior - printTime)), origin: this.priorOrigin() };
    // The observed rate gets more weight as the job advances; at the end it is the truth.
    const w = Math.min(1, Math.max(0, p));
    const total = (1 - w) * prior + w * linearTotal;
    const origin = this.input.averageTime ? 'mixed-average' : 'mixed-analysis';
    return { seconds: Math.max(0, Math.round(total - printTime)), origin };
  }

  /**
   * Whether a slicer's remaining time fits the file as analysed: at most twice the analysis' planned time left plus two
   * minutes (slicers and the analysis differ by tens of percent, not by a factor of a hundred). Without an analysis
   * there is nothing to check against.
   */
  private plausible(remaining: number, offset: number): boolean {
    const planned = this.input.analysisTime;
    if (!planned || planned <= 0) return true;
    const done = this.plannedFraction(offset) ?? (this.input.size > 0 ? Math.min(1, offset / this.input.size) : 0);
    return remaining <= 2 * planned * (1 - done) + 120;
  }

  /**
   * The print's expected duration: the average of earlier prints or the analysis, less the skipped spans' share
   * (their planned seconds when the timeline has them, else their share of the bytes).
   */
  private prior(): number | null {
    const whole = this.input.averageTime ?? this.input.analysisTime ?? null;
    if (whole === null || this.skippedBytes === 0) return whole;
    const total = this.plannedTotal();
    const share = total !== undefined && this.skippedPlanned > 0 ? this.skippedPlanned / total : this.input.size > 0 ? this.skippedBytes / this.input.size : 0;
    return whole * Math.max(0, 1 - share);
  }

  private plannedTotal(): number | undefined {
    const tl = this.input.timeline;
    if (!tl || tl.length === 0) return undefined;
    const total = tl[tl.length - 1][1];
    return total > 0 ? total : undefined;
  }

  /**
   * Share of the planned print time done at `filepos` (interpolated in the timeline), or undefined without one; the
   * skipped spans' planned time is counted out.
   */
  private plannedFraction(filepos: number): number | undefined {
    const total = this.plannedTotal();
    const t = this.plannedAt(filepos);
    if (total === undefined || t === undefined) return undefined;
    if (this.skippedPlanned <= 0) return Math.min(1, Math.max(0, t / total));
    const left = total - this.skippedPlanned;
    if (!(left > 0)) return 1;
    const done = t - this.skippedBefore(filepos, (p) => this.plannedAt(p) ?? 0);
    return Math.min(1, Math.max(0, done / left));
  }

  /** The planned seconds at `filepos` (interpolated in the timeline), or undefined without one. */
  private plannedAt(filepos: number): number | undefined {
    const tl = this.input.timeline;
    if (!tl || tl.length === 0) return undefined;
    const total = tl[tl.length - 1][1];
    if (!(total > 0)) return undefined;
    let lo = 0;
    let hi = tl.length - 1;
    if (filepos >= tl[hi][0]) return total;
    if (filepos <= tl[0][0]) return tl[0][0] > 0 ? (filepos / tl[0][0]) * tl[0][1] : tl[0][1];
    // The last sample at or before filepos, then linear between it and the next.
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (tl[mid][0] <= filepos) lo = mid;
      else hi = mid;
    }
    const [o0, t0] = tl[lo];
    const [o1, t1] = tl[hi];
    return o1 > o0 ? t0 + ((filepos - o0) / (o1 - o0)) * (t1 - t0) : t0;
  }

  private priorOrigin(): TimeLeftOrigin | null {
    if (this.input.averageTime) return 'average';
    if (this.input.analysisTime) return 'analysis';
    return null;
  }
}

/** Passes batches through while noting the file's M73 progress lines for the estimator. */
export async function* watchM73(source: JobLineSource, estimator: ProgressEstimator): JobLineSource {
  for await (const batch of source) {
    const { lines, ends } = batch;
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i];
      // Cheap first-character test; the regex runs only on candidate lines.
      const c = l.charCodeAt(0);
      if (c !== 77 && c !== 109 && c !== 32) continue;
      const m = parseM73(l);
      if (m) estimator.noteM73({ offset: ends[i], ...m });
    }
    yield batch;
  }
}
