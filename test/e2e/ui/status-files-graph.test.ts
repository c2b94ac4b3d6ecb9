// #59 points 4, 6 and 7 in headless Chromium at 1280×800 and 390×844: the status card while the virtual printer prints
// (layer n/N, the finish clock time, time left on a truncated file, thumbnail, progress in the tab's title and icon, the
// last result after a reload), the file manager (multi-select move and delete, breadcrumbs, Upload in the first screen,
// no sideways scrolling with a long name), and the temperature graph's event and time labels, which never overlap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { buildWeb } from '../../../web/build.ts';
import { launchBrowser, openTab, screenshot, stepper, until, watchErrors } from './browser.ts';
import { needs } from '../../helpers/tools.ts';
import { jobCommand, uploadFile } from '../../printer/job/helpers.ts';
import { gcodeWithThumbnails } from '../../helpers/thumbnail-gcode.ts';

const SIZES = [{ name: 'desktop', width: 1280, height: 800 }, { name: 'phone', width: 390, height: 844 }];
const PASSWORD = 'pw-ada-12345';
const LAYERS = 30;

/**
 * A file cut from a longer print: it keeps the slicer's `M73 P0 R37` (37 minutes for the whole print) but holds only
 * 30 short layers, a few seconds of moves; layer comments as PrusaSlicer writes them, and a preview.
 */
function truncatedLayers(): string {
  const head = gcodeWithThumbnails().split('\nG28')[0];
  const lines = [head, 'M73 P0 R37', 'G28', 'G90', 'M82'];
  let e = 0;
  for (let l = 0; l < LAYERS; l++) {
    lines.push(';LAYER_CHANGE', `;Z:${((l + 1) * 0.2).toFixed(1)}`, `G1 Z${((l + 1) * 0.2).toFixed(1)} F600`);
    for (const [x, y] of [[10, 10], [40, 10], [40, 40], [10, 40]]) lines.push(`G1 X${x} Y${y} E${(e += 1).toFixed(2)} F900`);
    if (l === 3) lines.push('M73 P1 R36');
  }
  return `${lines.join('\n')}\n`;
}

async function state(server: TestServer): Promise<string> {
  const r = await server.api('/api/printer');
  return ((await r.json()) as { state: { text: string } }).state.text;
}

/** Boxes of the elements matching `selector` (CSS px). */
const boxes = (page: Page, selector: string) => page.evaluate<{ x: number; y: number; w: number; h: number; text: string }[]>(
  `[...document.querySelectorAll(${JSON.stringify(selector)})].map((el) => { const r = el.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height, text: el.textContent }; })`);
const overlaps = (a: { x: number; y: number; w: number; h: number }, b: { x: number; y: number; w: number; h: number }) =>
  a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

test('status card, file manager and graph labels at both sizes', { skip: needs('chromium') }, async (t) => {
  const launching = launchBrowser(t);
  await buildWeb({ ifStale: true });
  const server = await startTestServer(t, { settings: { devel: { virtualPrinter: { throttle: 0.1 } } } });
  await server.access.users.addUser({ name: 'ada', password: PASSWORD, groups: ['admins', 'users'] });
  assert.equal((await server.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL' } })).status, 204);
  assert.equal((await uploadFile(server, 'layers.gcode', truncatedLayers())).status, 201);
  await until('the file analysed', async () => {
    const r = await server.api('/api/files/local/layers.gcode');
    return !!((await r.json()) as { gcodeAnalysis?: { estimatedPrintTime?: number } }).gcodeAnalysis?.estimatedPrintTime;
  }, 30_000);
  const browser = await launching;

  for (const size of SIZES) {
    const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, hasTouch: size.name === 'phone' });
    const page = await context.newPage();
    page.setDefaultTimeout(40_000);
    const errors = watchErrors(page);
    const step = stepper(t, page, `status-${size.name}-`);
    const card = page.getByTestId('status-card');

    await step(`${size.name}: logs in; the status card is at the top`, async () => {
      await page.goto(server.url + '/login');
      await page.getByLabel('User name').fill('ada');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await card.waitFor();
      const box = await card.boundingBox();
      assert.ok(box && box.y < 130, `the card starts at ${box?.y}px`);
    });

    await step(`${size.name}: while printing: layer n/N, done at a clock time, time left fits the file, title and icon show the progress`, async () => {
      if ((await state(server)) !== 'Operational') {
        await jobCommand(server, 'cancel');
        await until('the last print stopped', async () => (await state(server)) === 'Operational', 30_000);
      }
      assert.equal((await server.api('/api/files/local/layers.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
      await card.getByTestId('job-layer').filter({ hasText: new RegExp(`^\\d+ / ${LAYERS}$`) }).waitFor({ timeout: 30_000 });
      await card.getByTestId('finish-time').filter({ hasText: /\d{1,2}:\d\d/ }).waitFor();
      await until('progress in the title', async () => /^\d+ % · layers\.gcode – Gantry$/.test(await page.title()));
      assert.equal(await page.locator('link[rel~=icon]').getAttribute('data-progress'), 'yes', 'the tab icon shows the progress');
      assert.match((await page.locator('link[rel~=icon]').getAttribute('href')) ?? '', /^data:image\/svg\+xml,/);
      // The truncated file's M73 R37 promised 37 minutes; its moves take about 4 minutes at full speed (its analysis).
      const left = (await card.getByTestId('job-left').textContent()) ?? '';
      assert.match(left, /^(\d+s|[0-5]m \d\ds) /, `time left "${left}"`);
      assert.doesNotMatch(left, /estimated\)/, 'not the foreign M73 estimate');
      await card.getByTestId('job-z').filter({ hasText: / mm$/ }).waitFor();
      const z = (await card.getByTestId('job-z').textContent()) ?? '';
      assert.match(z, /^\d+\.\d\d( \/ \d+\.\d)? mm$/, `Z "${z}"`);
      assert.match((await card.getByTestId('job-speed').textContent()) ?? '', /^\d+ %/);
      assert.match((await card.getByTestId('job-filament').textContent()) ?? '', /^\d+\.\d\d \/ \d+\.\d\d m$/);
      assert.match((await card.getByTestId('job-estimate').textContent()) ?? '', /\((file analysis|previous prints)\)/);
      await until('the thumbnail loaded', () => page.evaluate<boolean>(`(() => { const i = document.querySelector('[data-testid=status-thumb]'); return !!i && i.complete && i.naturalWidth > 0; })()`));
      await screenshot(page, `status-card-printing-${size.name}`);
    });

    await step(`${size.name}: pause, resume and cancel close together; the graph's labels never overlap`, async () => {
      assert.equal(await jobCommand(server, 'pause', 'pause'), 204);
      await until('paused', async () => (await state(server)) === 'Paused', 30_000);
      assert.equal(await jobCommand(server, 'pause', 'resume'), 204);
      await until('printing again', async () => /^Printing/.test(await state(server)), 30_000);
      assert.equal(await jobCommand(server, 'cancel'), 204);
      await until('cancelled', async () => (await state(server)) === 'Operational', 30_000);
      await openTab(page, 'Temperature');
      const graph = page.getByTestId('temp-graph');
      // Start, Resume and Cancel (close together, so some may be merged into one label, each named in its tooltip).
      await until('the cancel marked', async () => (await graph.locator('.event-label').evaluateAll((els) => els.map((e) => e.getAttribute('title')).join('\n'))).includes('Cancel at'));
      const labels = await boxes(page, '[data-testid=temp-graph] .event-label');
      const plot = (await boxes(page, '[data-testid=temp-graph] .u-over'))[0];
      for (let i = 0; i < labels.length; i++) {
        const l = labels[i];
        assert.ok(l.x >= plot.x - 0.5 && l.x + l.w <= plot.x + plot.w + 0.5, `"${l.text}" inside the plot`);
        for (let k = i + 1; k < labels.length; k++) assert.ok(!overlaps(l, labels[k]), `"${l.text}" and "${labels[k].text}" overlap`);
      }
      const titles = (await graph.locator('.event-label').evaluateAll((els) => els.map((e) => e.getAttribute('title')))).join('\n');
      for (const word of ['Start at', 'Resume at', 'Cancel at']) assert.ok(titles.includes(word), `${word} among "${titles}"`);
      const ticks = JSON.parse((await page.locator('[data-testid=temp-graph] .uplot').getAttribute('data-ticks')) ?? '[]') as [number, number][];
      assert.ok(ticks.length >= 2, 'time labels drawn');
      for (let i = 1; i < ticks.length; i++) assert.ok(ticks[i][0] > ticks[i - 1][1] + 4, `time labels ${i - 1} and ${i} run into each other: ${JSON.stringify(ticks)}`);
      await screenshot(page, `graph-labels-${size.name}`);
    });

    await step(`${size.name}: after a reload the card still shows how the last print ended`, async () => {
      await page.reload();
      await page.getByTestId('printer-state').waitFor();
      if (size.name === 'phone') await openTab(page, 'Status');
      await card.getByTestId('job-outcome').filter({ hasText: /^Cancelled/ }).waitFor();
      assert.match(await page.title(), /Operational – Gantry$/, 'no progress in the title once it ended');
      assert.equal(await page.locator('link[rel~=icon]').getAttribute('data-progress'), 'no');
    });

    await step(`${size.name}: file manager: Upload in the first screen, bulk move into a folder, breadcrumbs, bulk delete`, async () => {
      const folder = `bin-${size.name}`;
      const form = new FormData();
      form.append('foldername', folder);
      assert.equal((await server.api('/api/files/local', { method: 'POST', body: form })).status, 201);
      const names = ['alpha.gcode', 'beta.gcode', 'a rather long file name made of many words that must wrap between them.gcode'];
      for (const n of names) assert.equal((await uploadFile(server, n, 'G28\nG1 X1\n')).status, 201);
      await openTab(page, 'Files');
      const files = page.getByRole('region', { name: 'Files', exact: true });
      const upload = await files.getByRole('button', { name: 'Upload…' }).boundingBox();
      assert.ok(upload && upload.y + upload.height <= size.height - (size.name === 'phone' ? 60 : 0), `Upload… in the first screen (at ${upload?.y})`);
      // The uploads' change events may redraw the list after a box is ticked: tick until all three hold.
      const bulk = page.getByTestId('bulk-bar');
      await until('three files selected', async () => {
        for (const n of names) await files.locator(`li[data-file="${n}"]`).getByRole('checkbox').check();
        return (await bulk.getByText('3 selected').count()) === 1;
      });
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      assert.ok(overflow <= 1, `no horizontal scrolling (${overflow}px)`);
      const longName = files.locator(`li[data-file="${names[2]}"] button.name`);
      assert.equal(await longName.evaluate((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { wordBreak: string } }).getComputedStyle(el).wordBreak), 'normal',
        'long names wrap between words');
      await screenshot(page, `file-manager-selected-${size.name}`);
      await bulk.getByText('3 selected').waitFor();
      await bulk.getByRole('button', { name: 'Move selected…' }).click();
      const prompt = page.getByRole('form', { name: 'Move files' });
      await prompt.locator('input').fill(folder);
      await prompt.getByRole('button', { name: 'Move' }).click();
      // Moved: they leave the listing of the root (the folder's own rows show once it is opened).
      for (const n of names) await files.locator(`li[data-file="${n}"]`).waitFor({ state: 'detached' });
      await files.getByRole('button', { name: `📁 ${folder}` }).click();
      const crumbs = page.getByTestId('crumbs');
      await crumbs.getByRole('button', { name: folder }).waitFor();
      assert.equal(await crumbs.getByRole('button', { name: folder }).getAttribute('aria-current'), 'location');
      for (const n of names) await files.locator(`li[data-file="${folder}/${n}"]`).waitFor();
      for (const n of names) assert.equal((await server.api(`/api/files/local/${encodeURIComponent(folder)}/${encodeURIComponent(n)}`)).status, 200, `${n} moved`);
      for (const n of names) await files.locator(`li[data-file="${folder}/${n}"]`).getByRole('checkbox').check();
      await bulk.getByRole('button', { name: 'Delete selected' }).click();
      await page.getByRole('form', { name: 'Delete files' }).getByRole('button', { name: 'Delete' }).click();
      await files.getByText('No files here yet.').waitFor();
      for (const n of names) assert.equal((await server.api(`/api/files/local/${encodeURIComponent(folder)}/${encodeURIComponent(n)}`)).status, 404, `${n} deleted`);
      await crumbs.getByRole('button', { name: 'local' }).click();
      await files.getByRole('button', { name: `📁 ${folder}` }).waitFor();
      await screenshot(page, `file-manager-${size.name}`);
    });

    await step(`${size.name}: no script errors`, async () => {
      assert.deepEqual(errors, []);
    });
    await context.close();
  }
});
