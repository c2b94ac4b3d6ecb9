// Settings errors on the field itself (#59 point 3) and the rest of point 9 in headless Chromium, one server and one
// browser for the file: a value outside the settings table's bounds is refused before sending, with the field's label
// and the reason under it; what the server refuses lands on the field its message names; the printer profile marks its
// own bad field; nothing piles up as toasts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestServer } from '../../helpers/server.ts';
import { buildWeb } from '../../../web/build.ts';
import { launchBrowser, logIn, openTab, stepper, watchErrors } from './browser.ts';
import { needs } from '../../helpers/tools.ts';

const PASSWORD = 'pw-ada-12345';

async function openSection(page: Page, name: string) {
  await openTab(page, 'Settings');
  await page.locator('.settings-nav').getByRole('button', { name, exact: true }).click();
  return page.getByRole('form', { name });
}

test('settings errors sit on their fields', { skip: needs('chromium') }, async (t) => {
  const launching = launchBrowser(t);
  await buildWeb({ ifStale: true });
  const server = await startTestServer(t);
  await server.access.users.addUser({ name: 'ada', password: PASSWORD, groups: ['admins', 'users'] });

  const browser = await launching;
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  const errors = watchErrors(page);
  const posts: string[] = [];
  page.on('request', (r) => { if (r.method() === 'POST' && r.url().endsWith('/api/settings')) posts.push(r.postData() ?? ''); });
  const step = stepper(t, page, 'field-errors-');

  await step('log in', async () => {
    await logIn(page, server.url, 'ada', PASSWORD);
    await page.getByTestId('printer-state').waitFor();
  });

  await step('a bound from the settings table is checked before sending, on the field with its label', async () => {
    const form = await openSection(page, 'Serial connection');
    const timeout = form.getByLabel('Connection timeout (s)');
    // The bounds arrive from the server's table (serial timeouts: 0 to 3600 s).
    await page.waitForFunction(() => (globalThis as unknown as { document: { querySelector(s: string): { getAttribute(n: string): string | null } | null } })
      .document.querySelector('input[name="serial.timeoutConnection"]')?.getAttribute('max') === '3600');
    await timeout.fill('5000');
    await form.getByRole('button', { name: 'Save' }).click();
    const error = form.locator('.field-error');
    await error.waitFor();
    assert.equal(await error.textContent(), 'Connection timeout (s): must be at most 3600');
    assert.equal(await timeout.getAttribute('aria-invalid'), 'true');
    assert.equal(await timeout.getAttribute('aria-describedby'), await error.getAttribute('id'));
    assert.deepEqual(posts, [], 'nothing was sent');
    await timeout.fill('');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.locator('.field-error', { hasText: 'Connection timeout (s): enter a value' }).waitFor();
    assert.equal(await form.locator('.field-error').count(), 1, 'the earlier error was replaced, not added to');
    assert.deepEqual(posts, []);
    await timeout.fill('20');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Settings saved').first().waitFor();
    assert.equal(await form.locator('.field-error').count(), 0);
    assert.equal(await timeout.getAttribute('aria-invalid'), null);
    const saved = await (await server.api('/api/settings')).json() as { serial: { timeoutConnection: number } };
    assert.equal(saved.serial.timeoutConnection, 20);
  });

  await step('the graph history refuses 0 on the field (the server says temperature.cutoff must be >= 1)', async () => {
    const form = await openSection(page, 'Temperatures');
    const cutoff = form.getByLabel('Graph history (minutes)');
    await cutoff.fill('0');
    const before = posts.length;
    await form.getByRole('button', { name: 'Save' }).click();
    await form.locator('.field-error', { hasText: 'Graph history (minutes): must be at least 1' }).waitFor();
    assert.equal(posts.length, before);
  });

  await step('what only the server refuses lands on the field its message names, not in a toast', async () => {
    // The browser's check is bypassed (the field's bounds removed) to see the server's own answer placed.
    const form = await openSection(page, 'Temperatures');
    const cutoff = form.getByLabel('Graph history (minutes)');
    await cutoff.evaluate((el) => { (el as unknown as { removeAttribute(n: string): void }).removeAttribute('min'); });
    await cutoff.fill('0');
    const before = posts.length;
    for (let i = 0; i < 3; i++) {
      const answered = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/api/settings'));
      await form.getByRole('button', { name: 'Save' }).click();
      assert.equal((await answered).status(), 400);
      await form.locator('.field-error', { hasText: 'Graph history (minutes): must be at least 1' }).waitFor();
      // The form takes the answer after it arrives: Save is enabled again once the error is placed.
      await form.getByRole('button', { name: 'Save' }).and(page.locator(':enabled')).waitFor();
    }
    assert.equal(posts.length, before + 3, 'the server was asked');
    assert.equal(await form.locator('.field-error').count(), 1);
    assert.equal(await cutoff.getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('.notices .notice.error').count(), 0, 'no error toasts');
    assert.doesNotMatch(await form.textContent() ?? '', /temperature\.cutoff/, 'the config key is not shown');
  });

  await step('the printer profile marks its own bad field', async () => {
    const form = await openSection(page, 'Printer profile');
    const width = form.getByLabel('Width');
    await width.fill('0');
    await form.getByLabel('Nozzle diameter').fill('');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.locator('.field-error', { hasText: 'Width: must be at least 0.1' }).waitFor();
    await form.locator('.field-error', { hasText: 'Nozzle diameter: enter a value' }).waitFor();
    assert.equal(await width.getAttribute('aria-invalid'), 'true');
    assert.match(await form.getByTestId('form-error').textContent() ?? '', /2 fields need a fix/);
    const profile = await (await server.api('/api/printerprofiles/_default')).json() as { volume: { width: number } };
    assert.ok(profile.volume.width > 0, 'nothing was saved');
  });

  await step('9. a new user\'s password needs 8 characters, in the form and in the change dialog', async () => {
    const users: string[] = [];
    page.on('request', (r) => { if (r.method() !== 'GET' && r.url().includes('/api/access/users')) users.push(r.url()); });
    await openSection(page, 'Access control');
    const form = page.getByRole('form', { name: 'Add user' });
    await form.getByLabel('User name').fill('bea');
    const password = form.getByLabel('Password');
    await password.fill('short');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.locator('.field-error', { hasText: 'Password: must have at least 8 characters' }).waitFor();
    assert.equal(await password.getAttribute('aria-invalid'), 'true');
    assert.equal(users.length, 0, 'nothing was sent');
    await password.fill('long-enough-1');
    await form.getByRole('button', { name: 'Save' }).click();
    const row = page.getByRole('form', { name: 'Users' }).locator('tr', { hasText: 'bea' });
    await row.waitFor();
    await row.getByRole('button', { name: 'Password', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Change password' });
    const input = dialog.locator('input');
    assert.equal(await input.getAttribute('type'), 'password');
    await input.fill('1234567');
    await dialog.getByRole('button', { name: 'Change' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'at least 8 characters' }).waitFor();
    assert.equal(users.filter((u) => u.endsWith('/password')).length, 0, 'the short one was not sent');
    await input.fill('12345678');
    await dialog.getByRole('button', { name: 'Change' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByText('Password changed').first().waitFor();
    assert.ok(await server.access.checkCredentials('bea', '12345678'));
  });

  t.after(() => assert.deepEqual(errors, []));
});
