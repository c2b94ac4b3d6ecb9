// Mainsail 2.18 (its release files, from the shared folder; never shipped) in Chromium against Gantry with the virtual
// printer, through the Moonraker edge: the dashboard loads with no error dialog, temperatures move after a target set
// in the UI, the file list shows a PrusaSlicer file with its thumbnail and estimate, a print started from the UI
// advances and is paused, resumed and cancelled from the UI, the console answers M115, the history lists the print.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { connectedServer } from '../../helpers/connected-server.ts';
import { SHARED_DIR, SMALL_GCODE } from '../../helpers/shared-data.ts';
import { SMALL_PNG, LARGE_PNG } from '../../helpers/thumbnail-gcode.ts';
import { needs } from '../../helpers/tools.ts';
import { waitFor } from '../../helpers/wait.ts';
import { launchBrowser, screenshot, watchErrors } from '../ui/browser.ts';

const MAINSAIL = join(SHARED_DIR, 'ui/mainsail-2.18.0');

function block(w: number, h: number, png: Buffer): string {
  const b64 = png.toString('base64');
  return [`; thumbnail begin ${w}x${h} ${b64.length}`, ...(b64.match(/.{1,78}/g) ?? []).map((l) => `; ${l}`), '; thumbnail end', ';'].join('\n');
}

/** The shared PrusaSlicer file with two previews put where PrusaSlicer writes them (after the first comment lines). */
async function withThumbnails(): Promise<string> {
  const lines = (await readFile(SMALL_GCODE, 'utf8')).split('\n');
  return [...lines.slice(0, 2), block(48, 48, SMALL_PNG), block(300, 300, LARGE_PNG), ...lines.slice(2)].join('\n');
}

/**
 * The first *visible* element with this text: Mainsail keeps copies of some texts in hidden parts (menus, tooltips,
 * the other layout), and which copy comes first in the page depends on timing, so a plain first() can wait on a hidden
 * one for ever.
 */
function visibleText(page: Page, text: string | RegExp) {
  return page.getByText(text).filter({ visible: true }).first();
}

/** Mainsail's error dialogs (connection failed, Klippy errors) are v-dialogs with these words. */
async function noErrorDialog(page: Page): Promise<void> {
  const dialogs = await page.locator('.v-dialog--active').allInnerTexts();
  assert.ok(!dialogs.some((d) => /fail|error|cannot|unauthor/i.test(d)), `error dialog: ${dialogs.join(' | ')}`);
}

test('Mainsail drives a print on the virtual printer through the Moonraker edge', { skip: needs('chromium', 'shared-data') }, async (t) => {
  const launching = launchBrowser(t);
  // Slow enough (a tenth of real time) for the print to be paused and resumed while it runs.
  const server = await connectedServer(t, {
    moonraker: { ui: MAINSAIL, trustedClients: ['127.0.0.0/8', '::1/128'] },
    devel: { virtualPrinter: { throttle: 0.1, busyInterval: 0.2 } },
  });
  const form = new FormData();
  form.append('file', new Blob([await withThumbnails()]), 'benchy_small.gcode');
  assert.equal((await server.api('/server/files/upload', { method: 'POST', body: form })).status, 201);
  await waitFor('analysis', async () => (await server.api('/api/files/local/benchy_small.gcode').then((r) => r.json()) as { gcodeAnalysis?: unknown }).gcodeAnalysis);

  const browser = await launching;
  const page = await (await browser.newContext({ viewport: { width: 1400, height: 1000 } })).newPage();
  // Generous: on a loaded CI machine Mainsail's first load and each websocket round trip are slow, not wrong.
  page.setDefaultTimeout(90_000);
  const errors = watchErrors(page);
  t.after(() => screenshot(page, 'mainsail-last').catch(() => {}));

  // Dashboard: served at / from the release folder, talking to this host.
  await page.goto(server.url + '/');
  await visibleText(page, 'Heater Bed').waitFor();
  await visibleText(page, 'Standby').waitFor();
  await noErrorDialog(page);

  // A target set in the temperature panel reaches the printer, and the shown temperature moves.
  const extruderRow = page.locator('tr', { hasText: 'Extruder' }).first();
  const shown = async () => Number((await extruderRow.locator('td').nth(2).innerText()).replace(/[^\d.]/g, ''));
  const before = await shown();
  await extruderRow.locator('input').fill('60');
  await extruderRow.locator('input').press('Enter');
  await waitFor('target reaches the printer', () => server.printer.temperatures().tool0?.target === 60);
  await waitFor('the shown temperature rises', async () => (await shown()) > before + 5, { timeoutMs: 30_000 });

  // Console (the dashboard's panel): M115's answer comes back.
  const input = page.getByLabel('Send code...').first();
  const count = async () => page.getByText(/FIRMWARE_NAME/).count();
  const seen = await count();
  await input.fill('M115');
  await input.press('Enter');
  await waitFor('the M115 answer in the console', async () => (await count()) > seen);
  await noErrorDialog(page);

  // File list: the thumbnail (from the file's preview) and the slicer's estimate.
  await page.locator('a[href="/files"]').first().click();
  const row = page.locator('tr', { hasText: 'benchy_small.gcode' });
  await row.waitFor();
  const img = row.locator('img').first();
  await img.waitFor();
  assert.match(await img.getAttribute('src') ?? '', /\/server\/files\/gcodes\/\.thumbs\/benchy_small-\d+x\d+\.png/);
  assert.ok(await img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth > 0), 'the thumbnail loaded');
  assert.match(await row.innerText(), /38m/, 'the slicer estimate (38m 43s) is shown');

  // Start it from the list's dialog.
  await row.getByText('benchy_small.gcode').click();
  await page.locator('.v-dialog--active').getByRole('button', { name: /print/i }).click();
  await waitFor('printing', () => server.printer.state().flags.printing);
  await page.locator('a[href="/"]').first().click();
  await page.waitForURL((u) => u.pathname === '/');
  await visibleText(page, /Printing/).waitFor();
  // The status panel's header reads `<n>% Printing`; the number advances with the print.
  const percent = async () => Number(/(\d+)% Printing/.exec(await page.locator('.panel-toolbar', { hasText: '% Printing' }).first().innerText().catch(() => ''))?.[1] ?? -1);
  const first = await waitFor('a progress figure', async () => { const p = await percent(); return p >= 0 ? p + 1 : undefined; }) - 1;
  await waitFor('progress advances', async () => (await percent()) > first, { timeoutMs: 60_000 });
  const panel = page.locator('.v-card', { hasText: 'benchy_small' }).first();
  assert.match(await panel.innerText(), /Slicer\s+0:3\d:\d\d/, 'the slicer estimate in the status panel');
  await screenshot(page, 'mainsail-printing');
  await noErrorDialog(page);

  // Pause, resume, cancel with the status panel's buttons (Material Design pause, play and stop icons).
  const button = (d: string) => panel.locator(`button:has(path[d^="${d}"])`).first();
  await button('M14,19H18V5H14').click();
  await waitFor('paused at the printer', () => server.printer.state().flags.paused, { timeoutMs: 30_000 });
  await visibleText(page, /Paused/).waitFor();
  await button('M8,5.14V19.14').click();
  await waitFor('printing again', () => server.printer.state().id === 'PRINTING', { timeoutMs: 30_000 });
  await page.locator('.panel-toolbar', { hasText: '% Printing' }).first().waitFor();
  // Mainsail offers cancel on a paused print.
  await button('M14,19H18V5H14').click();
  await waitFor('paused again', () => server.printer.state().flags.paused, { timeoutMs: 30_000 });
  await button('M18,18H6V6H18V18Z').click();
  // Mainsail may ask first (its "confirm on cancel" setting).
  const confirm = page.locator('.v-dialog--active').getByRole('button', { name: /cancel print|yes|ok/i });
  if (await confirm.count().catch(() => 0)) await confirm.first().click();
  await waitFor('cancelled', () => !server.printer.state().flags.printing && !server.printer.state().flags.paused, { timeoutMs: 30_000 });
  await visibleText(page, /Cancelled/i).waitFor();

  // History lists it.
  await page.locator('a[href="/history"]').first().click();
  const historyRow = page.locator('tr', { hasText: 'benchy_small.gcode' }).first();
  await historyRow.waitFor();
  await screenshot(page, 'mainsail-history');
  await noErrorDialog(page);
  assert.deepEqual(errors.filter((e) => !/Multiple instances of Vue/.test(e)), []);
});
