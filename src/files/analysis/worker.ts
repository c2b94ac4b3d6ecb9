// Worker-thread entry of the analysis queue: analyses one file per request and reports progress, the result or the error.
import { parentPort } from 'node:worker_threads';
import { analyseFile } from './analyse-file.ts';
import type { AnalysisOptions, GcodeAnalysis } from './types.ts';

export interface WorkerRequest { id: number; path: string; options: AnalysisOptions }
export type WorkerReply =
  | { id: number; type: 'progress'; fraction: number }
  | { id: number; type: 'done'; result: GcodeAnalysis }
  | { id: number; type: 'error'; message: string; code?: string };

const port = parentPort;
if (port) {
  port.on('message', (req: WorkerRequest) => {
    let last = 0;
    try {
      const result = analyseFile(req.path, req.options, (fraction) => {
        // Throttled so a fast analysis does not flood the main thread with messages.
        if (fraction < 1 && fraction - last < 0.02) return;
        last = fraction;
        port.postMessage({ id: req.id, type: 'progress', fraction } satisfies WorkerReply);
      });
      port.postMessage({ id: req.id, type: 'done', result } satisfies WorkerReply);
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      port.postMessage({ id: req.id, type: 'error', message: e?.message ?? String(err), code: e?.code } satisfies WorkerReply);
    }
  });
}
