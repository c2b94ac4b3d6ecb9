// The bed-mesh service's history (src/bed-mesh/bed-mesh-service.ts): bounded by plugins.bedmesh.historySize, kept
// across a restart, refusals while printing or not connected. The printer is a script of replies here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { BedMeshService, type MeshPrinter } from '../../src/bed-mesh/bed-mesh-service.ts';
import { EventBus } from '../../src/core/event-bus.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { tempDir } from '../helpers/temp-dir.ts';
import { DomainError } from '../../src/core/errors.ts';

function scripted(state: { operational: boolean; printing: boolean }) {
  let watcher: ((line: string) => void) | null = null;
  const sent: string[][] = [];
  const printer: MeshPrinter = {
    watchReplies: (w) => { watcher = w; return () => { watcher = null; }; },
    commands: (lines) => { sent.push(lines); },
    isOperational: () => state.operational,
    isPrinting: () => state.printing,
    firmwareName: () => 'Marlin 2.1.2',
  };
  return { printer, sent, reply: (lines: string[]) => { for (const l of lines) watcher?.(l); } };
}

const config = (historySize: number) => {
  const now = { plugins: { bedmesh: { command: '', historySize, timeout: 60 } }, appearance: { name: 'P' } };
  return { get: () => now, onChange: () => () => {}, patch: async () => {}, unset: async () => {} } as never;
};

test('the history keeps the newest meshes up to its bound, on disk across a restart', async (t) => {
  const dir = await tempDir(t, 'bedmesh-');
  const file = join(dir, 'bed-meshes.json');
  const state = { operational: true, printing: false };
  const p = scripted(state);
  let time = 1_000_000;
  const deps = { config: config(3), events: new EventBus(), clock: { now: () => (time += 120_000), monotonic: () => time }, logger: silentLogger,
    printer: p.printer, bed: () => ({ id: '_default', width: 200, depth: 200, height: 200, circular: false }), file };
  const svc = new BedMeshService(deps);
  await svc.start();
  svc.probe();
  assert.deepEqual(p.sent[0], ['G28', 'G29', 'M420 S1 V']);
  assert.throws(() => svc.probe(), /already running/);
  for (let i = 1; i <= 5; i++) p.reply(['Bilinear Leveling Grid:', ` 0 +0.${i}00 +0.200`, ' 1 +0.300 +0.400', 'ok']);
  assert.equal(svc.probing(), false);
  assert.deepEqual(svc.history().map((m) => m.z[0][0]), [0.5, 0.4, 0.3]);
  await svc.stop();

  const again = new BedMeshService(deps);
  await again.start();
  assert.deepEqual(again.history().map((m) => m.z[0][0]), [0.5, 0.4, 0.3]);
  state.printing = true;
  assert.throws(() => again.probe(), (e: unknown) => e instanceof DomainError && /printing/.test(e.message));
  state.operational = false;
  assert.throws(() => again.probe(), DomainError);
  await again.stop();
});
