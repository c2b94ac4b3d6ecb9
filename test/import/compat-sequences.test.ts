// Every client call sequence of test/e2e/compat (Cura, FDM Monster, Home Assistant, OctoPod, OctoRest, OctoPrint's own
// web client, slicers, HTTP conventions) run again on servers imported from fixture A: each sequence's server() starts
// on its own copy of one import, and the sequences use the imported global key and settings.
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { server, useCompatTarget } from '../e2e/compat/helpers.ts';
import { A, FIXTURE_DIR, SKIP, runImport, tempDir } from './helpers.ts';

if (SKIP) {
  test('client sequences on an imported server', { skip: SKIP }, () => {});
} else {
  // One import, then a copy of its result per sequence: the same state each time, without importing 36 times.
  let imported: Promise<string> | undefined;
  const baseDir = async (t: TestContext): Promise<string> => {
    imported ??= runImport(t, FIXTURE_DIR).then((r) => r.baseDir);
    const dir = join(await tempDir(t, 'gantry-compat-'), 'gantry');
    await cp(await imported, dir, { recursive: true });
    return dir;
  };
  useCompatTarget({ baseDir });
  test('the sequences below start on the imported server: its global key, name and users', async (t) => {
    const s = await server(t);
    assert.equal(s.apiKey, A.globalKey);
    assert.equal(s.config.current.appearance.name, 'Workshop A');
    assert.deepEqual(s.access.users.listUsers().map((u) => u.name).sort(), ['admin', 'alice', 'bob']);
  });
  // Imported in this module, their tests register here and run with the target set above.
  await import('../e2e/compat/cura.test.ts');
  await import('../e2e/compat/fdm-monster.test.ts');
  await import('../e2e/compat/home-assistant.test.ts');
  await import('../e2e/compat/http-conventions.test.ts');
  await import('../e2e/compat/octopod.test.ts');
  await import('../e2e/compat/octoprint-web.test.ts');
  await import('../e2e/compat/octorest.test.ts');
  await import('../e2e/compat/slicers.test.ts');
}
