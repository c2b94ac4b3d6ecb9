// System commands API with real shell commands: listing, success, failures, ignore, async, dividers, unknown, legacy wrapper.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { waitForFile } from '../helpers/wait.ts';

function setup(baseDir: string) {
  const marker = (n: string) => join(baseDir, n);
  return {
    system: {
      actions: [
        { action: 'touch', name: 'Touch it', command: `echo ran > "${marker('touched')}"`, confirm: 'Really touch?' },
        { action: 'divider' },
        { action: 'fail', name: 'Fail', command: 'echo broken >&2; exit 3' },
        { action: 'failok', name: 'Fail quietly', command: 'exit 4', ignore: true },
        { action: 'later', name: 'Async', command: `sleep 0.3; echo late > "${marker('late')}"`, async: true },
        { action: 'nothing', name: 'No command' },
      ],
    },
  };
}

test('lists core (only configured) and custom commands with absolute resources', async (t) => {
  const s = await startTestServer(t, { settings: { server: { commands: { serverRestartCommand: 'true' } } } });
  await s.config.patch(setup(s.baseDir));
  const res = await s.api('/api/system/commands');
  assert.equal(res.status, 200);
  const all = await res.json() as { core: Array<Record<string, unknown>>; custom: Array<Record<string, unknown>> };
  assert.deepEqual(all.core.map((c) => c.action), ['restart']);
  assert.equal(all.core[0].source, 'core');
  assert.equal(all.core[0].resource, `${s.url}/api/system/commands/core/restart`);
  assert.equal(typeof all.core[0].confirm, 'string');
  assert.deepEqual(all.custom.map((c) => c.action), ['touch', 'divider', 'fail', 'failok', 'later', 'nothing']);
  assert.deepEqual(all.custom[0], { action: 'touch', name: 'Touch it', confirm: 'Really touch?', source: 'custom',
    resource: `${s.url}/api/system/commands/custom/touch` });
  assert.equal('command' in all.custom[0], false, 'the command line is not exposed');

  const custom = await s.api('/api/system/commands/custom');
  assert.deepEqual(await custom.json(), all.custom);
  assert.equal((await s.api('/api/system/commands/plugin')).status, 404);
  assert.equal((await s.api('/api/system/commands', { key: null })).status, 403);
});

test('no configured core commands means an empty core list', async (t) => {
  const s = await startTestServer(t);
  assert.deepEqual(await (await s.api('/api/system/commands/core')).json(), []);
});

test('execution follows the status table', async (t) => {
  const s = await startTestServer(t);
  await s.config.patch(setup(s.baseDir));
  const run = (source: string, action: string) => s.api(`/api/system/commands/${source}/${action}`, { method: 'POST' });

  const ok = await run('custom', 'touch');
  assert.equal(ok.status, 204);
  assert.equal(await ok.text(), '');
  assert.equal(await readFile(join(s.baseDir, 'touched'), 'utf8'), 'ran\n');

  const fail = await run('custom', 'fail');
  assert.equal(fail.status, 500);
  assert.match((await fail.json() as { error: string }).error, /return code 3.*broken/s);

  assert.equal((await run('custom', 'failok')).status, 204);
  const emptyJson = await s.api('/api/system/commands/custom/failok', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '' });
  assert.equal(emptyJson.status, 204);
  assert.equal((await run('custom', 'divider')).status, 400);
  assert.equal((await run('custom', 'nothing')).status, 500);
  assert.equal((await run('custom', 'nope')).status, 404);
  assert.equal((await run('core', 'shutdown')).status, 404);
  assert.equal((await run('elsewhere', 'touch')).status, 404);

  // Async: answered before the command finished; its effect shows up afterwards.
  const later = await run('custom', 'later');
  assert.equal(later.status, 204);
  assert.equal(await stat(join(s.baseDir, 'late')).catch(() => undefined), undefined);
  assert.equal(await waitForFile(join(s.baseDir, 'late')), 'late\n');
});

test('a command running past the time limit is killed and reported as 500', async (t) => {
  const { SystemCommands } = await import('../../src/system/system-commands.ts');
  const { ConfigStore } = await import('../../src/config/config-store.ts');
  const { silentLogger } = await import('../../src/core/logger.ts');
  const s = await startTestServer(t);
  const config = ConfigStore.fromObject(join(s.baseDir, 'other.yaml'), { system: { actions: [{ action: 'slow', command: 'sleep 30' }] } });
  const commands = new SystemCommands(config.slice('server', 'system'), silentLogger, { timeoutMs: 200 });
  await assert.rejects(commands.execute('custom', 'slow'), /did not finish/);
  await commands.stop();
});

test('the legacy POST /api/system runs a custom action', async (t) => {
  const s = await startTestServer(t);
  await s.config.patch(setup(s.baseDir));
  const res = await s.api('/api/system', { method: 'POST', json: { action: 'touch' } });
  assert.equal(res.status, 204);
  assert.equal(await readFile(join(s.baseDir, 'touched'), 'utf8'), 'ran\n');
  assert.equal((await s.api('/api/system', { method: 'POST', json: {} })).status, 400);
  await rm(join(s.baseDir, 'touched'));
  const form = await s.api('/api/system', { method: 'POST', body: new URLSearchParams({ action: 'touch' }) });
  assert.equal(form.status, 204);
  assert.equal(await readFile(join(s.baseDir, 'touched'), 'utf8'), 'ran\n');
  assert.equal((await s.api('/api/system?action=failok', { method: 'POST' })).status, 204);
  assert.equal((await s.api('/api/system', { method: 'POST', key: null, json: { action: 'touch' } })).status, 403);
  assert.equal((await s.api('/api/system', { method: 'POST', json: { action: 'fail' } })).status, 500);
  // The file stream writes asynchronously; give it a moment to get the deprecation warning to disk.
  let log = '';
  for (let i = 0; i < 200 && !/api\/system is deprecated/.test(log); i++) {
    await new Promise((r) => setTimeout(r, 25));
    log = await readFile(join(s.paths.logs, 'gantry.log'), 'utf8').catch(() => '');
  }
  assert.match(log, /POST \/api\/system is deprecated/);
});
