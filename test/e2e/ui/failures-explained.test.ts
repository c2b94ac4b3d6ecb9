// Failures explained (#59 points 2 and 8) in headless Chromium: a logout in another tab or a 401/403 from the API shows
// the "login expired" overlay with a re-login in place and stops the push channel meanwhile; the login page tells a
// first visitor which account to use and where its password is, and counts a lockout down to the second.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page, WebSocket as PwSocket } from 'playwright-core';
import { startTestServer } from '../../helpers/server.ts';
import { buildWeb } from '../../../web/build.ts';
import { launchBrowser, openTab, stepper, until, watchErrors } from './browser.ts';
import { needs } from '../../helpers/tools.ts';

const PASSWORD = 'pw-ada-12345';

async function logIn(page: Page, url: string, pass = PASSWORD): Promise<void> {
  await page.goto(url + '/login');
  await page.getByLabel('User name').fill('ada');
  await page.getByLabel('Password').fill(pass);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByTestId('printer-state').waitFor();
}

test('failures explained: login expired, first-run help, lockout countdown', { skip: needs('chromium') }, async (t) => {
  const launching = launchBrowser(t);
  await buildWeb({ ifStale: true });
  const server = await startTestServer(t, { settings: { devel: { virtualPrinter: { throttle: 0.1 } } } });
  await server.access.users.addUser({ name: 'ada', password: PASSWORD, groups: ['admins', 'users'] });
  assert.equal((await server.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL' } })).status, 204);

  const browser = await launching;
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(40_000);
  const errors = watchErrors(page);
  const step = stepper(t, page, 'failures-');

  await step('8. a first visit says the account is admin and where its password was printed', async () => {
    await page.goto(server.url + '/login');
    const help = page.getByTestId('first-run-help');
    await help.waitFor();
    const text = await help.textContent() ?? '';
    assert.match(text, /admin/);
    assert.match(text, /console/);
  });

  // Sockets the page opens, with the frames each received, to see that streaming stops while the login is gone.
  const sockets: { ws: PwSocket; frames: number; closed: boolean }[] = [];
  page.on('websocket', (ws) => {
    const s = { ws, frames: 0, closed: false };
    sockets.push(s);
    ws.on('framereceived', () => { s.frames++; });
    ws.on('close', () => { s.closed = true; });
  });

  await step('2. a logout in another tab shows the overlay and stops streaming', async () => {
    await logIn(page, server.url);
    const other = await context.newPage();
    await other.goto(server.url + '/');
    await other.getByTestId('printer-state').waitFor();
    await other.evaluate(`fetch('/api/logout', { method: 'POST', credentials: 'same-origin', headers: { 'X-CSRF-Token': (document.cookie.match(/csrf_token_P\\d+=([^;]+)/) || [])[1] || '' } })`);
    await other.close();
    await page.getByRole('dialog', { name: 'Login expired' }).waitFor();
    await until('the push socket closed', async () => sockets.every((s) => s.closed));
    const frames = sockets.map((s) => s.frames);
    await page.waitForTimeout(1500);
    assert.deepEqual(sockets.map((s) => s.frames), frames, 'no frames arrive while the login is gone');
  });

  await step('2. re-login in place brings the page back live', async () => {
    const dialog = page.getByRole('dialog', { name: 'Login expired' });
    await dialog.getByLabel('Password').fill(PASSWORD);
    await dialog.getByRole('button', { name: /log in/i }).click();
    await dialog.waitFor({ state: 'detached' });
    await until('a new socket is open', async () => sockets.some((s) => !s.closed));
  });

  await step('2. a 403 from an API call (session ended on the server, no push) shows the overlay too', async () => {
    // The browser loses its session cookie (the push socket stays logged in): the next API call is refused.
    await context.clearCookies();
    // A background call may be refused first (then the page is inert already); otherwise opening Logs asks the API.
    page.setDefaultTimeout(3000);
    await openTab(page, 'Logs').catch(() => undefined);
    page.setDefaultTimeout(40_000);
    await page.getByRole('dialog', { name: 'Login expired' }).waitFor();
  });

  await step('9. a user\'s Password and Delete buttons stand apart', async () => {
    await server.access.users.addUser({ name: 'bob', password: 'pw-bob-12345', groups: ['users'] });
    // All cookies were cleared above, the CSRF cookie too: a fresh page load issues a new one.
    await logIn(page, server.url);
    await openTab(page, 'Settings');
    await page.getByRole('button', { name: 'Access control', exact: true }).click();
    const row = page.getByRole('row').filter({ hasText: 'bob' });
    const pw = await row.getByRole('button', { name: 'Password', exact: true }).boundingBox();
    const del = await row.getByRole('button', { name: 'Delete', exact: true }).boundingBox();
    assert.ok(pw && del, 'both buttons shown');
    const gap = del.x - (pw.x + pw.width);
    assert.ok(gap >= 8, `at least 8 px between them (${gap.toFixed(1)})`);
  });

  await step('8. a lockout counts down to the second', async () => {
    const fresh = await browser.newContext();
    const p = await fresh.newPage();
    await p.goto(server.url + '/login');
    for (let i = 0; i < 4; i++) {
      await p.getByLabel('User name').fill('ada');
      await p.getByLabel('Password').fill('wrong-' + i);
      await p.getByRole('button', { name: 'Log in' }).click();
      await p.getByRole('alert').waitFor();
      if (await p.getByTestId('lockout').count()) break;
    }
    const seconds = p.getByTestId('lockout-seconds');
    await seconds.waitFor();
    const first = Number((await seconds.textContent())?.replace(/\D/g, ''));
    assert.ok(first > 0 && first <= 60, `seconds left shown (${first})`);
    assert.equal(await p.getByRole('button', { name: 'Log in' }).isDisabled(), true, 'the button waits');
    await until('the countdown ticks', async () => Number((await seconds.textContent())?.replace(/\D/g, '')) < first, 5000);
    await fresh.close();
  });

  await step('5. dark mode: primary and danger buttons at 4.5:1 or more, the preview bed dark', async () => {
    const dark = await browser.newContext({ colorScheme: 'dark' });
    const p = await dark.newPage();
    await p.goto(server.url + '/login');
    await p.getByRole('button', { name: 'Log in' }).waitFor();
    const ratios = await p.evaluate<Record<string, number>>(`(() => {
      const rgb = (c) => c.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number);
      const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
        .reduce((a, v, i) => a + v * [0.2126, 0.7152, 0.0722][i], 0);
      const ratio = (a, b) => { const [x, y] = [lum(rgb(a)), lum(rgb(b))].sort((m, n) => n - m); return (x + 0.05) / (y + 0.05); };
      const out = {};
      for (const cls of ['primary', 'danger solid']) {
        const b = document.createElement('button');
        b.className = cls;
        b.textContent = 'x';
        document.body.append(b);
        const cs = getComputedStyle(b);
        out[cls] = ratio(cs.color, cs.backgroundColor);
        b.remove();
      }
      const bed = getComputedStyle(document.documentElement).getPropertyValue('--bed').trim();
      const probe = document.createElement('div');
      probe.style.color = bed;
      document.body.append(probe);
      out.bedLuminance = lum(rgb(getComputedStyle(probe).color));
      probe.remove();
      return out;
    })()`);
    assert.ok(ratios.primary >= 4.5, `primary button ${ratios.primary.toFixed(2)}:1`);
    assert.ok(ratios['danger solid'] >= 4.5, `danger button ${ratios['danger solid'].toFixed(2)}:1`);
    assert.ok(ratios.bedLuminance < 0.1, `the preview bed is dark (${ratios.bedLuminance.toFixed(2)})`);
    await dark.close();
  });

  assert.deepEqual(errors.filter((e) => !/40[13]|Failed to load resource/.test(e)), []);
});
