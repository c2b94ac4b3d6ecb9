// Streams a stored file to the printer's SD card (M28 <name> … M29) through the link's job streaming.
import type { JobStream, Printer } from '../types.ts';
import { fileLineSource } from './file-line-source.ts';

/**
 * Replies that mean the card is not taking the file (write-protected or full card, card gone). Marlin answers them and
 * then goes on acknowledging lines it does not write, so without watching for them a failed transfer looks like a success.
 */
const REFUSED = /^(?:echo:)?\s*(?:open failed|error writing to file|no sd card|sd init fail)/i;

export function sdTransfer(printer: Printer, localAbs: string, remote: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let refusal: string | undefined;
    let stream: JobStream | undefined;
    let started = false;
    // Watched from before the M28: a refusal of it must be known when its ok arrives. One that answers an earlier
    // command says the card is unusable just the same.
    const stopWatching = printer.watchReplies((line) => {
      if (refusal !== undefined || !REFUSED.test(line)) return;
      refusal = line;
      // Before the first line of the file the job ends through refusedStart; after it, a cancel stops the rest.
      if (stream !== undefined && started) void stream.cancel();
    });
    try {
      // An 8.3 name is a fresh one; a long name may replace a file of that name, which M28 has emptied by then: either
      // way the cleanup's M30 removes nothing that still held its old content.
      stream = printer.streamJob(fileLineSource(localAbs), {
        finished: (outcome, _pos, error) => {
          stopWatching();
          if (refusal !== undefined) reject(new Error(`the printer refused the file: ${refusal}`));
          else if (outcome === 'done') resolve();
          else reject(new Error(error ?? `transfer ${outcome}`));
        },
      }, {
        prologue: [`M28 /${remote}`], epilogue: ['M29'], onCancel: ['M29', `M30 /${remote}`], transfer: true,
        // Marlin executes the lines that follow a refused M28: nothing of the file may be sent after one.
        refusedStart: () => {
          started = refusal === undefined;
          return refusal;
        },
      });
    } catch (err) {
      stopWatching();
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
}
