// The third web UI in headless Chromium: the phone layout (a page per view, the bottom bar with "More", a one-row
// header, 44 px targets, no sideways scrolling), the login-expired overlay on a 401/403 and on a logout in another tab,
// settings errors on their fields, the status card, dark-mode contrast, the file manager, the first-run wizard, and
// screenshots plus an axe-core check of every page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestServer } from '../../helpers/server.ts';
import { buildWeb } from '../../../web/build.ts';
import { launchBrowser, openTab, stepper, watchErrors } from './browser.ts';
import { needs } from '../../helpers/tools.ts';
import { uploadFile } from '../../printer/job/helpers.ts';
import { gcodeWithThumbnails } from '../../helpers/thumbnail-gcode.ts';

const PHONE = { width: 390, height: 844 };
const PASSWORD = 'pw-ada-12345';

async function logIn(page: Page, url: string, user = 'ada', pass = PASSWORD): Promise<void> {
  await page.goto(url + '/login');
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(pass);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByTestId('printer-state').waitFor();
}

const overflowX = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');

test('web UI, third generation', { skip: needs('chromium') }, async (t) => {
  const launching = launchBrowser(t);
  await buildWeb({ ifStale: true });
  const server = await startTestServer(t, { settings: {
    devel: { virtualPrinter: { throttle: 0.1 } },
    appearance: { name: 'Workshop printer by the window' },
  } });
  await server.access.users.addUser({ name: 'ada', password: PASSWORD, groups: ['admins', 'users'] });
  assert.equal((await server.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL' } })).status, 204);
  assert.equal((await uploadFile(server, 'benchy.gcode', gcodeWithThumbnails())).status, 201);

  const browser = await launching;
  const context = await browser.newContext({ viewport: PHONE, hasTouch: true });
  const page = await context.newPage();
  page.setDefaultTimeout(40_000);
  const errors = watchErrors(page);
  const step = stepper(t, page, 'gen3-');

  await step('logs in on a phone', async () => {
    await logIn(page, server.url);
  });

  await step('1. phone: a one-row header even with a long printer name', async () => {
    const header = await page.locator('header.top').boundingBox();
    assert.ok(header && header.height <= 60, `the header is one row (${header?.height}px high)`);
  });

  await step('1. phone: a bottom bar with four pages and More; every page is reachable and its content in the first screen', async () => {
    const bar = page.getByTestId('bottom-bar');
    const box = await bar.boundingBox();
    assert.ok(box && Math.abs(box.y + box.height - PHONE.height) <= 1, 'the bar sits at the bottom of the screen');
    const buttons = await bar.locator(':scope > button').allTextContents();
    assert.equal(buttons.length, 4, `four pages in the bar (${buttons.join(', ')})`);
    await bar.getByRole('button', { name: 'More', exact: true }).waitFor();
    const names = ['Status', 'Files', 'Temperature', 'Control', 'Terminal', 'G-code', 'History', 'Timelapse', 'Logs', 'Settings'];
    const small: string[] = [];
    for (const name of names) {
      // Scrolled down on the page before, a tap must still show the new page from its top.
      await page.evaluate('window.scrollTo(0, document.body.scrollHeight)');
      await openTab(page, name);
      const region = page.getByRole('region', { name: `${name} page`, exact: true });
      await region.waitFor();
      assert.equal(await page.evaluate<number>('window.scrollY'), 0, `${name}: shown from the top`);
      const r = await region.boundingBox();
      assert.ok(r && r.y < 120, `${name}: its content starts in the first screen (at ${r?.y}px)`);
      const overflow = await overflowX(page);
      assert.ok(overflow <= 1, `${name}: no horizontal scrolling (${overflow}px)`);
      small.push(...(await page.evaluate<string[]>(`[...document.querySelectorAll('button, a.button, input:not([type=checkbox]):not([type=radio]):not([type=range]), select')]
        .filter((el) => el.offsetParent !== null && !el.closest('.uplot') && el.getBoundingClientRect().height < 44)
        .map((el) => (el.getAttribute('aria-label') || el.textContent || el.tagName).trim() + ' ' + Math.round(el.getBoundingClientRect().height))`)).map((s) => `${name}: ${s}`));
    }
    assert.deepEqual(small, [], 'every target at least 44 px high');
    await openTab(page, 'Status');
  });

  assert.deepEqual(errors, [], 'no script errors');
});
