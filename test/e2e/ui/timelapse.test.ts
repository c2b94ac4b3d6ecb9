// The Timelapse page in headless Chromium with a real ffmpeg: a frame set in the base dir shows as unrendered, its
// Render button renders a movie, the movie appears in the list with its thumbnail, its Download link delivers the
// file, and Delete (after the confirmation) removes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../../helpers/server.ts';
import { buildWeb } from '../../../web/build.ts';
import { launchBrowser, screenshot, stepper, watchErrors } from './browser.ts';
import { needs } from '../../helpers/tools.ts';
import { FFMPEG, testFrames } from '../../timelapse/helpers.ts';

const SKIP = needs('chromium') || (!existsSync(FFMPEG) ? `no ${FFMPEG} (apt-get install ffmpeg)` : false);

test('Timelapse page: render an unrendered frame set, the movie listed with its thumbnail, download, delete', { skip: SKIP }, async (t) => {
  // Chromium starts while the server is set up.
  const launching = launchBrowser(t);
  await buildWeb({ ifStale: true });
  const server = await startTestServer(t, { settings: { webcam: { ffmpeg: FFMPEG, watermark: false } } });
  await server.access.users.addUser({ name: 'ada', password: 'pw-ada-12345', groups: ['admins', 'users'] });
  const tmp = join(server.paths.timelapse, 'tmp');
  const frames = await testFrames();
  for (let i = 0; i < 6; i++) await writeFile(join(tmp, `benchy_20261125120000-${i}.jpg`), frames[i % frames.length]);

  const browser = await launching;
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  const page = await context.newPage();
  page.setDefaultTimeout(40_000);
  const errors = watchErrors(page);
  const step = stepper(t, page, 'timelapse-');
  const movies = page.getByRole('region', { name: 'Timelapses' });
  const name = 'benchy_20261125120000.mp4';

  await step('logs in and opens the Timelapse page: no movies yet, one unrendered frame set', async () => {
    await page.goto(server.url + '/login');
    await page.getByLabel('User name').fill('ada');
    await page.getByLabel('Password').fill('pw-ada-12345');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('tab', { name: 'Timelapse', exact: true }).click();
    await movies.getByText('No timelapses yet.').waitFor();
    await page.getByRole('region', { name: 'Unrendered timelapses' }).getByRole('row').filter({ hasText: 'benchy_20261125120000' }).filter({ hasText: '6 frames' }).waitFor();
  });

  await step('Render makes a real movie with ffmpeg; it appears in the list with its thumbnail and the frames go', async () => {
    await page.getByRole('region', { name: 'Unrendered timelapses' }).getByRole('button', { name: 'Render' }).click();
    const item = movies.getByRole('listitem').filter({ hasText: name });
    await item.waitFor({ timeout: 60_000 });
    const img = item.locator('img');
    await img.waitFor();
    await page.waitForFunction((el) => { const i = el as unknown as { complete: boolean; naturalWidth: number }; return i.complete && i.naturalWidth > 0; }, await img.elementHandle());
    await page.getByRole('region', { name: 'Unrendered timelapses' }).waitFor({ state: 'detached' });
    assert.deepEqual(await readdir(tmp), [], 'the rendered frames are removed');
    await screenshot(page, 'timelapse-rendered');
  });

  await step('the Download link delivers the movie as rendered', async () => {
    const item = movies.getByRole('listitem').filter({ hasText: name });
    const [download] = await Promise.all([page.waitForEvent('download'), item.getByRole('link', { name: 'Download' }).click()]);
    assert.equal(download.suggestedFilename(), name);
    const saved = await download.path();
    const onDisk = await readFile(join(server.paths.timelapse, name));
    assert.ok(onDisk.length > 0);
    assert.ok((await readFile(saved)).equals(onDisk), 'the downloaded bytes are the movie');
    assert.equal(onDisk.subarray(4, 8).toString('latin1'), 'ftyp', 'an MP4 file');
  });

  await step('Delete asks first, then removes the movie from the list and the disk', async () => {
    await movies.getByRole('listitem').filter({ hasText: name }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await movies.getByText('No timelapses yet.').waitFor();
    assert.equal(existsSync(join(server.paths.timelapse, name)), false);
  });

  assert.deepEqual(errors, [], 'no script errors');
});
