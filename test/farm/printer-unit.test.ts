// Issue #52's "done when": a printer unit built twice in one process, each with its own virtual printer, config and
// folders, and both print a file of the shared library to completion.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ConfigStore } from '../../src/config/config-store.ts';
import { resolvePaths, createFolders } from '../../src/config/paths.ts';
import { EventBus } from '../../src/core/event-bus.ts';
import { systemClock } from '../../src/core/clock.ts';
import { buildPrinterUnit } from '../../src/farm/printer-unit.ts';
import { TopicLinkRelay } from '../../src/farm/topic-relay.ts';
import { portsFor, spawnLinkThread } from '../../src/main.ts';
import { startTestServer } from '../helpers/server.ts';
import { FAST_PRINTER } from '../helpers/connected-server.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { nextEvent, waitFor } from '../helpers/wait.ts';
import { uploadFile, smallGcode } from '../printer/job/helpers.ts';

test('two printer units built by the same function print a file each to completion', async (t) => {
  // The server is the first build (its default printer); the second is built here with the same shared library.
  const server = await startTestServer(t, { settings: FAST_PRINTER });
  const r = await uploadFile(server, 'part.gcode', smallGcode(60));
  assert.equal(r.status, 201);

  const base = await tempDir(t, 'gantry-unit-');
  const paths = resolvePaths(base);
  await createFolders(paths);
  const config = await ConfigStore.load(paths.config);
  await config.patch(FAST_PRINTER);
  const events = new EventBus(() => {});
  const second = buildPrinterUnit({
    name: 'second', config, paths, events, clock: systemClock, logger: pino({ level: 'silent' }), files: server.files,
    ports: portsFor, spawnLinkThread, mqtt: new TopicLinkRelay(),
  });
  await second.start();
  t.after(() => second.stop());
  server.farm.add(second);
  t.after(() => { server.farm.remove('second'); });
  const first = server.farm.get('default');
  assert.ok(first && first !== second && first.printer !== second.printer && first.jobs !== second.jobs);

  for (const u of [first, second]) {
    await u.printer.connect({ port: 'VIRTUAL', baudrate: 115200 });
    await waitFor(`${u.name} operational`, () => u.printer.isOperational() && u.printer.firmwareName() !== '');
  }
  const done = [nextEvent(server.events, 'PrintDone', undefined, 30_000), nextEvent(events, 'PrintDone', undefined, 30_000)];
  // A file held by one printer is held for the library: both print the same file at once.
  await first.jobs.select('local', 'part.gcode', { print: true });
  await second.jobs.select('local', 'part.gcode', { print: true });
  await waitFor('both printing', () => first.jobs.isPrinting() || second.jobs.isPrinting());
  assert.equal(server.farm.isInUse('local', 'part.gcode'), true);
  const [a, b] = await Promise.all(done);
  assert.equal(a.name, 'part.gcode');
  assert.equal(b.name, 'part.gcode');
  // Each unit kept its own history, in its own folder.
  assert.notEqual(first.paths.data, second.paths.data);
  await waitFor('a history entry on each', async () => (await first.jobs.printHistory()).length === 1 && (await second.jobs.printHistory()).length === 1);
  await second.printer.disconnect();
});
