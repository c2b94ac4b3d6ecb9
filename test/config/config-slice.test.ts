// A service's config slice: live reads, change reports limited to its sections, saves confined to them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ConfigStore } from '../../src/config/config-store.ts';
import { tempDir } from '../helpers/temp-dir.ts';

async function store(t: { after(fn: () => Promise<void>): void }): Promise<ConfigStore> {
  const dir = await tempDir(t, 'gantry-slice-');
  return ConfigStore.load(join(dir, 'config.yaml'));
}

test('a slice reads the sections in effect now, including saves made through the whole store', async (t) => {
  const config = await store(t);
  const events = config.slice('events');
  const before = events.get().events.commandTimeout;
  await config.patch({ events: { commandTimeout: before + 7 } });
  assert.equal(events.get().events.commandTimeout, before + 7);
  assert.equal(Object.keys(events.get()).join(), 'events', 'only the named sections are visible');
  assert.ok(Object.isFrozen(events.get()));
});

test('onChange reports saves to its own sections only, with the values before and after', async (t) => {
  const config = await store(t);
  const seen: Array<[number, number]> = [];
  const off = config.slice('events').onChange((now, before) => seen.push([before.events.commandTimeout, now.events.commandTimeout]));
  await config.patch({ appearance: { name: 'elsewhere' } });
  assert.deepEqual(seen, [], 'a save to another section is not reported');
  const start = config.current.events.commandTimeout;
  await config.patch({ events: { commandTimeout: start + 1 } });
  assert.deepEqual(seen, [[start, start + 1]]);
  off();
  await config.patch({ events: { commandTimeout: start + 2 } });
  assert.equal(seen.length, 1, 'nothing after unsubscribing');
});

test('a slice saves and unsets under its own sections and refuses any other', async (t) => {
  const config = await store(t);
  const slicing = config.slice('slicing');
  await slicing.patch({ slicing: { defaultProfiles: { prusa: 'fast' } } });
  assert.equal((parse(await readFile(config.path, 'utf8')) as { slicing: { defaultProfiles: Record<string, string> } }).slicing.defaultProfiles.prusa, 'fast');
  assert.equal(slicing.get().slicing.defaultProfiles.prusa, 'fast');
  await slicing.unset(['slicing', 'defaultProfiles', 'prusa']);
  assert.equal(slicing.get().slicing.defaultProfiles.prusa, undefined);
  // Outside the type (a cast), refused at run time and nothing is written.
  await assert.rejects(slicing.patch({ server: { port: 1 } } as never), /cannot write server/);
  await assert.rejects(slicing.unset(['api', 'key'] as never), /cannot write api/);
  assert.notEqual(config.current.server.port, 1);
});
