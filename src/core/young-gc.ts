// Prompt release of short-lived Buffers on paths that stream many megabytes through the main thread (uploads).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type GcFunction = (opts?: { type?: 'minor' | 'major' }) => void;

let gc: GcFunction | null | undefined;

/**
 * V8 frees a Buffer's memory only when a GC finds the Buffer dead, and counts it towards starting one only after
 * ≈ 64 MB of such memory: an upload's 64 KB body chunks (each one copied by the HTTP parser, then written) piled up
 * by tens of MB between collections. glibc's malloc serves them from its main heap, which cannot give back memory
 * under a block still in use: the 36 MB upload left the process 16 MB bigger for good on Node 20, whose launcher
 * cannot tune malloc (bin/gantry.js). A scavenge (young generation only, tens of µs with a 2 MB young generation)
 * every few chunks frees them while they are few, and their memory is reused for the next ones.
 * The collector is taken from a throw-away context (the flag is switched on for that moment only), so `gc` never
 * appears on the global object; where V8 refuses, nothing happens and memory is merely released later.
 */
export function collectYoungGarbage(): void {
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
  gc?.({ type: 'minor' });
}
