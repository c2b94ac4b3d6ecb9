// The control panel survives a server restart: the push channel reconnects, logs in again with the remember-me
// cookie, and live updates resume without reloading the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { buildWeb } from '../../web/build.ts';
import { chromiumAvailable, launchBrowser, screenshot, watchErrors } from './browser.ts';

test('after a server restart the page reconnects, re-authenticates and shows live state again', { skip: !chromiumAvailable() && 'no /usr/bin/chromium' }, async (t) => {
  await buildWeb({ ifStale: true });
  const baseDir = await mkdtemp(join(tmpdir(), 'gantry-ui-restart-'));
  t.after(() => rm(baseDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { baseDir });
  await first.access.users.addUser({ name: 'carol', password: 'pw-carol-123', groups: ['users'] });

  const browser = await launchBrowser(t);
  const page = await (await browser.newContext()).newPage();
  page.setDefaultTimeout(20_000);
  const errors = watchErrors(page);
  await page.goto(first.url + '/login');
  await page.getByLabel('User name').fill('carol');
  await page.getByLabel('Password').fill('pw-carol-123');
  await page.getByLabel('Remember me').check();
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByTestId('user-name').filter({ hasText: 'carol' }).waitFor();
  await page.getByTestId('printer-state').filter({ hasText: /^Offline$/ }).waitFor();

  const port = first.port;
  await first.stop();
  await page.getByText('reconnecting…').waitFor();

  // Same data and port, but every in-memory login session is gone: only the remember-me cookie can log the page in.
  const second = await startTestServer(t, { baseDir, port });
  await page.getByText('reconnecting…').waitFor({ state: 'detached', timeout: 30_000 });
  const res = await second.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL' } });
  assert.equal(res.status, 204);
  await page.getByTestId('printer-state').filter({ hasText: /^Operational$/ }).waitFor({ timeout: 30_000 });
  await page.getByTestId('user-name').filter({ hasText: 'carol' }).waitFor();
  await screenshot(page, 'restart-reconnected');
  // Failed requests while the server was down are expected; script errors are not.
  assert.deepEqual(errors.filter((e) => !/WebSocket|ERR_CONNECTION_REFUSED/.test(e)), []);
});
