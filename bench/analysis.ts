// G-code analysis benchmark: MB/s per corpus file, our estimate's error against the slicer's own next to a
// distance/feedrate-only (OctoPrint-style) estimate, and filament length error; plus the 36 MB file through the worker queue.
// Usage: npm run bench [-- analysis]. MB/s: first (cold JIT) run, best of 3 by wall time, best of 3 by CPU time.
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AnalysisQueue, analyseFile, type GcodeAnalysis } from '../src/files/analysis/index.ts';
import { silentLogger } from '../src/core/logger.ts';
import { referenceFilament } from '../test/analysis/reference.ts';
import { GCODE_DIR } from '../test/helpers/shared-data.ts';

const DATA = GCODE_DIR;
const BIG = 'prusaslicer-2.5.0-debian_vase_0.1mm_generated.gcode';
/** Truncated by its publisher; its slicer figures describe the whole print. */
const TRUNCATED = new Set(['prusaslicer-2.6.1_small.gcode']);
const RUNS = 3;

const pct = (ours: number, ref: number | null | undefined): string =>
  ref ? `${((ours / ref - 1) * 100).toFixed(1).padStart(6)} %` : '      -';
const hms = (s: number | null | undefined): string => {
  if (!s) return '-';
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = Math.round(s % 60);
  return `${h}h${String(m).padStart(2, '0')}m${String(sec).padStart(2, '0')}s`;
};

function timed(path: string): { result: GcodeAnalysis; wallMs: number; cpuMs: number } {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = analyseFile(path);
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { result, wallMs, cpuMs: (cpu.user + cpu.system) / 1000 };
}

const files = (await readdir(DATA)).filter((f) => f.endsWith('.gcode')).sort();
console.log('file'.padEnd(52), 'MB'.padStart(6), 'MB/s 1st'.padStart(9), 'MB/s best'.padStart(10),
  'slicer'.padStart(10), 'ours'.padStart(10), 'err'.padStart(8), 'naive err'.padStart(10), 'fil vs Esum'.padStart(12),
  'fil vs slicer'.padStart(14), ' limits/cornering');
for (const name of files) {
  const path = join(DATA, name);
  const mb = (await stat(path)).size / 1e6;
  const runs = Array.from({ length: RUNS }, () => timed(path));
  const r = runs[0].result;
  const best = Math.min(...runs.map((x) => x.wallMs));
  // CPU time of the best run: on a shared machine wall time also counts other processes' turns.
  const bestCpu = Math.min(...runs.map((x) => x.cpuMs));
  const slicer = r.gantry.slicer;
  // BambuStudio's total includes its allowance for the printer's start sequence; its model time covers the moves.
  const compare = TRUNCATED.has(name) ? null : slicer.estimatedModelTime ?? slicer.estimatedPrintTime;
  const ours = r.estimatedPrintTime ?? 0;
  const esum = referenceFilament(await readFile(path, 'latin1'))[0];
  const fil = r.filament.tool0?.length ?? 0;
  const note = TRUNCATED.has(name) ? ' (truncated file: slicer figures are for the whole print)'
    : slicer.estimatedModelTime ? ` (vs model time; total ${hms(slicer.estimatedPrintTime)})` : '';
  console.log(name.padEnd(52), mb.toFixed(1).padStart(6), (mb / (runs[0].wallMs / 1000)).toFixed(1).padStart(9),
    (mb / (best / 1000)).toFixed(1).padStart(10), (mb / (bestCpu / 1000)).toFixed(1).padStart(9), hms(compare).padStart(10), hms(ours).padStart(10),
    pct(ours, compare).padStart(8), pct(r.gantry.naivePrintTime, compare).padStart(10), pct(fil, esum).padStart(12),
    (TRUNCATED.has(name) ? '      -' : pct(fil, slicer.filamentLength?.[0])).padStart(14),
    ` ${r.gantry.limitsSource}/${r.gantry.cornering}${note}`);
}

// End to end through the worker queue: worker start-up included, the event loop stays free.
const queue = new AnalysisQueue({ logger: silentLogger });
queue.start();
let ticks = 0;
const ticker = setInterval(() => { ticks++; }, 10);
const t0 = performance.now();
let updates = 0;
await queue.analyse(join(DATA, BIG), {}, () => { updates++; });
const ms = performance.now() - t0;
// A second file while the worker is still warm (uploads often come in batches; idle workers live 30 s).
const t1 = performance.now();
await queue.analyse(join(DATA, BIG), {});
const warmMs = performance.now() - t1;
clearInterval(ticker);
await queue.stop();
const mb = (await stat(join(DATA, BIG))).size / 1e6;
console.log(`\nworker queue, ${BIG}: ${ms.toFixed(0)} ms (${(mb / (ms / 1000)).toFixed(1)} MB/s incl. worker start-up), `
  + `${updates} progress updates, ${ticks} event-loop ticks of 10 ms meanwhile; again with the worker warm: ${warmMs.toFixed(0)} ms`);
