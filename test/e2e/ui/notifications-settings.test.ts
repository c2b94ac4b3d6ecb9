// Settings → Notifications in headless Chromium: add a target, save it, send a test message that a local receiver
// gets, and see the delivery in the section's log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer } from '../../helpers/server.ts';
import { buildWeb } from '../../../web/build.ts';
import { launchBrowser, openTab, stepper, watchErrors } from './browser.ts';
import { needs } from '../../helpers/tools.ts';

test('Notifications settings: a target added, saved and tested from the UI', { skip: needs('chromium') }, async (t) => {
  const launching = launchBrowser(t);
  await buildWeb({ ifStale: true });
  const got: Record<string, unknown>[] = [];
  const hook = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => { body += d; }).on('end', () => { got.push(JSON.parse(body) as Record<string, unknown>); res.end('{}'); });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  t.after(() => hook.close());
  const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
  const server = await startTestServer(t);
  await server.access.users.addUser({ name: 'ada', password: 'pw-ada-12345', groups: ['admins', 'users'] });

  const browser = await launching;
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.setDefaultTimeout(40_000);
  const errors = watchErrors(page);
  const step = stepper(t, page, 'notifications-');
  const section = page.getByRole('form', { name: 'Notifications' });

  await step('adds a webhook target and saves it', async () => {
    await page.goto(server.url + '/login');
    await page.getByLabel('User name').fill('ada');
    await page.getByLabel('Password').fill('pw-ada-12345');
    await page.getByRole('button', { name: 'Log in' }).click();
    await openTab(page, 'Settings');
    await page.getByRole('button', { name: 'Notifications', exact: true }).click();
    await section.getByRole('button', { name: 'Add target' }).click();
    await section.getByLabel('Name').fill('phone');
    await section.getByLabel('URL').fill(url);
    await section.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Settings saved').waitFor();
    const stored = await (await server.api('/api/settings')).json() as { plugins: { notifications: { targets: { name: string; url: string; events: string[] }[] } } };
    assert.equal(stored.plugins.notifications.targets[0].url, url);
    assert.equal(stored.plugins.notifications.targets[0].name, 'phone');
    assert.ok(stored.plugins.notifications.targets[0].events.includes('PrintDone'));
  });

  await step('Send test reaches the receiver and shows in the log', async () => {
    await section.getByRole('button', { name: 'Send test' }).click();
    await page.getByText('Test notification sent').waitFor();
    assert.equal(got[0]?.event, 'Test');
    await page.getByRole('table', { name: 'Recent notifications' }).getByRole('row').filter({ hasText: 'phone' }).filter({ hasText: 'sent' }).waitFor();
  });
  assert.deepEqual(errors, []);
});
