// The offer to resume an interrupted print in the web UI: file, layer, time and cause are shown, and neither Resume
// nor Discard moves anything before the dialog is confirmed; a confirmed Resume starts the print again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../../helpers/server.ts';
import { buildWeb } from '../../../web/build.ts';
import { waitFor } from '../../printer/helpers.ts';
import { uploadFile, recorder } from '../../printer/job/helpers.ts';
import { journalOnDisk, layeredGcode } from '../../recovery/helpers.ts';
import { launchBrowser, screenshot, watchErrors } from './browser.ts';
import { needs } from '../../helpers/tools.ts';

test('interrupted print: the offer shows file, layer, time and cause; Resume and Discard ask first', { skip: needs('chromium') }, async (t) => {
  // Chromium starts while the server is set up.
  const launching = launchBrowser(t);
  await buildWeb({ ifStale: true });
  const s = await startTestServer(t, { settings: { devel: { virtualPrinter: { throttle: 0.05, busyInterval: 0.2 } } } });
  await s.access.users.addUser({ name: 'dana', password: 'pw-dana-1234', groups: ['users'] });
  assert.equal((await s.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL' } })).status, 204);
  await waitFor('Operational', () => s.printer.isOperational() || undefined);
  // The user logs in while the print gets going.
  const loggingIn = (async () => {
    const browser = await launching;
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(40_000);
    const errors = watchErrors(page);
    await page.goto(s.url + '/login');
    await page.getByLabel('User name').fill('dana');
    await page.getByLabel('Password').fill('pw-dana-1234');
    await page.getByRole('button', { name: 'Log in' }).click();
    return { page, errors };
  })();
  loggingIn.catch(() => undefined); // awaited below; a failure before that must not count as unhandled
  const rec = recorder(s);
  assert.equal((await uploadFile(s, 'benchy.gcode', layeredGcode(40, 15, 20))).status, 201);
  assert.equal((await s.api('/api/files/local/benchy.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
  await waitFor('journal at layer 2', async () => ((await journalOnDisk(s.baseDir))?.layer ?? -1) >= 2 || undefined, 60_000);

  const { page, errors } = await loggingIn;
  await page.getByTestId('printer-state').filter({ hasText: /^Printing/ }).waitFor().catch(async (e: unknown) => {
    await screenshot(page, 'recovery-debug');
    throw new Error(`${String(e)} state=${await page.getByTestId('printer-state').textContent().catch(() => '?')} errors=${errors.join(';')}`);
  });
  assert.equal(await page.getByTestId('recovery-offer').count(), 0, 'no offer while the print runs');

  // The board restarts mid-print: the offer appears by itself (pushed event), with what and where.
  assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { command: '!!DEBUG:reset' } })).status, 204);
  const panel = page.getByRole('region', { name: 'Interrupted print' });
  await panel.waitFor();
  const offer = (await (await s.api('/api/plugin/recovery')).json()) as { line: number; layer: number };
  assert.equal(await panel.getByTestId('recovery-file').textContent(), 'benchy.gcode');
  assert.match((await panel.getByTestId('recovery-where').textContent()) ?? '', new RegExp(`line ${offer.line}, layer ${offer.layer}`));
  assert.match((await panel.getByTestId('recovery-cause').textContent()) ?? '', /restarted/);
  await page.getByTestId('printer-state').filter({ hasText: /^Operational$/ }).waitFor();
  await screenshot(page, 'recovery-offer');

  // Discard asks; "Keep it" (the focused, harmless choice) keeps the offer.
  await panel.getByRole('button', { name: 'Discard…' }).click();
  const discard = page.getByRole('dialog', { name: 'Discard the interrupted print?' });
  await discard.waitFor();
  await discard.getByRole('button', { name: 'Keep it' }).click();
  await discard.waitFor({ state: 'detached' });
  assert.equal(((await (await s.api('/api/plugin/recovery')).json()) as { available: boolean }).available, true);

  // Resume asks too, saying what will move; "Not now" sends nothing.
  await panel.getByRole('button', { name: 'Resume…' }).click();
  const ask = page.getByRole('dialog', { name: 'Resume the print?' });
  await ask.waitFor();
  assert.match((await ask.textContent()) ?? '', /homes X and Y only/);
  await ask.getByRole('button', { name: 'Not now' }).click();
  await ask.waitFor({ state: 'detached' });
  assert.ok(!rec.names().includes('PrintRecovered'), 'nothing resumed before confirming');

  await panel.getByRole('button', { name: 'Resume…' }).click();
  await ask.waitFor();
  await ask.getByRole('button', { name: 'Resume print' }).click();
  await waitFor('PrintRecovered', () => rec.events.find((e) => e.name === 'PrintRecovered'));
  await page.getByTestId('printer-state').filter({ hasText: /^Printing/ }).waitFor();
  await panel.waitFor({ state: 'detached' });
  assert.deepEqual(errors, []);
  await s.api('/api/job', { method: 'POST', json: { command: 'cancel' } });
});
