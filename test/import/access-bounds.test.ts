// Groups taken over from OctoPrint are held to the bounds of a group made through the API; what is left is reported.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { openSource } from '../../src/import/source.ts';
import { readAccess } from '../../src/import/access-import.ts';
import { ImportReport } from '../../src/import/report.ts';
import { tempDir } from '../helpers/temp-dir.ts';

test('an imported group with an overlong key, name or description, or a control character, is left out and reported', async (t) => {
  const base = await tempDir(t, 'gantry-import-bounds-');
  const longKey = 'k'.repeat(100_000);
  await writeFile(join(base, 'config.yaml'), stringify({ server: {} }));
  await writeFile(join(base, 'groups.yaml'), stringify({ _version: 2, groups: {
    operators: { name: 'Operators', description: 'fine', permissions: ['STATUS'], subgroups: [], default: false },
    [longKey]: { name: 'Long key', permissions: [], subgroups: [] },
    longname: { name: 'n'.repeat(129), permissions: [], subgroups: [] },
    longtext: { name: 'Text', description: 'd'.repeat(2049), permissions: [], subgroups: [] },
    bell: { name: 'Ring\u0007', permissions: [], subgroups: [] },
  } }));
  await writeFile(join(base, 'users.yaml'), stringify({ _version: 2, alice: {
    password: 'a'.repeat(128), active: true, groups: ['users', 'operators', longKey], permissions: [], apikey: null, settings: {},
  } }));
  const report = new ImportReport();
  const src = await openSource(base, base);
  t.after(() => src.dispose());
  const plan = await readAccess(src, report);
  assert.deepEqual(plan.groups.map((g) => g.key), ['operators']);
  assert.deepEqual(plan.users.find((u) => u.name === 'alice')?.groups, ['users', 'operators']);
  const said = report.skipped.map((s) => `${s.what}: ${s.why}`);
  assert.ok(said.includes(`group "${'k'.repeat(78)}…: Group key too long (at most 64 characters)`), said.join('\n'));
  assert.ok(said.includes('group "longname": Group name too long (at most 128 characters)'));
  assert.ok(said.includes('group "longtext": Group description too long (at most 2048 characters)'));
  assert.ok(said.includes('group "bell": Group name must not contain control characters'));
  assert.ok(said.includes(`user alice: group "${'k'.repeat(78)}…: no such group`), 'the member of a group left out is told, briefly');
  assert.ok(said.every((line) => line.length < 300), 'no line of the report quotes a value whole');
});
