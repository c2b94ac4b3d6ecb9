// Port discovery (fake /dev, additionalPorts globs, blacklist, VIRTUAL), baudrate lists, line splitting, the loopback transport.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { listPorts, baudrateOptions, detectionBaudrates, globMatcher, natural, VIRTUAL_PORT } from '../../src/transports/port-discovery.ts';
import { LineSplitter } from '../../src/transports/line-splitter.ts';
import { LoopbackTransport } from '../../src/transports/loopback-transport.ts';
import { createTransportFactory } from '../../src/transports/transport-factory.ts';
import { SerialTransport } from '../../src/transports/serial-transport.ts';
import { VirtualPrinter } from '../../src/virtual-printer/virtual-printer.ts';
import { ConfigStore } from '../../src/config/config-store.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test('ports: device globs and additionalPorts, minus blacklist, naturally sorted, VIRTUAL when enabled', async (t) => {
  const dev = await tempDir(t, 'gantry-dev-');
  for (const n of ['ttyACM10', 'ttyACM2', 'ttyUSB0', 'ttyS0', 'console']) await writeFile(join(dev, n), '');
  await mkdir(join(dev, 'serial', 'by-id'), { recursive: true });
  await symlink(join(dev, 'ttyUSB0'), join(dev, 'serial', 'by-id', 'usb-Prusa_MK3-if00'));
  await mkdir(join(dev, 'extra'));
  await writeFile(join(dev, 'extra', 'printer-a'), '');
  const ports = await listPorts({
    deviceGlobs: [`${dev}/serial/by-id/*`, `${dev}/ttyUSB*`, `${dev}/ttyACM*`],
    additionalPorts: [`${dev}/extra/printer-*`, `${dev}/missing*`],
    blacklistedPorts: [`${dev}/ttyACM1?`],
    virtualPrinter: true,
    useUdev: false,
  });
  assert.deepEqual(ports, [
    `${dev}/extra/printer-a`,
    `${dev}/serial/by-id/usb-Prusa_MK3-if00`,
    `${dev}/ttyACM2`,
    `${dev}/ttyUSB0`,
    VIRTUAL_PORT,
  ]);
  const none = await listPorts({ deviceGlobs: [`${dev}/nothing*`], additionalPorts: [], blacklistedPorts: [], virtualPrinter: false, useUdev: false });
  assert.deepEqual(none, []);
});

test('listing with the default globs never throws, even without udevadm', async () => {
  const ports = await listPorts({ additionalPorts: [], blacklistedPorts: [], virtualPrinter: true });
  assert.ok(ports.includes(VIRTUAL_PORT));
});

test('globs follow fnmatch, in time at most name × glob', () => {
  const m = (glob: string, name: string) => globMatcher(glob)(name);
  assert.ok(m('/dev/tty[AU]*', '/dev/ttyUSB0'));
  assert.ok(!m('/dev/tty[!U]*', '/dev/ttyUSB0'));
  assert.ok(m('/dev/ttyACM?', '/dev/ttyACM1'));
  assert.ok(!m('/dev/ttyACM?', '/dev/ttyACM10'));
  assert.ok(!m('/dev/tty.USB', '/dev/ttyxUSB'));
  assert.ok(m('tty[A-Z][0-9]', 'ttyS0') && !m('tty[A-Z][0-9]', 'ttyS10') && !m('tty[A-Z][0-9]', 'tty_0'));
  assert.ok(m('a[]b]c', 'a]c') && m('a[]b]c', 'abc'), 'a ] first in a class is a member');
  assert.ok(m('a[b', 'a[b') && !m('a[b', 'ab'), 'an unclosed [ is itself');
  assert.ok(m('*', '') && m('**a**', 'xa') && !m('*a', 'ab') && m('*a*b*', 'xaybz') && !m('*a*b*', 'xbya'));
  assert.ok(m('/dev/serial/*', '/dev/serial/by-id/usb-x'), 'a star crosses /');
  // Many stars against a name that nearly matches: as a regular expression, exponential in their number (minutes).
  const t0 = performance.now();
  assert.ok(!m(`${'*a'.repeat(40)}b`, 'a'.repeat(60)));
  assert.ok(!m(`${'*?'.repeat(40)}x`, 'y'.repeat(60)));
  assert.ok(performance.now() - t0 < 1000);
});

test('port names sort as ICU collation with numeric ordering would, without loading ICU', () => {
  assert.deepEqual(['ttyUSB10', 'ttyUSB2', 'ttyACM0', 'VIRTUAL', 'serial/by-id/usb-Prusa_MK3-if00'].sort(natural),
    ['serial/by-id/usb-Prusa_MK3-if00', 'ttyACM0', 'ttyUSB2', 'ttyUSB10', 'VIRTUAL']);
  const name = fc.stringMatching(/^[a-zA-Z1-9/._:-]{0,8}$/);
  fc.assert(fc.property(name, name, (a, b) => Math.sign(natural(a, b)) === Math.sign(a.localeCompare(b, 'en', { numeric: true }))), { numRuns: 5000 });
});

test('baudrates: the dialog list is sorted descending; detection tries the last used and likely ones first', () => {
  assert.deepEqual(baudrateOptions({ additionalBaudrates: [], blacklistedBaudrates: [] }), [250000, 230400, 115200, 57600, 38400, 19200, 9600]);
  assert.deepEqual(baudrateOptions({ additionalBaudrates: [500000, 115200], blacklistedBaudrates: [9600] }), [500000, 250000, 230400, 115200, 57600, 38400, 19200]);
  assert.deepEqual(detectionBaudrates({ additionalBaudrates: [], blacklistedBaudrates: [] }), [115200, 250000, 230400, 57600, 38400, 19200, 9600]);
  assert.deepEqual(detectionBaudrates({ additionalBaudrates: [500000], blacklistedBaudrates: [250000] }, { lastUsed: 57600, portCount: 3 }), [57600, 500000, 115200]);
});

test('the line splitter handles \\n, \\r\\n, partial lines across chunks and Latin-1 noise', () => {
  const got: string[] = [];
  const s = new LineSplitter((l) => got.push(l));
  s.push(Buffer.from('ok\r\nok T:21'));
  s.push(Buffer.from('.30 /0.00\nstart\n\n'));
  s.push(Buffer.from([0x80, 0x0a]));
  s.push(Buffer.from('echo:caf\u00e9\n', 'utf8'));
  s.push(Buffer.from('partial'));
  assert.deepEqual(got, ['ok', 'ok T:21.30 /0.00', 'start', '', '\u0080', 'echo:caf\u00e9']);
  s.reset();
  s.push(Buffer.from('\n'));
  assert.equal(got.at(-1), '');
});

test('the line splitter reads only the filled part of a reused read buffer and copies the partial tail', () => {
  const got: string[] = [];
  const s = new LineSplitter((l) => got.push(l));
  const buf = Buffer.alloc(64, 'x');
  const fill = (text: string): number => buf.write(text, 'latin1');
  s.push(buf, fill('ok\nok T:2'));
  // The next read overwrites the buffer: the kept tail must not change with it.
  s.push(buf, fill('1.5\nwait\nbus'));
  s.push(buf, fill('y:processing\n'));
  s.push(buf, 0);
  assert.deepEqual(got, ['ok', 'ok T:21.5', 'wait', 'busy:processing']);
});

test('loopback: boot banner and replies arrive asynchronously, never inside write(); close and the disconnect fault', async () => {
  const tr = new LoopbackTransport(() => new VirtualPrinter({ timeScale: 0, busyInterval: 0 }));
  const lines: string[] = [];
  let inWrite = false;
  let reentered = false;
  tr.on('line', (l) => {
    if (inWrite) reentered = true;
    lines.push(l);
  });
  const closes: (Error | undefined)[] = [];
  tr.on('close', (e) => closes.push(e));
  await tr.open();
  assert.deepEqual(lines, [], 'boot lines are not delivered synchronously');
  await new Promise((r) => setImmediate(r));
  assert.equal(lines[0], 'start');
  inWrite = true;
  const w = tr.write('N0 M110 N0*125');
  inWrite = false;
  await w;
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(reentered, false);
  assert.equal(lines.at(-1), 'ok');
  await tr.write('!!DEBUG:disconnect');
  assert.equal(closes.length, 1);
  assert.ok(closes[0] instanceof Error);
  await assert.rejects(tr.write('M105'), /not open/);
  // Reopening powers up a fresh printer.
  await tr.open();
  await tr.close();
  assert.equal(closes.length, 2);
  assert.equal(closes[1], undefined);
});

test('the factory maps VIRTUAL to the simulator (with settings) and anything else to a serial port', async (t) => {
  const dir = await tempDir(t, 'gantry-factory-');
  const config = ConfigStore.fromObject(join(dir, 'config.yaml'), { devel: { virtualPrinter: { numExtruders: 3, firmwareName: 'Test FW', throttle: 0 } } });
  const factory = createTransportFactory({ settings: () => config.current, virtualSdFolder: join(dir, 'sd') });
  assert.ok(factory('/dev/ttyUSB0', 115200) instanceof SerialTransport);
  const v = factory(VIRTUAL_PORT, 250000) as LoopbackTransport;
  assert.ok(v instanceof LoopbackTransport);
  await v.open();
  t.after(() => v.close());
  assert.equal(v.firmware?.opts.numExtruders, 3);
  const got: string[] = [];
  v.on('line', (l) => got.push(l));
  await v.write('M115');
  await new Promise((r) => setTimeout(r, 20));
  assert.ok(got.some((l) => l.includes('FIRMWARE_NAME:Test FW')));
});
