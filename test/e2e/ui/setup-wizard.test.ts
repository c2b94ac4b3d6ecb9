// The first-run setup wizard (#59) in headless Chromium, from a fresh base dir to a connected virtual printer: the first
// start's admin logs in with the printed password and is led through their own password, the printer profile,
// connecting and testing the printer, the camera with a live check and this machine's system commands; it does not
// open again after that, and Settings opens it again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startGantry } from '../../../src/main.ts';
import { buildWeb } from '../../../web/build.ts';
import { tempDir } from '../../helpers/temp-dir.ts';
import { needs } from '../../helpers/tools.ts';
import { launchBrowser, logIn, openTab, stepper, watchErrors } from './browser.ts';

/** A first start as the CLI does it, with what it prints (the admin's password) captured. */
async function firstStart(baseDir: string) {
  const write = process.stdout.write.bind(process.stdout);
  let out = '';
  process.stdout.write = ((chunk: string | Uint8Array) => { out += chunk.toString(); return true; }) as typeof process.stdout.write;
  try {
    const g = await startGantry({ host: '127.0.0.1', port: 0, baseDir, settings: { devel: { virtualPrinter: { throttle: 0.1 } } } });
    return { g, out };
  } finally {
    process.stdout.write = write;
  }
}

test('setup wizard: a fresh install to a connected printer', { skip: needs('chromium') }, async (t) => {
  const launching = launchBrowser(t);
  await buildWeb({ ifStale: true });
  const dir = await tempDir(t, 'gantry-setup-');
  const { g, out } = await firstStart(dir);
  t.after(() => g.stop());
  const printed = /password:\s+(\S+)/.exec(out)?.[1];
  assert.ok(printed, out);
  const key = g.config.current.api.key ?? '';
  const api = (path: string) => fetch(g.url + path, { headers: { 'X-Api-Key': key } }).then((r) => r.json() as Promise<Record<string, unknown>>);

  const browser = await launching;
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.setDefaultTimeout(40_000);
  const errors = watchErrors(page);
  const step = stepper(t, page, 'setup-');
  const wizard = page.getByRole('dialog', { name: 'Set up Gantry' });
  const NEW = 'my-own-password-1';

  await step('the first login of a new install opens the wizard', async () => {
    await logIn(page, g.url, 'admin', printed);
    await wizard.waitFor();
    assert.equal(await wizard.locator('[aria-current=step]').textContent(), 'Password');
  });

  await step('1. the admin chooses a password (8 characters at least, typed twice)', async () => {
    const form = wizard.getByRole('form', { name: 'Admin password' });
    await form.getByLabel('New password').fill('short');
    await form.getByLabel('Repeat the password').fill('short');
    await form.getByRole('button', { name: 'Save and continue' }).click();
    await form.locator('.field-error', { hasText: 'New password: must have at least 8 characters' }).waitFor();
    await form.getByLabel('New password').fill(NEW);
    await form.getByRole('button', { name: 'Save and continue' }).click();
    await form.locator('.field-error', { hasText: 'Repeat the password: the two passwords differ' }).waitFor();
    await form.getByLabel('Repeat the password').fill(NEW);
    await form.getByRole('button', { name: 'Save and continue' }).click();
    await wizard.getByRole('form', { name: 'Printer' }).waitFor();
    assert.ok(await g.access.checkCredentials('admin', NEW), 'the new password works');
    assert.equal(await g.access.checkCredentials('admin', printed), undefined, 'the printed one no longer does');
  });

  await step('2. the printer profile: bed size, nozzle, heated bed', async () => {
    const form = wizard.getByRole('form', { name: 'Printer' });
    await form.getByLabel('Bed width').fill('250');
    await form.getByLabel('Bed depth').fill('210');
    await form.getByLabel('Build height').fill('220');
    await form.getByLabel('Nozzle diameter (mm)').fill('0');
    await form.getByRole('button', { name: 'Save and continue' }).click();
    await form.locator('.field-error', { hasText: 'Nozzle diameter (mm): must be at least 0.05' }).waitFor();
    await form.getByLabel('Nozzle diameter (mm)').fill('0.6');
    await form.getByLabel('Heated bed').uncheck();
    await form.getByRole('button', { name: 'Save and continue' }).click();
    await wizard.getByRole('form', { name: 'Connect the printer' }).waitFor();
    const p = await api('/api/printerprofiles/_default') as { volume: { width: number; depth: number; height: number }; extruder: { nozzleDiameter: number }; heatedBed: boolean };
    assert.deepEqual([p.volume.width, p.volume.depth, p.volume.height, p.extruder.nozzleDiameter, p.heatedBed], [250, 210, 220, 0.6, false]);
  });

  await step('3. connect the printer and test that it answers', async () => {
    const form = wizard.getByRole('form', { name: 'Connect the printer' });
    await form.getByLabel('Serial port').selectOption('VIRTUAL');
    await form.getByRole('button', { name: 'Connect' }).click();
    await form.getByTestId('setup-printer-state').filter({ hasText: 'Operational' }).waitFor({ timeout: 60_000 });
    await form.getByRole('button', { name: /Test: ask the firmware/ }).click();
    await form.getByTestId('setup-printer-answer').filter({ hasText: 'FIRMWARE_NAME' }).waitFor({ timeout: 60_000 });
    const c = await api('/api/connection') as { current: { state: string; port: string }; options: { autoconnect: boolean; portPreference: string } };
    assert.equal(c.current.port, 'VIRTUAL');
    assert.equal(c.options.portPreference, 'VIRTUAL', 'saved as the default port');
    assert.equal(c.options.autoconnect, true);
    await form.getByRole('button', { name: 'Continue' }).click();
    await wizard.getByRole('form', { name: 'Camera' }).waitFor();
  });

  await step('4. the camera URL is checked live before it is saved', async () => {
    const form = wizard.getByRole('form', { name: 'Camera' });
    const url = form.getByLabel('Stream or snapshot URL');
    await url.fill(`${g.url}/no-camera-here.jpg`);
    await form.getByRole('button', { name: 'Check the camera' }).click();
    await form.getByTestId('camera-check').filter({ hasText: 'No picture came from this URL' }).waitFor();
    // Any URL that sends a picture passes the check; the server's own icon stands in for a camera's snapshot.
    await url.fill(`${g.url}/favicon.ico`);
    await form.getByRole('button', { name: 'Check the camera' }).click();
    await form.getByTestId('camera-check').filter({ hasText: 'The camera sends pictures' }).waitFor();
    await form.getByRole('button', { name: 'Save and continue' }).click();
    await wizard.getByRole('form', { name: 'System commands' }).waitFor();
    const s = await api('/api/settings') as { webcam: { streamUrl: string } };
    assert.equal(s.webcam.streamUrl, `${g.url}/favicon.ico`);
  });

  await step('5. the system commands come filled in for this machine, and the System menu offers them', async () => {
    const form = wizard.getByRole('form', { name: 'System commands' });
    const reboot = await form.getByLabel('Reboot the machine').inputValue();
    const shutdown = await form.getByLabel('Shut the machine down').inputValue();
    assert.match(reboot, /reboot|shutdown -r/);
    assert.match(shutdown, /poweroff|shutdown -h/);
    await form.getByRole('button', { name: 'Save and finish' }).click();
    await wizard.waitFor({ state: 'detached' });
    const s = await api('/api/settings') as { server: { commands: { systemRestartCommand: string; systemShutdownCommand: string } } };
    assert.deepEqual([s.server.commands.systemRestartCommand, s.server.commands.systemShutdownCommand], [reboot, shutdown]);
    await page.locator('button[aria-controls="system-menu"]').click();
    const menu = page.getByRole('menu');
    await menu.getByRole('menuitem', { name: 'Reboot system' }).waitFor();
    await menu.getByRole('menuitem', { name: 'Shutdown system' }).waitFor();
    await page.keyboard.press('Escape');
  });

  await step('the wizard does not open again after a reload; Settings opens it, and it can be skipped', async () => {
    const user = await api('/api/access/users/admin/settings') as { gantry?: { setup?: string } };
    assert.equal(user.gantry?.setup, 'done');
    await page.reload();
    await page.getByTestId('printer-state').filter({ hasText: 'Operational' }).waitFor();
    assert.equal(await wizard.count(), 0);
    await openTab(page, 'Settings');
    await page.getByRole('button', { name: 'Setup wizard…' }).click();
    await wizard.waitFor();
    await wizard.getByRole('button', { name: 'Skip setup' }).click();
    await wizard.waitFor({ state: 'detached' });
  });

  t.after(() => assert.deepEqual(errors, []));
});
