// Password hashes state their own cost: imported ones beyond the bound (Argon2 memory/time/parallelism, PBKDF2 rounds,
// digest length, scrypt N) are flagged at import naming the user and never verified.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { hash as argon2Hash } from '@node-rs/argon2';
import { openSource } from '../../src/import/source.ts';
import { readAccess } from '../../src/import/access-import.ts';
import { ImportReport } from '../../src/import/report.ts';
import { verifyPassword } from '../../src/access/password.ts';
import { importedHashProblem } from '../../src/access/imported-hash.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const SALT = 'qdUaQ8g5pzTGeO89ByCEkA';
const TAG = 'OZVXTxdLMQk/guPGCzl4+Q';
const HOSTILE = {
  hugemem: `$argon2id$v=19$m=1048576,t=3,p=1$${SALT}$${TAG}`,
  longtime: `$argon2id$v=19$m=1024,t=1000,p=1$${SALT}$${TAG}`,
  manylanes: `$argon2id$v=19$m=102400,t=2,p=255$${SALT}$${TAG}`,
  rounds: `$pbkdf2-sha256$50000000$${'c2FsdHNhbHQ'}$${'A'.repeat(43)}`,
  longdigest: `$pbkdf2-sha256$1000$c2FsdHNhbHQ$${'A'.repeat(100_000)}`,
};

test('imported hashes beyond the cost bound are reported naming the user; OctoPrint\'s own defaults pass', async (t) => {
  const base = await tempDir(t, 'gantry-import-hashes-');
  await writeFile(join(base, 'config.yaml'), stringify({ server: {} }));
  const users: Record<string, unknown> = { _version: 2 };
  const rec = (password: string) => ({ password, active: true, groups: ['users'], permissions: [], apikey: null, settings: {} });
  for (const [name, hash] of Object.entries(HOSTILE)) users[name] = rec(hash);
  users.octoprint = rec(`$argon2id$v=19$m=102400,t=2,p=8$${SALT}$${TAG}`);
  users.passlib = rec(`$pbkdf2-sha256$29000$c2FsdHNhbHQ$${'A'.repeat(43)}`);
  await writeFile(join(base, 'users.yaml'), stringify(users));
  const report = new ImportReport();
  const src = await openSource(base, base);
  t.after(() => src.dispose());
  await readAccess(src, report);
  const notes = report.notes.join('\n');
  for (const name of Object.keys(HOSTILE)) assert.match(notes, new RegExp(`user ${name}: password hash refused \\(`), notes);
  assert.doesNotMatch(notes, /user (octoprint|passlib):/);
  assert.ok(notes.length < 5000, 'no note quotes a hash whole');
});

test('a hash beyond the bound is never verified: a failed login against m=1048576 is instant and allocates nothing', async () => {
  for (const hash of Object.values(HOSTILE)) assert.ok(importedHashProblem(hash), hash.slice(0, 60));
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  for (const hash of Object.values(HOSTILE)) assert.equal(await verifyPassword('guess', hash), false);
  assert.ok(performance.now() - started < 500, `${performance.now() - started} ms`);
  assert.ok(process.memoryUsage().rss - rssBefore < 100 * 1024 * 1024);
  // scrypt (Gantry's own form, which a crafted users.yaml may also carry) is bounded the same way.
  assert.equal(await verifyPassword('guess', `scrypt$${1 << 24}$8$1$${'A'.repeat(22)}==$${'B'.repeat(43)}=`), false);
  // Within the bound a real hash still verifies.
  const fine = await argon2Hash('right', { memoryCost: 1024, timeCost: 2, parallelism: 1, algorithm: 2 });
  assert.equal(importedHashProblem(fine), undefined);
  assert.equal(await verifyPassword('right', fine), true);
});
