// The queue's printers over the one printer a server has today (named `default`): its job runner starts the file,
// the Print* events of the bus say how the print ended. A farm of printer units plugs in its own QueuePrinters.
import type { EventBus } from '../core/event-bus.ts';
import type { QueuePrinterEvent, QueuePrinterProfile, QueuePrinters } from './queue-printers.ts';

export interface SinglePrinterDeps {
  name?: string;
  events: EventBus;
  /** Operational, ready and no job. */
  idle(): boolean;
  /** Selects the library file and starts printing it. */
  print(path: string): Promise<void>;
  /** Calls `fn` on each change of the printer's state; returns the unsubscribe. */
  watchState(fn: () => void): () => void;
  profile(): QueuePrinterProfile;
}

export function singlePrinter(deps: SinglePrinterDeps): QueuePrinters {
  const name = deps.name ?? 'default';
  const owner = `queue-printer-${name}`;
  return {
    list: () => [{ name, idle: deps.idle(), profile: deps.profile() }],
    startPrint: async (printer, path) => {
      if (printer !== name) throw new Error(`No printer named ${printer}`);
      await deps.print(path);
    },
    on: (event: QueuePrinterEvent, fn) => {
      const tell = () => fn(name);
      switch (event) {
        case 'finished': return deps.events.on(owner, 'PrintDone', tell);
        // A cancel also sends PrintFailed (reason cancelled): only an error counts as failed here.
        case 'failed': return deps.events.on(owner, 'PrintFailed', (p) => { if (p.reason === 'error') tell(); });
        case 'cancelled': return deps.events.on(owner, 'PrintCancelled', tell);
        case 'changed': return deps.watchState(tell);
      }
    },
  };
}
