// The print queue's printers are the farm's: each unit's job runner starts a file, its own bus says how a print ended,
// and printers added or removed while running join or leave the queue's view.
import { notFound } from '../core/errors.ts';
import type { QueuePrinterEvent, QueuePrinters } from '../queue/queue-printers.ts';
import type { PrinterFarm } from './printer-farm.ts';
import type { PrinterUnit } from './printer-unit.ts';

function watch(unit: PrinterUnit, event: QueuePrinterEvent, fn: () => void): () => void {
  const owner = `queue-printer-${unit.name}`;
  switch (event) {
    case 'finished': return unit.events.on(owner, 'PrintDone', fn);
    // A cancel also sends PrintFailed (reason cancelled): only an error counts as failed here.
    case 'failed': return unit.events.on(owner, 'PrintFailed', (p) => { if (p.reason === 'error') fn(); });
    case 'cancelled': return unit.events.on(owner, 'PrintCancelled', fn);
    case 'changed': return unit.printer.subscribe({ state: () => fn() });
  }
}

export function farmQueuePrinters(farm: PrinterFarm): QueuePrinters {
  return {
    list: () => farm.list().map((u) => {
      const p = u.profiles.getCurrentOrDefault();
      return {
        name: u.name, idle: u.printer.isOperational() && u.jobs.isReady(),
        profile: { bedX: p.volume.width, bedY: p.volume.depth, nozzleDiameter: p.extruder.nozzleDiameter },
      };
    }),
    startPrint: async (name, path) => {
      const unit = farm.get(name);
      if (!unit) throw notFound(`No printer named ${name}`);
      await unit.jobs.select('local', path, { print: true });
    },
    on: (event, fn) => {
      const subs = new Map<string, () => void>();
      const add = (u: PrinterUnit) => subs.set(u.name, watch(u, event, () => fn(u.name)));
      for (const u of farm.list()) add(u);
      const unfarm = farm.onChange((change, u) => {
        subs.get(u.name)?.();
        subs.delete(u.name);
        if (change === 'added') {
          add(u);
          // A new printer may take a job at once.
          if (event === 'changed') fn(u.name);
        }
      });
      return () => {
        unfarm();
        for (const s of subs.values()) s();
        subs.clear();
      };
    },
  };
}
