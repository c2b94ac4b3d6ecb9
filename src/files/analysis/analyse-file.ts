// The analyser proper: reads slicer metadata from the file's ends, streams its bytes through the interpreter, and builds the result.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { Box } from './box.ts';
import { Interpreter } from './interpreter.ts';
import { LineBreaks, MAX_LINE_BYTES, afterFirstBreak, afterLastBreak } from '../../gcode/line-breaks.ts';
import { countStated, limitsFromConfig, marlinDefaults, overlayLimits, withCuraDefinition } from './limits.ts';
import { parseCommentLines, type SlicerMeta } from './slicer-meta.ts';
import { ANALYSER_VERSION, type AnalysisOptions, type AnalysisProgress, type Area, type Dimensions, type GcodeAnalysis, type LimitsSource } from './types.ts';

/** A line that fills the whole buffer is junk (see MAX_LINE_BYTES). */
const CHUNK = MAX_LINE_BYTES;
/** Slicer headers and footers (config blocks, after thumbnails in Orca/Bambu headers) fit in these; the rest is moves. */
const HEAD_BYTES = 512 * 1024;
const TAIL_BYTES = 256 * 1024;

// Only the comment lines of [start, end) become text: most of a head is moves, and decoding them all cost more than
// the parsing.
function commentLines(buf: Buffer, start: number, end: number, out: string[]): void {
  const breaks = new LineBreaks();
  for (let from = start; from < end;) {
    const found = breaks.find(buf, from, end, true);
    const lineEnd = found ? breaks.end : end;
    if (buf[from] === 59 /* ; */) out.push(buf.toString('latin1', from, lineEnd));
    from = found ? breaks.next : end;
  }
}

// Slicer comments are read from the first and last bytes only; the seams' cut lines are dropped.
function metaFromEnds(head: Buffer, tail: Buffer | null): SlicerMeta {
  const lines: string[] = [];
  if (!tail) {
    commentLines(head, 0, head.length, lines);
  } else {
    commentLines(head, 0, afterLastBreak(head), lines);
    commentLines(tail, afterFirstBreak(tail), tail.length, lines);
  }
  return parseCommentLines(lines);
}

function readMeta(fd: number, size: number): SlicerMeta {
  if (size <= HEAD_BYTES + TAIL_BYTES) {
    const buf = Buffer.allocUnsafe(size);
    const n = readSync(fd, buf, 0, size, 0);
    return metaFromEnds(buf.subarray(0, n), null);
  }
  const head = Buffer.allocUnsafe(HEAD_BYTES);
  const tail = Buffer.allocUnsafe(TAIL_BYTES);
  const h = readSync(fd, head, 0, HEAD_BYTES, 0);
  const t = readSync(fd, tail, 0, TAIL_BYTES, size - TAIL_BYTES);
  return metaFromEnds(head.subarray(0, h), tail.subarray(0, t));
}

/** Analyses G-code held in memory (tests, small snippets); files go through analyseFile. */
export function analyseBuffer(data: Buffer | string, options: AnalysisOptions = {}): GcodeAnalysis {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const meta = buf.length <= HEAD_BYTES + TAIL_BYTES
    ? metaFromEnds(buf, null)
    : metaFromEnds(buf.subarray(0, HEAD_BYTES), buf.subarray(buf.length - TAIL_BYTES));
  const analyser = new GcodeAnalyser(meta, options, buf.length);
  analyser.write(buf);
  return analyser.finish();
}

/**
 * Sets up limits (Marlin defaults < the firmware's report < profile < slicer config < the file's own commands) and
 * interprets a stream of chunks; usable without a file.
 */
export class GcodeAnalyser {
  readonly meta: SlicerMeta;
  readonly interpreter: Interpreter;
  private readonly options: AnalysisOptions;
  private readonly limitsSource: LimitsSource;
  private carry: Buffer | null = null;
  /** File position of the next byte write() receives. */
  private offset = 0;

  /** `fileSize` (when known) spaces the timeline's samples about 1 % apart. */
  constructor(meta: SlicerMeta, options: AnalysisOptions = {}, fileSize?: number) {
    this.meta = meta;
    this.options = options;
    const limits = marlinDefaults();
    this.interpreter = new Interpreter({
      limits,
      defaultFeedrate: options.defaultFeedrate ?? 6000,
      g90InfluencesExtruder: options.g90InfluencesExtruder ?? false,
      maxTools: options.maxTools ?? 10,
      reprapFirmware: /reprapfirmware/i.test(meta.config.get('gcode_flavor') ?? ''),
      fileSize,
    });
    let source: LimitsSource = 'default';
    if (options.firmwareLimits?.length && this.readFirmwareReport(options.firmwareLimits)) source = 'firmware';
    const planner = this.interpreter.planner;
    if (overlayLimits(planner.limits, options.limits)) source = 'profile';
    const fromConfig = limitsFromConfig(withCuraDefinition(meta.config));
    if (countStated(fromConfig.limits) > 1 || fromConfig.classicJerk) {
      overlayLimits(planner.limits, fromConfig.limits);
      source = 'file';
    }
    planner.limitsChanged();
    this.limitsSource = source;
  }

  /**
   * The firmware's report lines are the very commands a file would carry, so the interpreter reads them with the
   * same rules; they count neither as the file's limits nor as its lines. True when any limit was set.
   */
  private readFirmwareReport(report: string[]): boolean {
    const it = this.interpreter;
    const lines = it.lines;
    for (const line of report) {
      const buf = Buffer.from(line, 'latin1');
      it.interpretLine(buf, 0, buf.length);
    }
    const stated = it.limitsFromFile;
    it.limitsFromFile = false;
    it.lines = lines;
    return stated;
  }

  /** Feeds the next bytes of the file; lines may span chunks. */
  write(chunk: Buffer): void {
    let buf = chunk;
    const base = this.offset - (this.carry?.length ?? 0);
    this.offset += chunk.length;
    if (this.carry) {
      buf = Buffer.concat([this.carry, chunk]);
      this.carry = null;
    }
    const consumed = this.interpreter.feedBytes(buf, 0, buf.length, base);
    if (consumed < buf.length) this.carry = Buffer.from(buf.subarray(consumed));
  }

  /** Interprets a last line without newline and builds the result. */
  finish(): GcodeAnalysis {
    if (this.carry) {
      this.interpreter.interpretLine(this.carry, 0, this.carry.length);
      this.carry = null;
    }
    this.interpreter.fileEnd = Math.max(this.interpreter.fileEnd, this.offset);
    return buildResult(this.interpreter, this.meta, this.options, this.limitsSource);
  }
}

function area(box: Box, bedZ: number): Area {
  const axis = (min: number, max: number): [number | null, number | null] =>
    max === -Infinity ? [null, null] : [min, max];
  const [minX, maxX] = axis(box.minX, box.maxX);
  const [minY, maxY] = axis(box.minY, box.maxY);
  // Heights are measured from the bed: minZ starts at bedZ.
  const [minZ, maxZ] = axis(Math.min(bedZ, box.minZ), box.maxZ);
  return { minX, maxX, minY, maxY, minZ, maxZ };
}

function dims(a: Area): Dimensions {
  const d = (min: number | null, max: number | null): number => (min === null || max === null ? 0 : Math.abs(max - min));
  return { width: d(a.minX, a.maxX), depth: d(a.minY, a.maxY), height: d(a.minZ, a.maxZ) };
}

const zeroArea = (): Area => ({ minX: 0, maxX: 0, minY: 0, maxY: 0, minZ: 0, maxZ: 0 });

function buildResult(it: Interpreter, meta: SlicerMeta, options: AnalysisOptions, limitsSource: LimitsSource): GcodeAnalysis {
  const bedZ = options.bedZ ?? 0;
  const printingArea = area(it.printBox, bedZ);
  const travelArea = area(it.travelBox, bedZ);
  const dimensions = dims(printingArea);
  const estimated = it.planner.totalSeconds();
  const tenth = (x: number): number => Math.round(x * 10) / 10;
  const timeline: [number, number][] = it.timeline.filter(([position]) => position < it.fileEnd).map(([p, t]) => [p, tenth(t)]);
  timeline.push([it.fileEnd, tenth(estimated)]);
  const gantry = {
    analyserVersion: ANALYSER_VERSION,
    slicer: meta.report,
    filamentAccounting: /^Cura/i.test(meta.report.name ?? '') && it.extrusionAtFirstLayer
      ? 'from-first-layer' as const : 'whole-file' as const,
    filamentTotal: {} as GcodeAnalysis['filament'], // filled below, unless nothing was extruded
    naivePrintTime: it.naiveSeconds,
    limitsSource: it.limitsFromFile ? 'file' as const : limitsSource,
    cornering: it.planner.limits.combinedXyJerk ? 'jerk-xy' as const
      : it.planner.limits.squareCornerVelocity > 0 ? 'square-corner-velocity' as const
      : it.planner.limits.junctionDeviation > 0 ? 'junction-deviation' as const : 'jerk' as const,
    hasM73: it.hasM73,
    toolsUsed: it.toolsUsed,
    timeline,
    ...(it.objects.active ? { objects: it.objects.result() } : {}),
    lines: it.lines,
    moves: it.moves,
  };
  if (dimensions.width === 0 && dimensions.depth === 0 && dimensions.height === 0) {
    return {
      filament: {}, dimensions, printingArea: zeroArea(), travelArea: zeroArea(),
      travelDimensions: { width: 0, depth: 0, height: 0 }, _empty: true, gantry,
    };
  }
  const filament: GcodeAnalysis['filament'] = {};
  const filamentTotal = gantry.filamentTotal;
  // Matching the slicer's own figure, not a fudge: Cura counts from its first layer (see filamentAccounting).
  const fromLayer = gantry.filamentAccounting === 'from-first-layer' ? it.extrusionAtFirstLayer : null;
  it.maxExtrusion.forEach((total, tool) => {
    // The profile's diameter wins (it describes the loaded filament); else the slicer's; else 1.75 mm.
    const d = options.filamentDiameter?.[tool] ?? options.filamentDiameter?.[0]
      ?? meta.report.filamentDiameter?.[tool] ?? meta.report.filamentDiameter?.[0] ?? 1.75;
    const cm3PerMm = (Math.PI * (d / 2) ** 2) / 1000;
    const length = fromLayer ? Math.max(0, total - (fromLayer[tool] ?? 0)) : total;
    filament[`tool${tool}`] = { length, volume: length * cm3PerMm };
    filamentTotal[`tool${tool}`] = { length: total, volume: total * cm3PerMm };
  });
  return {
    ...(estimated > 0 ? { estimatedPrintTime: estimated } : {}),
    filament, dimensions, printingArea, travelArea, travelDimensions: dims(travelArea), gantry,
  };
}

/** Analyses a file synchronously (call it in a worker thread, never on the main event loop). */
export function analyseFile(path: string, options: AnalysisOptions = {}, onProgress?: AnalysisProgress): GcodeAnalysis {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const analyser = new GcodeAnalyser(readMeta(fd, size), options, size);
    const buf = Buffer.allocUnsafe(CHUNK);
    let pos = 0;
    let start = 0; // bytes of an incomplete line kept at the front of buf
    let skipping = false; // inside a line longer than the buffer
    const breaks = new LineBreaks();
    while (true) {
      const n = readSync(fd, buf, start, CHUNK - start, pos);
      if (n <= 0) break;
      pos += n;
      const end = start + n;
      let from = 0;
      if (skipping) {
        breaks.reset();
        if (!breaks.find(buf, 0, end, pos >= size)) { start = 0; onProgress?.(pos / size); continue; }
        from = breaks.next;
        skipping = false;
      }
      const consumed = analyser.interpreter.feedBytes(buf, from, end, pos - end, pos >= size);
      if (consumed === 0 && end === CHUNK) {
        // No G-code line is a megabyte long (thumbnails are split into short lines): treat it as junk.
        skipping = true;
        start = 0;
      } else {
        buf.copyWithin(0, consumed, end);
        start = end - consumed;
      }
      onProgress?.(size > 0 ? Math.min(1, pos / size) : 1);
    }
    if (start > 0) analyser.interpreter.interpretLine(buf, 0, start);
    analyser.interpreter.fileEnd = pos;
    const result = analyser.finish();
    onProgress?.(1);
    return result;
  } finally {
    closeSync(fd);
  }
}
