// The protocol engine against the virtual printer through the loopback: connect, heat, SD listing, a job under
// corruption and lost oks that still arrives whole, and a vanished device that ends in an error state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigStore } from '../../src/config/config-store.ts';
import { EventBus } from '../../src/core/event-bus.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { PRINTER_SECTIONS, PrinterService } from '../../src/printer/printer-service.ts';
import { builtinDefaultProfile } from '../../src/printer/profiles/printer-profile-shape.ts';
import { createTransportFactory } from '../../src/transports/transport-factory.ts';
import type { LoopbackTransport } from '../../src/transports/loopback-transport.ts';
import type { JobLineBatch, JobOutcome } from '../../src/printer/types.ts';

async function rig(t: { after(fn: () => Promise<void>): void }, virtualPrinter: Record<string, unknown> = {}, serial: Record<string, unknown> = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-vp-engine-'));
  const config = ConfigStore.fromObject(join(dir, 'config.yaml'), {
    serial: { log: false, ...serial },
    devel: { virtualPrinter: { throttle: 0, busyInterval: 0, ...virtualPrinter } },
  });
  const factory = createTransportFactory({ settings: () => config.current, virtualSdFolder: join(dir, 'sd') });
  let transport: LoopbackTransport | null = null;
  const profile = builtinDefaultProfile();
  const printer = new PrinterService({
    config: config.slice(...PRINTER_SECTIONS),
    events: new EventBus(),
    logger: silentLogger,
    profiles: { get: () => profile, getDefault: () => profile },
    ports: {
      listPorts: async () => ['VIRTUAL'],
      baudrates: () => [115200],
      detectionBaudrates: () => [115200],
      transports: async () => (port, baud) => (transport = factory(port, baud) as LoopbackTransport),
    },
    logsDir: dir,
  });
  await printer.start();
  t.after(async () => {
    await printer.stop();
    await rm(dir, { recursive: true, force: true });
  });
  await printer.connect({ port: 'VIRTUAL', baudrate: 115200 });
  await until('Operational', () => printer.state().text === 'Operational');
  return { printer, firmware: () => transport!.firmware! };
}

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function job(total: number): AsyncGenerator<JobLineBatch> {
  return (async function* () {
    const lines: string[] = [];
    const ends: number[] = [];
    for (let i = 1; i <= total; i++) {
      lines.push(`G1 X${i} Y${i % 50} F6000`);
      ends.push(i * 20);
    }
    yield { lines, ends };
  })();
}

test('the engine connects to VIRTUAL, heats, sees the SD card and streams a job', async (t) => {
  const { printer, firmware } = await rig(t);
  printer.setTemperature('tool0', 200);
  printer.setTemperature('bed', 60);
  await until('temperatures reported', () => printer.temperatures().tool0?.actual === 200 && printer.temperatures().bed?.actual === 60);
  await until('SD ready', () => printer.sdReady());
  const outcome = await new Promise<JobOutcome>((resolve) => printer.streamJob(job(300), { finished: (o) => resolve(o) }));
  assert.equal(outcome, 'done');
  assert.equal(firmware().state.pos.x, 300);
});

test('a job survives corrupted lines in the simulator (resend requests) and still ends at the last move', async (t) => {
  const { printer, firmware } = await rig(t, { resendEveryN: 25 });
  const outcome = await new Promise<JobOutcome>((resolve) => printer.streamJob(job(400), { finished: (o) => resolve(o) }));
  assert.equal(outcome, 'done');
  assert.equal(firmware().state.pos.x, 400);
});

test('a vanished virtual device moves the printer to an error state; the service keeps answering', async (t) => {
  const { printer } = await rig(t, { disconnectAfterLines: 40 });
  const outcome = await new Promise<JobOutcome>((resolve) => printer.streamJob(job(200), { finished: (o) => resolve(o) }));
  assert.equal(outcome, 'error');
  await until('an error state', () => printer.state().flags.error || printer.state().flags.closedOrError);
  assert.equal(printer.isOperational(), false);
});

test('lost oks are recovered by the communication timeout; every move still arrives once', async (t) => {
  // Engine and simulator timers are unref'd; keep the test process alive while a timeout is pending.
  const keepAlive = setInterval(() => {}, 1000);
  t.after(async () => clearInterval(keepAlive));
  const { printer, firmware } = await rig(t, { dropOkEveryN: 60 }, { timeout: { communication: 0.3, communicationBusy: 0.3 }, maxCommunicationTimeouts: { printing: 0 } });
  const outcome = await new Promise<JobOutcome>((resolve) => printer.streamJob(job(200), { finished: (o) => resolve(o) }));
  assert.equal(outcome, 'done');
  assert.equal(firmware().state.pos.x, 200);
});
