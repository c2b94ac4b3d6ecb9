// The Farm page in headless Chromium: loaded lazily, a card per printer from /api/farm/printers, and the print queue
// (a job added from the page is listed; with the queue paused it waits, and can be removed).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer } from '../../helpers/connected-server.ts';
import { buildWeb } from '../../../web/build.ts';
import { launchBrowser, openTab, screenshot, stepper, watchErrors, logIn, scriptsFetched } from './browser.ts';
import { needs } from '../../helpers/tools.ts';

test('Farm page: printer cards and the queue', { skip: needs('chromium'), timeout: 120_000 }, async (t) => {
  const launching = launchBrowser(t);
  await buildWeb({ ifStale: true });
  const server = await connectedServer(t);
  await server.access.users.addUser({ name: 'ada', password: 'pw-ada-12345', groups: ['admins', 'users'] });
  const form = new FormData();
  form.append('file', new Blob(['G28\nG1 X10 Y10 F3000\nM84\n']), 'part.gcode');
  assert.equal((await server.api('/api/files/local', { method: 'POST', body: form })).status, 201);
  // Paused, so the job stays in the list for the page to show.
  assert.equal((await server.api('/api/farm/queue', { method: 'PATCH', json: { command: 'pause' } })).status, 200);

  const browser = await launching;
  const page = await (await browser.newContext({ viewport: { width: 390, height: 844 } })).newPage();
  page.setDefaultTimeout(30_000);
  const errors = watchErrors(page);
  const step = stepper(t, page, 'farm-');
  const scripts = scriptsFetched(page);

  await step('the page loads its code when opened and shows the printer card', async () => {
    await logIn(page, server.url, 'ada', 'pw-ada-12345');
    await page.getByTestId('bottom-bar').waitFor();
    assert.ok(!scripts.some((s) => s.includes('FarmPage')), 'not loaded before the page is opened');
    await openTab(page, 'Farm');
    const card = page.getByRole('listitem', { name: 'Printer default' });
    await card.waitFor();
    await card.getByText('Operational').waitFor();
    assert.ok(scripts.some((s) => s.includes('FarmPage')));
    await page.getByText('(paused)').waitFor();
  });

  await step('a job added from the page is listed, and removed', async () => {
    const add = page.getByRole('form', { name: 'Add to queue' });
    await add.getByRole('combobox', { name: 'File' }).fill('part.gcode');
    await add.getByLabel('Copies').fill('3');
    await add.getByRole('button', { name: 'Add to queue' }).click();
    const jobs = page.getByRole('list', { name: 'Queued jobs' });
    await jobs.getByText('part.gcode').waitFor();
    await jobs.getByText('0/3 done').waitFor();
    await jobs.getByText('the queue is paused').waitFor();
    const q = (await (await server.api('/api/farm/queue')).json()) as { jobs: Array<{ path: string; copies: number }> };
    assert.deepEqual(q.jobs.map((j) => [j.path, j.copies]), [['part.gcode', 3]]);
    await screenshot(page, 'farm-queue');
    await page.getByRole('button', { name: 'Remove part.gcode' }).click();
    await page.getByText('The queue is empty.').waitFor();
  });
  assert.deepEqual(errors, []);
});
