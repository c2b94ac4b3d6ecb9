// The per-folder metadata file: every acknowledged change is on disk, and changes that arrive together share a write.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { METADATA_FILE, MetadataStore } from '../../src/files/metadata-store.ts';
import { silentLogger } from '../../src/core/logger.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const onDisk = async (folder: string): Promise<Record<string, unknown>> => JSON.parse(await readFile(join(folder, METADATA_FILE), 'utf8')) as Record<string, unknown>;

test('500 changes to one folder at once: all on disk when they resolve, in two writes rather than 500', async (t) => {
  const folder = await tempDir(t, 'gantry-meta-');
  const store = new MetadataStore(silentLogger);
  await Promise.all(Array.from({ length: 500 }, (_, i) => store.update(folder, `part-${i}.gcode`, { analysis: { estimatedPrintTime: i } })));
  const disk = await onDisk(folder);
  assert.equal(Object.keys(disk).length, 500);
  assert.deepEqual(disk['part-499.gcode'], { analysis: { estimatedPrintTime: 499 } });
  assert.ok(store.writes <= 3, `${store.writes} writes`);
});

test('each change is on disk once its call resolves, whatever else is writing meanwhile', async (t) => {
  const folder = await tempDir(t, 'gantry-meta-');
  const store = new MetadataStore(silentLogger);
  // Background changes keep a write under way nearly all the time.
  let stop = false;
  const background = (async () => {
    for (let i = 0; !stop; i++) await store.update(folder, `bg-${i % 7}.gcode`, { userdata: i });
  })();
  for (let i = 0; i < 40; i++) {
    await store.update(folder, 'watched.gcode', { userdata: i });
    assert.deepEqual((await onDisk(folder))['watched.gcode'], { userdata: i }, `change ${i}`);
  }
  stop = true;
  await background;
});

test('a folder forgotten and loaded again while a write is queued: the write takes the newer state', async (t) => {
  const folder = await tempDir(t, 'gantry-meta-');
  const store = new MetadataStore(silentLogger);
  await store.update(folder, 'a.gcode', { userdata: 1 });
  const first = store.update(folder, 'a.gcode', { userdata: 2 });
  store.forget(folder);
  const second = store.update(folder, 'b.gcode', { userdata: 3 });
  await Promise.all([first, second]);
  assert.deepEqual(await onDisk(folder), { 'a.gcode': { userdata: 1 }, 'b.gcode': { userdata: 3 } });
  assert.deepEqual(await store.all(folder), await onDisk(folder));
});

test('property: after any batches of concurrent changes, disk and memory agree', async (t) => {
  const folder = await tempDir(t, 'gantry-meta-');
  const names = ['a.gcode', 'b.gcode', 'c.gcode', 'd.gcode'];
  const change = fc.record({ name: fc.constantFrom(...names), value: fc.option(fc.integer(), { nil: undefined }) });
  await fc.assert(fc.asyncProperty(fc.array(fc.array(change, { minLength: 1, maxLength: 20 }), { minLength: 1, maxLength: 6 }), async (batches) => {
    const store = new MetadataStore(silentLogger);
    const expected = new Map<string, number>(Object.entries(await store.all(folder)).map(([k, v]) => [k, (v as { userdata: number }).userdata]));
    for (const batch of batches) {
      await Promise.all(batch.map(({ name, value }) => (value === undefined ? store.set(folder, name, undefined) : store.update(folder, name, { userdata: value }))));
      // The last change to a name in the batch is what stays (they apply in call order).
      for (const { name, value } of batch) {
        if (value === undefined) expected.delete(name);
        else expected.set(name, value);
      }
      const disk = await onDisk(folder).catch(() => ({}));
      assert.deepEqual(disk, await store.all(folder));
      assert.deepEqual(new Map(Object.entries(disk).map(([k, v]) => [k, (v as { userdata: number }).userdata])), expected);
    }
  }), { numRuns: 40 });
});
