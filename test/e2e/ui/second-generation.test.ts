// The second web UI in headless Chromium: thumbnails, the Slice dialog, search and sort, safe dialogs, print-end
// notices (in the page and the browser's Notification API), the stale job panel, history numbers after two prints,
// preset validation, keyboard tabs and upload, the dead webcam, dark mode, the phone layout and screenshots of every page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestServer } from '../../helpers/server.ts';
import { buildWeb } from '../../../web/build.ts';
import { launchBrowser, openTab, screenshot, stepper, until, waitForFocus, waitForNumber, watchErrors, resizeTo } from './browser.ts';
import { needs } from '../../helpers/tools.ts';
import { uploadFile } from '../../printer/job/helpers.ts';
import { cubeStl } from '../../helpers/stl.ts';
import { gcodeWithThumbnails } from '../../helpers/thumbnail-gcode.ts';
import { SMALL_GCODE } from '../../helpers/shared-data.ts';
import { readFile } from 'node:fs/promises';

const PAGES = ['Temperature', 'Control', 'Terminal', 'G-code', 'History', 'Timelapse', 'Logs', 'Settings'];

const focusedText = (page: Page) => page.evaluate<string>('document.activeElement?.textContent ?? ""');

test('web UI, second generation', { skip: needs('chromium', 'shared-data') }, async (t) => {
  // Chromium starts while the server is set up.
  const launching = launchBrowser(t);
  await buildWeb({ ifStale: true });
  // At 0.1 the short print ends within a second, and the long one (cold bed: M190 first) runs over 10 s, long enough
  // to be stopped.
  const server = await startTestServer(t, { settings: {
    devel: { virtualPrinter: { throttle: 0.1 } },
    webcam: { stream: 'http://127.0.0.1:9/dead.mjpg' },
  } });
  await server.access.users.addUser({ name: 'ada', password: 'pw-ada-12345', groups: ['admins', 'users'] });
  assert.equal((await server.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL' } })).status, 204);
  assert.equal((await uploadFile(server, 'benchy.gcode', gcodeWithThumbnails())).status, 201);
  assert.equal((await uploadFile(server, 'cube.stl', cubeStl(8))).status, 201);
  assert.equal((await uploadFile(server, 'long.gcode', await readFile(SMALL_GCODE))).status, 201);

  const browser = await launching;
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  // The page's notifications are recorded instead of shown; permission is granted as a user's click would.
  await context.grantPermissions(['notifications']);
  await context.addInitScript(`(() => {
    window.__notes = [];
    class Recorded { constructor(title, opts) { window.__notes.push(opts && opts.body); } static permission = 'granted';
      static requestPermission() { return Promise.resolve('granted'); } }
    window.Notification = Recorded;
  })()`);
  const page = await context.newPage();
  page.setDefaultTimeout(40_000);
  const errors = watchErrors(page);
  const step = stepper(t, page, 'gen2-');
  const files = page.getByRole('region', { name: 'Files' });
  // Listening from the start turns on the interception of file pickers before any is opened.
  let choosers = 0;
  page.on('filechooser', () => { choosers++; });

  await step('logs in', async () => {
    await page.goto(server.url + '/login');
    await page.getByLabel('User name').fill('ada');
    await page.getByLabel('Password').fill('pw-ada-12345');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByTestId('printer-state').filter({ hasText: /^Operational$/ }).waitFor();
  });

  await step('a PrusaSlicer file shows its embedded thumbnail', async () => {
    await openTab(page, 'Files');
    const img = files.locator('li[data-file="benchy.gcode"] img[data-testid=file-thumb]');
    await img.waitFor();
    await until('the thumbnail to load', () => img.evaluate((el) => { const i = el as unknown as { complete: boolean; naturalWidth: number }; return i.complete && i.naturalWidth > 0; }));
  });

  await step('an STL offers Slice (not Print/Load, no "Analysis: pending"); the dialog slices with a profile choice', async () => {
    await openTab(page, 'Files');
    const row = files.locator('li[data-file="cube.stl"]');
    assert.equal(await row.getByRole('button', { name: /^(Print|Load)$/ }).count(), 0);
    await row.locator('button.name').click();
    assert.equal(await row.getByText('pending').count(), 0);
    await row.getByRole('button', { name: 'Slice…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Slice' });
    await dialog.getByLabel('Profile').waitFor();
    await dialog.getByLabel('Save as').fill('cube-sliced.gcode');
    // (A full-page capture here once closed the dialog: the layout switched for an instant; web/src/lib/pages.ts.)
    await screenshot(page, 'gen2-slice-dialog');
    await dialog.getByRole('button', { name: 'Slice', exact: true }).click();
    // PrusaSlicer on a loaded 2-core machine: seconds alone, up to a minute or two beside the other suites.
    await dialog.waitFor({ state: 'detached', timeout: 150_000 });
    await files.locator('li[data-file="cube-sliced.gcode"]').waitFor({ timeout: 60_000 });
  });

  await step('files: search and sort', async () => {
    await openTab(page, 'Files');
    await files.getByLabel('Search files').fill('cube');
    await until('only matches listed', async () => (await files.locator('[data-testid=file-list] li.file').count()) === 2);
    await files.getByLabel('Sort files by').selectOption('name');
    assert.deepEqual(await files.locator('[data-testid=file-list] li.file').evaluateAll((els) => els.map((e) => e.getAttribute('data-file'))),
      ['cube-sliced.gcode', 'cube.stl']);
    await files.getByLabel('Sort files by').selectOption('size');
    assert.equal(await files.locator('[data-testid=file-list] li.file').first().getAttribute('data-file'), 'cube-sliced.gcode');
    await files.getByLabel('Search files').fill('');
  });

  await step('Delete asks with the harmless choice focused; Enter and Escape keep the file; focus returns', async () => {
    await openTab(page, 'Files');
    const row = files.locator('li[data-file="benchy.gcode"]');
    await row.locator('button.name').click();
    const del = row.getByRole('button', { name: 'Delete' });
    await del.click();
    const dialog = page.getByRole('dialog', { name: 'Delete' });
    await dialog.waitFor();
    await waitForFocus(page, 'Keep');
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await focusedText(page), 'Delete', 'focus is back on the button that opened the dialog');
    await del.click();
    await dialog.waitFor();
    // A key pressed before the dialog has taken the focus would go to the page, not to the dialog.
    await waitForFocus(page, 'Keep');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.equal((await server.api('/api/files/local/benchy.gcode')).status, 200);
  });

  await step('a finished print is announced in the page and by the browser', async () => {
    await openTab(page, 'Files');
    await page.getByRole('button', { name: 'System' }).click();
    await page.getByRole('menuitem', { name: 'Notify me when prints end' }).click();
    await files.locator('li[data-file="benchy.gcode"]').getByRole('button', { name: 'Print' }).click();
    await page.locator('.notice').filter({ hasText: 'Print finished: benchy.gcode' }).waitFor({ timeout: 60_000 });
    await until('the browser notification', async () => ((await page.evaluate<string[]>('window.__notes')).includes('Print finished: benchy.gcode')));
    await page.getByTestId('job-outcome').filter({ hasText: 'Finished' }).waitFor();
  });

  await step('Stop asks "Keep printing" first, Escape keeps printing; after a stop the job panel is not stale', async () => {
    await openTab(page, 'Files');
    await files.locator('li[data-file="long.gcode"]').getByRole('button', { name: 'Print' }).click();
    await page.getByTestId('printer-state').filter({ hasText: /^Printing/ }).waitFor();
    await waitForNumber(page, '[data-testid=job-progress]', { above: 0 }, 60_000);
    const job = page.getByRole('region', { name: 'Job' });
    const stop = job.getByRole('button', { name: 'Stop…' });
    await stop.click();
    const dialog = page.getByRole('dialog', { name: 'Stop the print?' });
    await dialog.waitFor();
    await waitForFocus(page, 'Keep printing');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await focusedText(page), 'Stop…');
    await page.getByTestId('printer-state').filter({ hasText: /^Printing/ }).waitFor();
    await stop.click();
    await dialog.getByRole('button', { name: 'Stop print' }).click();
    await page.locator('.notice').filter({ hasText: 'Print cancelled: long.gcode' }).waitFor({ timeout: 30_000 });
    await page.getByTestId('printer-state').filter({ hasText: /^Operational$/ }).waitFor();
    await page.getByTestId('job-outcome').filter({ hasText: /^Cancelled at \d/ }).waitFor();
    assert.equal(await page.getByTestId('job-left').textContent(), '–', 'no time left for a stopped print');
    assert.equal(await page.getByTestId('job-progress').textContent(), '', 'no live percentage for a stopped print');
    await screenshot(page, 'gen2-after-cancel');
  });

  await step('history shows the two prints: one done, one cancelled', async () => {
    await openTab(page, 'History');
    await page.getByTestId('stat-prints').filter({ hasText: /^2$/ }).waitFor();
    assert.equal(await page.getByTestId('stat-ok').textContent(), '1');
    assert.equal(await page.getByTestId('stat-rate').textContent(), '50 %');
    await page.getByRole('region', { name: 'Per file' }).getByText('long.gcode').waitFor();
    await page.getByRole('region', { name: 'Per day' }).getByText(new Date().toISOString().slice(0, 10)).waitFor();
  });

  await step('a temperature preset of −5 °C gets the server\'s error beside the field; an empty one is not saved as 0', async () => {
    await openTab(page, 'Settings');
    await page.locator('.settings-nav').getByRole('button', { name: 'Temperatures' }).click();
    const form = page.getByRole('form', { name: 'Temperatures' });
    const bed = form.getByLabel('Bed').first();
    await bed.fill('-5');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByRole('alert').filter({ hasText: /0 to 500/ }).waitFor();
    assert.equal(await bed.getAttribute('aria-invalid'), 'true');
    await bed.fill('');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByRole('alert').filter({ hasText: 'Enter a temperature.' }).waitFor();
    const saved = await (await server.api('/api/settings')).json() as { temperature: { profiles: Array<{ bed: number }> } };
    assert.equal(saved.temperature.profiles[0].bed, 100, 'nothing was saved');
  });

  await step('groups get permissions, users join groups', async () => {
    await page.locator('.settings-nav').getByRole('button', { name: 'Groups & permissions' }).click();
    await page.getByRole('button', { name: 'Add group' }).click();
    const form = page.getByRole('form', { name: 'New group' });
    await form.getByLabel('Name').fill('Watchers');
    await form.getByLabel('Webcam', { exact: true }).check();
    await form.getByRole('button', { name: 'Save' }).click();
    const membership = page.getByRole('form', { name: 'Membership' });
    await membership.getByLabel('ada in Watchers').check();
    await until('ada in the group', async () => {
      const u = await (await server.api('/api/access/users/ada')).json() as { groups: string[] };
      return u.groups.includes('watchers');
    });
    const g = await (await server.api('/api/access/groups/watchers')).json() as { permissions: string[] };
    assert.deepEqual(g.permissions, ['WEBCAM']);
    await screenshot(page, 'gen2-groups');
  });

  await step('tabs follow the arrow keys and name their panels; upload is reachable by keyboard', async () => {
    await openTab(page, 'Temperature');
    await page.getByRole('tab', { name: 'Temperature' }).focus();
    // The file manager is the tab after Temperature.
    await page.keyboard.press('ArrowRight');
    const control = page.getByRole('tab', { name: 'Files', exact: true });
    assert.equal(await control.getAttribute('aria-selected'), 'true');
    assert.equal(await focusedText(page), 'Files');
    const panel = await control.getAttribute('aria-controls');
    assert.equal(await page.locator(`#${panel}[role=tabpanel]`).count(), 1);
    await page.keyboard.press('End');
    assert.equal(await page.getByRole('tab', { name: 'Settings' }).getAttribute('aria-selected'), 'true');
    await page.keyboard.press('Home');
    assert.equal(await page.getByRole('tab', { name: 'Temperature' }).getAttribute('aria-selected'), 'true');
    await openTab(page, 'Files');
    await files.getByRole('button', { name: 'Upload…' }).focus();
    await page.keyboard.press('Enter');
    await until('the file picker', async () => choosers === 1);
  });

  await step('a temperature offset set on the Temperature page reaches the printer', async () => {
    await openTab(page, 'Temperature');
    const row = page.locator('tr[data-heater=tool0]');
    await row.getByRole('spinbutton', { name: 'Tool 0 offset' }).fill('5');
    await row.getByRole('button', { name: 'Apply Tool 0 offset' }).click();
    await until('the offset', async () => {
      const r = await (await server.api('/api/printer/tool')).json() as { tool0?: { offset?: number } };
      return r.tool0?.offset === 5;
    });
  });

  await step('a dead webcam URL gives a message, not a broken image', async () => {
    await openTab(page, 'Control');
    await page.getByTestId('webcam-dead').waitFor();
    assert.equal(await page.locator('img.webcam').count(), 0);
  });

  await step('dark mode follows prefers-color-scheme and the toggle', async () => {
    const bg = () => page.evaluate<number>(`(() => {
      const [r, g, b] = getComputedStyle(document.body).backgroundColor.match(/\\d+/g).map(Number);
      return (r + g + b) / 3;
    })()`);
    await page.emulateMedia({ colorScheme: 'dark' });
    assert.ok((await bg()) < 60, 'dark background under prefers-color-scheme: dark');
    await screenshot(page, 'gen2-dark');
    const toggle = page.locator('header').getByRole('button', { name: /^Theme/ });
    await toggle.click(); // auto → dark
    await toggle.click(); // dark → light
    assert.ok((await bg()) > 200, 'the toggle overrides the system');
    await toggle.click(); // light → auto
    await page.emulateMedia({ colorScheme: 'light' });
    assert.ok((await bg()) > 200);
  });

  await step('every page at 1280×800, then at 390×844 with state, job and temperatures first and no sideways scrolling', async () => {
    for (const name of PAGES) {
      await openTab(page, name);
      if (name === 'Timelapse') {
        await page.getByRole('form', { name: 'Timelapse settings' }).getByLabel('Mode').waitFor();
        await page.getByRole('region', { name: 'Timelapses' }).waitFor();
      }
      if (name === 'Logs') {
        const logs = page.getByRole('region', { name: 'Log files' });
        await logs.waitFor();
        const first = logs.locator('tbody button.link').first();
        if (await first.count()) {
          await first.click();
          await until('the end of the log', async () => ((await page.getByTestId('log-tail').textContent()) ?? '').length > 0);
        }
      }
      await screenshot(page, `page-${name.toLowerCase()}-desktop`);
    }
    await resizeTo(page, 390, 844);
    for (const name of PAGES) {
      await openTab(page, name);
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      const wide = overflow > 1 ? await page.evaluate<string[]>(`[...document.querySelectorAll('body *')].filter((el) => el.getBoundingClientRect().right > innerWidth + 1)
        .slice(0, 8).map((el) => el.tagName + '.' + el.className + ' ' + Math.round(el.getBoundingClientRect().right))`) : [];
      assert.ok(overflow <= 1, `${name}: no horizontal scrolling (overflow ${overflow}px; ${wide.join(', ')})`);
      await screenshot(page, `page-${name.toLowerCase()}-phone`);
    }
    await openTab(page, 'Status');
    await page.evaluate('window.scrollTo(0, 0)');
    const inFirstScreen = async (selector: string) => {
      const box = await page.locator(selector).first().boundingBox();
      return !!box && box.y >= 0 && box.y + Math.min(box.height, 40) <= 844;
    };
    assert.ok(await inFirstScreen('[data-testid=printer-state]'), 'printer state in the first screen');
    assert.ok(await inFirstScreen('[aria-label=Job]'), 'job in the first screen');
    await openTab(page, 'Temperature');
    assert.ok(await inFirstScreen('tr[data-heater=tool0]'), 'temperatures in the first screen');
    // The heaters' own box scrolled sideways to reach the offset (the page did not); now each heater wraps.
    const sideways = await page.evaluate<number>("(() => { const s = document.querySelector('.temperature .scroll'); return s.scrollWidth - s.clientWidth; })()");
    assert.ok(sideways <= 1, `the heaters fit the screen (${sideways}px to scroll sideways)`);
    const offset = await page.locator('tr[data-heater=tool0] input[aria-label$=offset]').boundingBox();
    assert.ok(offset && offset.x + offset.width <= 390, 'the offset field is on the screen');
    const bar = await page.getByTestId('bottom-bar').boundingBox();
    assert.ok(bar && Math.abs(bar.y + bar.height - 844) <= 1, 'the page bar sits at the bottom of the screen');
    const small = await page.evaluate<string[]>(`[...document.querySelectorAll('header button, header a, .bottom-bar button, .file .actions button, .buttons button')]
      .filter((el) => el.offsetParent !== null && el.getBoundingClientRect().height < 44).map((el) => el.textContent + ' ' + el.getBoundingClientRect().height)`);
    assert.deepEqual(small, [], 'tap targets at least 44 px high');
    await resizeTo(page, 1280, 800);
  });

  await step('a locked-out login says for how long', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(/\/login/);
    for (let i = 0; i < 4; i++) {
      await page.getByLabel('User name').fill('ada');
      await page.getByLabel('Password').fill('wrong');
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('alert').waitFor();
    }
    await page.getByRole('alert').filter({ hasText: /locked\. Try again in \d+ (s|min)/ }).waitFor();
    await screenshot(page, 'gen2-login-locked');
  });

  assert.deepEqual(errors.filter((e) => !/127\.0\.0\.1:9|ERR_CONNECTION_REFUSED/.test(e)), [], 'no script errors');
});
