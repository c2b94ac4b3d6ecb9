// The control panel is honest about its link to the server: a stopped server gives an overlay and inert controls; after
// a restart the stale temperatures are gone, a lost login is asked for in place (without leaving the page), and with
// remember-me the page logs itself in again and resumes live updates without a reload.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../../helpers/server.ts';
import { buildWeb } from '../../../web/build.ts';
import { launchBrowser, screenshot, watchErrors } from './browser.ts';
import { needs } from '../../helpers/tools.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

test('server stopped → overlay and inert page; restarted → stale data cleared, login asked in place, then silent re-auth', { skip: needs('chromium') }, async (t) => {
  // Chromium starts while the server is set up.
  const launching = launchBrowser(t);
  await buildWeb({ ifStale: true });
  const baseDir = await tempDir(t, 'gantry-ui-restart-');
  const settings = { devel: { virtualPrinter: { throttle: 0.25 } } };
  const first = await startTestServer(t, { baseDir, settings });
  await first.access.users.addUser({ name: 'carol', password: 'pw-carol-123', groups: ['users'] });
  assert.equal((await first.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL' } })).status, 204);

  const browser = await launching;
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.setDefaultTimeout(40_000);
  const errors = watchErrors(page);
  await page.goto(first.url + '/login');
  await page.getByLabel('User name').fill('carol');
  await page.getByLabel('Password').fill('pw-carol-123');
  // No remember-me: after a restart the session is gone and only the user can log in again.
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByTestId('user-name').filter({ hasText: 'carol' }).waitFor();
  await page.getByTestId('printer-state').filter({ hasText: /^Operational$/ }).waitFor();
  const graph = page.getByTestId('temp-graph');
  await graph.locator('canvas').first().waitFor();
  const port = first.port;

  await first.stop();
  const overlay = page.getByRole('alertdialog', { name: 'Server offline' });
  await overlay.waitFor();
  await page.getByTestId('printer-state').filter({ hasText: 'Server offline' }).waitFor();
  assert.equal(await page.locator('.layout').getAttribute('inert'), '', 'the controls under the overlay are inert');
  await screenshot(page, 'link-offline');

  // Same data and port, but every in-memory login session is gone.
  const second = await startTestServer(t, { baseDir, port, settings });
  const relogin = page.getByRole('dialog', { name: 'Login expired' });
  await relogin.waitFor({ timeout: 30_000 });
  await overlay.waitFor({ state: 'detached' });
  assert.equal(new URL(page.url()).pathname, '/', 'the page stays where it was');
  await screenshot(page, 'link-login-expired');
  await relogin.getByLabel('Password').fill('pw-carol-123');
  await relogin.getByLabel('Remember me').check();
  await relogin.getByRole('button', { name: 'Log in' }).click();
  await relogin.waitFor({ state: 'detached' });
  assert.equal(await page.locator('.layout').getAttribute('inert'), null);
  // The new server has not connected the printer: the old curves and readings must be gone, not shown as current.
  await page.getByTestId('printer-state').filter({ hasText: /^Offline$/ }).waitFor();
  await graph.getByText('No temperature data yet').waitFor();
  assert.equal(await graph.locator('canvas').count(), 0, 'no stale curves next to "no data"');
  assert.equal(await graph.getAttribute('data-points'), '0');

  // With the remember-me cookie the next restart needs nobody.
  await second.stop();
  await overlay.waitFor();
  const third = await startTestServer(t, { baseDir, port, settings });
  await overlay.waitFor({ state: 'detached', timeout: 30_000 });
  assert.equal(await relogin.count(), 0);
  assert.equal((await third.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL' } })).status, 204);
  await page.getByTestId('printer-state').filter({ hasText: /^Operational$/ }).waitFor({ timeout: 30_000 });
  await page.getByTestId('user-name').filter({ hasText: 'carol' }).waitFor();
  await screenshot(page, 'link-reconnected');
  // Failed requests while the server was down are expected; script errors are not.
  assert.deepEqual(errors.filter((e) => !/WebSocket|ERR_CONNECTION_REFUSED|403|FORBIDDEN/i.test(e)), []);
});
