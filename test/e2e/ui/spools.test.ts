// The Spools page in headless Chromium against the stand-in Spoolman: loaded lazily, it shows Spoolman's link and lets
// a user choose and clear the spool of tool 0 from Spoolman's list (src/spools/, /api/plugin/spoolman).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer } from '../../helpers/connected-server.ts';
import { buildWeb } from '../../../web/build.ts';
import { launchBrowser, openTab, screenshot, stepper, watchErrors, logIn, scriptsFetched } from './browser.ts';
import { needs } from '../../helpers/tools.ts';
import { startSpoolmanStandin } from '../../helpers/spoolman-standin.ts';

test('Spools page: Spoolman connected, choose a spool for T0 from the list, its remaining shown, clear it', { skip: needs('chromium') }, async (t) => {
  const launching = launchBrowser(t);
  await buildWeb({ ifStale: true });
  const spoolman = await startSpoolmanStandin();
  t.after(() => spoolman.stop());
  spoolman.add(750);
  const chosen = spoolman.add(420);
  const server = await connectedServer(t);
  await server.access.users.addUser({ name: 'ada', password: 'pw-ada-12345', groups: ['admins', 'users'] });
  const browser = await launching;
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.setDefaultTimeout(30_000);
  const errors = watchErrors(page);
  const step = stepper(t, page, 'spools-');
  const scripts = scriptsFetched(page);

  await step('the page loads when opened; Spoolman set up from it connects', async () => {
    await logIn(page, server.url, 'ada', 'pw-ada-12345');
    await page.getByRole('tab', { name: 'Temperature', exact: true }).waitFor();
    assert.ok(!scripts.some((s) => s.includes('SpoolsTab')), 'not loaded before the page is opened');
    await openTab(page, 'Spools');
    await page.getByText('Spoolman is not set up').waitFor();
    const form = page.getByRole('form', { name: 'Spoolman' });
    await form.getByLabel('Spoolman URL').fill(spoolman.url);
    await form.getByLabel('Report use every (s)').fill('2');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText(`Spoolman at ${spoolman.url}: connected`).waitFor();
    assert.deepEqual(server.config.current.plugins.spoolman, { server: spoolman.url, syncInterval: 2, lowFilament: 'warn', timeout: 10 });
  });

  await step('choosing spool 2 for T0 makes it active, with what it has left', async () => {
    const select = page.getByRole('combobox', { name: 'Spool for tool 0' });
    await page.getByRole('option', { name: /#2 Polymaker PLA 2/ }).waitFor({ state: 'attached' });
    await select.selectOption(String(chosen.id));
    await page.getByRole('button', { name: 'Use the chosen spool for tool 0' }).click();
    await page.getByRole('cell', { name: '420 g', exact: false }).first().waitFor();
    const st = (await (await server.api('/api/plugin/spoolman')).json()) as { active: Record<string, number> };
    assert.deepEqual(st.active, { 0: chosen.id });
    await screenshot(page, 'spools-active');
  });

  await step('Clear leaves the tool without a spool', async () => {
    await page.getByRole('button', { name: 'Clear the spool of tool 0' }).click();
    await page.getByRole('cell', { name: 'none' }).waitFor();
    const st = (await (await server.api('/api/plugin/spoolman')).json()) as { active: Record<string, number> };
    assert.deepEqual(st.active, {});
  });
  assert.deepEqual(errors, []);
});
