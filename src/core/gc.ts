// Asking V8's garbage collector for a collection where its own schedule costs memory: streamed Buffers, a heap's headroom.
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type GcFunction = (opts?: { type?: 'minor' | 'major' }) => void;

let gc: GcFunction | null | undefined;

/**
 * V8's collector, taken from a throw-away context (the flag is switched on for that moment only), so `gc` never
 * appears on the global object; null where V8 refuses (callers then leave memory to V8's own schedule).
 */
function collector(): GcFunction | null {
  if (gc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as GcFunction;
    } catch {
      gc = null;
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  }
  return gc;
}

/**
 * Prompt release of short-lived Buffers on paths that stream many megabytes through the main thread (uploads).
 * V8 frees a Buffer's memory only when a GC finds the Buffer dead, and counts it towards starting one only after
 * ≈ 64 MB of such memory: an upload's 64 KB body chunks (each one copied by the HTTP parser, then written) piled up
 * by tens of MB between collections. glibc's malloc serves them from its main heap, which cannot give back memory
 * under a block still in use: the 36 MB upload left the process 16 MB bigger for good on Node 20, whose launcher
 * cannot tune malloc (bin/gantry.js). A scavenge (young generation only, tens of µs with a 2 MB young generation)
 * every few chunks frees them while they are few, and their memory is reused for the next ones.
 */
export function collectYoungGarbage(): void {
  collector()?.({ type: 'minor' });
}

/** Bytes held by the old generation (every space but the young generation's), the size V8 starts full GCs by. */
function oldGenerationUsed(): number {
  let used = 0;
  for (const s of getHeapSpaceStatistics()) if (!s.space_name.startsWith('new_')) used += s.space_used_size;
  return used;
}

export interface HeadroomOptions {
  /** How far the old generation may grow above the least it held since the last full GC (≈ its live data). */
  headroomBytes: number;
  /** Checked at most this often, and only when a GC happened (so never while the thread idles). */
  everyMs?: number;
  /** No collection of its own when the thread's event loop was busier than this since the last check (0–1). */
  maxBusy?: number;
}

/**
 * After each full GC, V8 lets a heap grow by at least 8 MB before the next one, however small its live data. V8's
 * memory balancer sizes that headroom from the allocation rate instead, but Node 20's V8 has none, and the launcher can
 * switch it on only from Node 22.15 (bin/gantry.js). Without it, a thread that allocates at a steady, modest pace saws
 * 8 MB: while a print runs at a printer's pace, the link thread (≈ 6 MB live) and the main thread (≈ 16 MB) did, every
 * 10–40 s, and RSS with them (Node 20, printing to a 200 µs/line firmware: 90 / 98 / 106 MB lowest / median / highest).
 * This keeps the old generation within `headroomBytes` of the least it held since the last full GC, by running one when
 * it grew past that. Checks follow the thread's own GCs (a young one comes every megabyte or so allocated): none while
 * it idles. A thread busier than `maxBusy` is left to V8, whose collections are incremental, not one pause. A heap still
 * above after the collection has more live data: that becomes the new base. Returns a function that stops it.
 */
export function capHeapHeadroom(opts: HeadroomOptions): () => void {
  if (!(opts.headroomBytes > 0)) return () => {};
  const everyMs = opts.everyMs ?? 1000;
  const maxBusy = opts.maxBusy ?? 0.5;
  let base = oldGenerationUsed();
  let checked = performance.now();
  let loop = performance.eventLoopUtilization();
  const observer = new PerformanceObserver(() => {
    const now = performance.now();
    if (now - checked < everyMs) return;
    checked = now;
    const busy = performance.eventLoopUtilization(loop).utilization;
    loop = performance.eventLoopUtilization();
    const used = oldGenerationUsed();
    if (used < base) base = used;
    else if (used - base > opts.headroomBytes && busy <= maxBusy) {
      // Taken only now: node:vm stays unloaded in a server that never needs it (test/e2e/runtime/lean-idle.test.ts).
      const run = collector();
      if (run === null) return observer.disconnect();
      run(); // a full GC (Node 20's V8 takes { type: 'major' } for a young one)
      // The sweeper frees the dead objects' space after the GC returns: the next check reads the new base.
      base = Infinity;
      checked = performance.now();
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}

/**
 * The headroom the launcher asks for (GANTRY_HEAP_HEADROOM_MB, set by bin/gantry.js where V8's memory balancer is not
 * on), applied by each thread of a running server to its own heap; nothing when unset.
 */
export function capHeapHeadroomAsLaunched(): () => void {
  const mb = Number(process.env.GANTRY_HEAP_HEADROOM_MB);
  return mb > 0 ? capHeapHeadroom({ headroomBytes: mb * 1024 * 1024 }) : () => {};
}
