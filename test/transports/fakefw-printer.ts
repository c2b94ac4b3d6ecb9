// Test helper: a PrinterService on the real serial path (serialport on a pty) to fakefw, with its link on the main
// thread or in a link thread, torn down after the test.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { ConfigStore } from '../../src/config/config-store.ts';
import { EventBus } from '../../src/core/event-bus.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { startThread } from '../../src/core/thread-code.ts';
import { PRINTER_SECTIONS, PrinterService } from '../../src/printer/printer-service.ts';
import { builtinDefaultProfile } from '../../src/printer/profiles/printer-profile-shape.ts';
import { createTransportFactory } from '../../src/transports/transport-factory.ts';
import { baudrateOptions, detectionBaudrates } from '../../src/transports/port-discovery.ts';
import { startFakeFw, type FakeFw } from './bench-tools.ts';

const LINK_ENTRY = new URL('../../src/printer/link/link-thread.ts', import.meta.url);

export interface FakeFwPrinter {
  dir: string;
  fw: FakeFw;
  printer: PrinterService;
  /** Every terminal line the printer reported, in order. */
  log: string[];
  /** Stops the printer before the test ends (the teardown then skips it). */
  stop(): Promise<void>;
}

/**
 * `fwArgs` go to fakefw; `serial` over the serial settings; `linkThread: 'worker'` runs the link in a thread, and
 * each thread started is added to `threads`.
 */
export async function printerOnFakeFw(
  t: { after(fn: () => Promise<void>): void },
  opts: { fwArgs?: string[]; serial?: Record<string, unknown>; linkThread?: 'worker' | 'main'; threads?: Worker[] } = {},
): Promise<FakeFwPrinter> {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-fakefw-'));
  const fw = await startFakeFw(dir, opts.fwArgs ?? []);
  const config = ConfigStore.fromObject(join(dir, 'config.yaml'), { serial: { log: false, linkThread: opts.linkThread ?? 'main', ...opts.serial } });
  const profile = builtinDefaultProfile();
  const printer = new PrinterService({
    config: config.slice(...PRINTER_SECTIONS), events: new EventBus(), logger: silentLogger, logsDir: dir,
    profiles: { get: (id) => (id === profile.id ? profile : undefined), getDefault: () => profile },
    ports: {
      listPorts: async () => [fw.port],
      baudrates: () => baudrateOptions(config.current.serial),
      detectionBaudrates: (n) => detectionBaudrates(config.current.serial, { portCount: n }),
      transports: async () => createTransportFactory({ settings: () => config.current, virtualSdFolder: null }),
    },
    ...(opts.linkThread === 'worker' ? {
      linkThread: {
        spawn: async (init) => {
          const thread = await startThread(LINK_ENTRY, 'link-worker.js', { name: 'printer-link', workerData: init });
          opts.threads?.push(thread);
          return thread;
        },
        config: config.slice('serial', 'devel').get, virtualSdFolder: null,
      },
    } : {}),
  });
  await printer.start();
  let stopped = false;
  const stop = async (): Promise<void> => {
    stopped = true;
    await printer.stop();
  };
  t.after(async () => {
    if (!stopped) await printer.stop();
    await fw.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const log: string[] = [];
  printer.subscribe({ log: (lines) => log.push(...lines) });
  return { dir, fw, printer, log, stop };
}
