// Streams a stored file to the printer's SD card (M28 <name> … M29) through the link's job streaming.
import type { Printer } from './types.ts';
import { fileLineSource } from './file-line-source.ts';

export function sdTransfer(printer: Printer, localAbs: string, remote: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    printer.streamJob(fileLineSource(localAbs), {
      finished: (outcome, _pos, error) => (outcome === 'done' ? resolve() : reject(new Error(error ?? `transfer ${outcome}`))),
    }, { prologue: [`M28 /${remote}`], epilogue: ['M29'], onCancel: ['M29', `M30 /${remote}`] });
  });
}
