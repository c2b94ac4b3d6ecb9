// Issue 15 item 6: concurrent saves lose nothing — every acknowledged settings change is in config.yaml and in memory,
// identically; of parallel creations of one user name exactly one wins and the others are 409.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startTestServer } from '../../helpers/server.ts';
import { ConfigStore } from '../../../src/config/config-store.ts';

test('four concurrent settings saves to different sections all persist, 20 trials', async (t) => {
  const s = await startTestServer(t);
  for (let i = 0; i < 20; i++) {
    const saves = [
      { appearance: { name: `printer ${i}` } },
      { temperature: { cutoff: 40 + i } },
      { serial: { timeoutConnection: 11 + i } },
      { feature: { sizeThreshold: 1000 + i } },
    ];
    const answers = await Promise.all(saves.map((json) => s.api('/api/settings', { method: 'POST', json })));
    for (const a of answers) assert.equal(a.status, 200, await a.text());
    const shown = await (await s.api('/api/settings')).json() as {
      appearance: { name: string }; temperature: { cutoff: number }; serial: { timeoutConnection: number }; feature: { sizeThreshold: number };
    };
    assert.deepEqual([shown.appearance.name, shown.temperature.cutoff, shown.serial.timeoutConnection, shown.feature.sizeThreshold],
      [`printer ${i}`, 40 + i, 11 + i, 1000 + i], `trial ${i}: GET /api/settings`);
    // What config.yaml holds is exactly what the server serves from memory.
    const disk = await ConfigStore.load(s.paths.config);
    assert.deepEqual(disk.overrides, s.config.overrides, `trial ${i}: config.yaml and memory differ`);
  }
});

test('ConfigStore: parallel patches each land, and memory changes only after the file holds the value', async (t) => {
  const s = await startTestServer(t);
  const checks: Array<Promise<string>> = [];
  const off = s.config.onChange((next) => {
    // Whenever memory changes, the file already holds it (read at once, before any later save can land).
    const text = readFileSync(s.paths.config, 'utf8');
    checks.push(Promise.resolve(text.includes(`name: ${next.appearance.name}`) ? 'same' : `file lacks ${next.appearance.name}`));
  });
  t.after(off);
  await Promise.all(Array.from({ length: 10 }, (_, i) => s.config.patch({ appearance: { name: `n${i}` }, temperature: { cutoff: i } })
    .then(() => s.config.patch({ plugins: { [`p${i}`]: { v: i } } }))));
  const plugins = s.config.overrides.plugins as Record<string, { v: number }>;
  for (let i = 0; i < 10; i++) assert.equal(plugins[`p${i}`]?.v, i, `plugin p${i} lost`);
  assert.deepEqual((await ConfigStore.load(s.paths.config)).overrides, s.config.overrides);
  const seen = await Promise.all(checks);
  assert.ok(seen.length >= 20 && seen.every((x) => x === 'same'), seen.join(', '));
});

test('five parallel creations of one user name: one succeeds, four are 409, and the winner\'s password works', async (t) => {
  const s = await startTestServer(t);
  const answers = await Promise.all([0, 1, 2, 3, 4].map((i) => s.api('/api/access/users', { method: 'POST',
    json: { name: 'twin', password: `pw-twin-${i}`, active: true } })));
  const statuses = answers.map((a) => a.status).sort();
  assert.deepEqual(statuses, [200, 409, 409, 409, 409]);
  const winner = answers.findIndex((a) => a.status === 200);
  const works = await Promise.all([0, 1, 2, 3, 4].map((i) => s.access.users.checkPassword('twin', `pw-twin-${i}`)));
  assert.deepEqual(works.map((u) => u !== undefined), [0, 1, 2, 3, 4].map((i) => i === winner));
});
