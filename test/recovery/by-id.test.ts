// Reconnecting follows the device, not the number: a port known by a /dev/serial/by-id name is found again under its
// new name, and the old path, now another device, is never opened. A disconnect asked for is never undone.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rename, rm, symlink, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigStore } from '../../src/config/config-store.ts';
import { EventBus } from '../../src/core/event-bus.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { PRINTER_SECTIONS, PrinterService } from '../../src/printer/printer-service.ts';
import { builtinDefaultProfile } from '../../src/printer/profiles/printer-profile-shape.ts';
import { createTransportFactory } from '../../src/transports/transport-factory.ts';
import { baudrateOptions, detectionBaudrates } from '../../src/transports/port-discovery.ts';
import { AutoReconnect } from '../../src/recovery/auto-reconnect.ts';
import { waitFor } from '../printer/helpers.ts';
import { startLoggedFw, type LoggedFw } from './fakefw.ts';

async function rig(t: TestContext) {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-by-id-'));
  const byIdDir = join(dir, 'by-id');
  await mkdir(byIdDir);
  const port = join(dir, 'ttyUSB0');
  const byId = join(byIdDir, 'usb-Prusa_Original_Prusa_i3_MK3_CZPX1234-if00');
  const fws: LoggedFw[] = [];
  const fw = async (link: string) => {
    const f = await startLoggedFw(link);
    fws.push(f);
    return f;
  };
  t.after(async () => {
    for (const f of fws) await f.kill();
    await rm(dir, { recursive: true, force: true });
  });
  const first = await fw(port);
  await symlink(await realpath(port), byId);
  const config = ConfigStore.fromObject(join(dir, 'config.yaml'), { serial: { log: false }, recovery: { reconnectDelay: 0.1, reconnectMaxDelay: 0.2 } });
  const events = new EventBus();
  const profile = builtinDefaultProfile();
  const ports = {
    // What udev and the globs would list: both names, as long as they lead to a device.
    listPorts: async () => (await Promise.all([port, byId].map((p) => realpath(p).then(() => p, () => null)))).filter((p): p is string => p !== null),
    baudrates: () => baudrateOptions(config.current.serial),
    detectionBaudrates: (n: number) => detectionBaudrates(config.current.serial, { portCount: n }),
    transports: async () => createTransportFactory({ settings: () => config.current, virtualSdFolder: null }),
  };
  const printer = new PrinterService({
    config: config.slice(...PRINTER_SECTIONS), events, logger: silentLogger, ports, logsDir: dir,
    profiles: { get: (id) => (id === profile.id ? profile : undefined), getDefault: () => profile },
  });
  const reconnect = new AutoReconnect({
    printer, ports, events, logger: silentLogger, config: config.slice('recovery'), byIdDir,
    journal: { awaitsReconnect: () => false, noteReconnect: () => {}, continueAfterReconnect: async () => ({ continued: false, reason: '' }) },
  });
  await printer.start();
  await reconnect.start();
  t.after(async () => {
    await reconnect.stop();
    await printer.stop();
  });
  return { dir, port, byId, first, fw, printer, reconnect };
}

test('the device comes back under another number: found by its by-id name; the old path (another device now) is never opened', async (t) => {
  const { dir, port, byId, first, fw, printer, reconnect } = await rig(t);
  await printer.connect({ port, baudrate: 115200 });
  await waitFor('Operational', () => printer.isOperational() || undefined);
  await waitFor('the device known by its by-id name', () => reconnect.watchedDevice() === byId || undefined);

  // Pulled: the device node and its by-id name go (udev removes both).
  await first.kill();
  await unlink(port);
  await unlink(byId);
  await waitFor('offline after the error', () => printer.state().flags.closedOrError || undefined);
  // Another device takes the old number; the printer comes back as a new pty, which udev's by-id name now points to.
  const stranger = await fw(port);
  const back = await fw(join(dir, 'staging'));
  await symlink(await realpath(join(dir, 'staging')), join(dir, 'by-id-new'));
  await rename(join(dir, 'by-id-new'), byId);

  await waitFor('Operational again', () => printer.isOperational() || undefined, 15_000);
  assert.equal(printer.connection().port, byId);
  assert.ok(back.received.length > 0, 'the printer was talked to');
  assert.deepEqual(stranger.received, [], 'the device that took the old number was never opened');
});

test('a disconnect asked for is never undone: no reconnect after it, even when the port is there', async (t) => {
  const { port, printer, first } = await rig(t);
  await printer.connect({ port, baudrate: 115200 });
  await waitFor('Operational', () => printer.isOperational() || undefined);
  await printer.disconnect();
  const heard = first.received.length;
  // Several back-off rounds' worth (0.1 s, then 0.2 s): a reconnect would have happened by now.
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(printer.isOperational(), false);
  assert.equal(first.received.length, heard);
});
