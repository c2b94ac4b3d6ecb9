// Streams a stored file to the printer's SD card (M28 <name> … M29) through the link's job streaming.
import type { JobStream, Printer } from './types.ts';
import { fileLineSource } from './file-line-source.ts';

/**
 * Replies that mean the card is not taking the file (write-protected or full card, card gone). Marlin answers them and
 * then goes on acknowledging lines it does not write, so without watching for them a failed transfer looks like a success.
 */
const REFUSED = /^(?:echo:)?\s*(?:open failed|error writing to file|no sd card|sd init fail)/i;

/** A refusal among the replies that followed the last sent line containing `command` (terminal lines, oldest first). */
export function refusedSince(terminal: string[], command: string): string | undefined {
  for (let i = terminal.length - 1; i >= 0; i--) {
    const l = terminal[i];
    if (l.startsWith('Recv: ') && REFUSED.test(l.slice(6))) return l.slice(6);
    if (l.startsWith('Send: ') && l.includes(command)) return undefined;
  }
  return undefined;
}

export function sdTransfer(printer: Printer, localAbs: string, remote: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const m28 = `M28 /${remote}`;
    let refusal: string | undefined;
    let stopWatching = (): void => {};
    let stream: JobStream | undefined;
    // Once the card has opened the file, a later refusal (card full, card pulled) stops the transfer at once.
    const watchWrites = () => {
      stopWatching = printer.watchReplies((line) => {
        if (refusal !== undefined || !REFUSED.test(line)) return;
        refusal = line;
        void stream?.cancel();
      });
    };
    try {
      // The name is always a fresh one (dosName), so the cleanup's M30 never removes a file that was there before.
      stream = printer.streamJob(fileLineSource(localAbs), {
        finished: (outcome, _pos, error) => {
          stopWatching();
          if (refusal !== undefined) reject(new Error(`the printer refused the file: ${refusal}`));
          else if (outcome === 'done') resolve();
          else reject(new Error(error ?? `transfer ${outcome}`));
        },
      }, {
        prologue: [m28], epilogue: ['M29'], onCancel: ['M29', `M30 /${remote}`],
        // Marlin answers a refused M28 and then executes the following lines: nothing of the file may follow it.
        refusedStart: () => {
          const refused = refusedSince(printer.terminal(), m28);
          if (refused === undefined) watchWrites();
          return refused;
        },
      });
    } catch (err) {
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
}
