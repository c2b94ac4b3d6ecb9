// End-to-end test of the browser control panel in headless Chromium against a real server and the virtual printer.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { buildWeb } from '../../../web/build.ts';
import { launchBrowser, openTab, screenshot, stepper, until, waitForNumber, watchErrors, resizeTo } from './browser.ts';
import { needs } from '../../helpers/tools.ts';
import { SMALL_GCODE } from '../../helpers/shared-data.ts';
import { fileListSteps } from './control-panel-files.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

const GCODE = SMALL_GCODE;
const USER = 'alice';
const PASSWORD = 'correct horse battery';
const VIEWER = 'victor';

async function setUp(t: TestContext): Promise<{ server: TestServer; page: Page; errors: string[] }> {
  // Chromium starts while the server is set up.
  const launching = launchBrowser(t);
  await buildWeb({ ifStale: true });
  // A fast virtual printer keeps heating and printing within seconds: at 0.1 the bed set in the temperature step
  // (about 5 s to heat) is nearly hot when the print's M190 asks for it (a pause waits for that), and the print's moves
  // still take about 5 s, time enough to pause, resume and stop it. Temperatures reported every half second bring the
  // graph's samples and a new target to the page without waiting out the default two-second interval.
  const server = await startTestServer(t, { settings: {
    devel: { virtualPrinter: { throttle: 0.1 } },
    serial: { timeout: { temperatureAutoreport: 0.5 } },
    controls: [{ name: 'Fan', layout: 'horizontal', children: [
      { name: 'Fan at speed', command: 'M106 S%(speed)s', input: [{ name: 'Speed', parameter: 'speed', default: 255 }] },
    ] }],
  } });
  await server.access.users.addUser({ name: USER, password: PASSWORD, groups: ['admins', 'users'] });
  await server.access.users.addUser({ name: VIEWER, password: PASSWORD, groups: ['readonly'] });
  const browser = await launching;
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.setDefaultTimeout(40_000);
  return { server, page, errors: watchErrors(page) };
}

const stateText = (page: Page) => page.getByTestId('printer-state');

async function waitForState(page: Page, pattern: RegExp, timeout = 30_000): Promise<void> {
  await stateText(page).filter({ hasText: pattern }).waitFor({ timeout });
}

test('control panel: login, connect, temperatures, upload, print, pause/resume/cancel, terminal, app key', { skip: needs('chromium', 'shared-data') }, async (t) => {
  const { server, page, errors } = await setUp(t);
  const step = stepper(t, page, '');

  await step('an anonymous visitor is sent to the login page, which sets the CSRF cookie', async () => {
    await page.goto(server.url + '/');
    await page.waitForURL(/\/login/);
    const cookies = await page.context().cookies();
    assert.ok(cookies.some((c) => c.name === `csrf_token_P${server.port}`), 'CSRF cookie set');
    // A first visit points OctoPrint users at the import (#21).
    await page.getByTestId('import-hint').filter({ hasText: 'Moving from OctoPrint? Stop Gantry and run gantry import-octoprint --from ~/.octoprint --merge' }).waitFor();
    await screenshot(page, '01-login');
  });

  await step('a wrong password is refused, the right one logs in and shows the user', async () => {
    await page.getByLabel('User name').fill(USER);
    await page.getByLabel('Password').fill('wrong');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Wrong user name or password' }).waitFor();
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Remember me').check();
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(server.url + '/');
    await page.getByTestId('user-name').filter({ hasText: USER }).waitFor();
    const cookies = await page.context().cookies();
    assert.ok(cookies.some((c) => c.name === `remember_token_P${server.port}`), 'remember-me cookie set');
  });

  await step('connects to the virtual printer', async () => {
    const panel = page.getByRole('region', { name: 'Connection' });
    await panel.locator('select[name=port]').selectOption('VIRTUAL');
    await panel.getByRole('button', { name: 'Connect' }).click();
    await waitForState(page, /^Operational$/);
    await panel.getByRole('button', { name: 'Disconnect' }).waitFor();
  });

  await step('temperatures arrive on the graph; targets set in the UI (typed, and from a profile) reach the printer', async () => {
    // The bed gets its temperature from the PLA profile of the settings. It is set first: the print below waits (M190)
    // for the bed, and a pause waits for that wait to end.
    await page.locator('tr[data-heater=bed]').getByLabel('Bed profile').selectOption('PLA');
    await page.getByTestId('target-bed').filter({ hasText: '60.0°C' }).waitFor();
    await waitForNumber(page, '[data-testid=temp-graph]', { attr: 'data-points', above: 2 });
    await page.locator('.graph canvas').first().waitFor();
    const before = await page.getByTestId('actual-tool0').textContent();
    const tool = page.locator('tr[data-heater=tool0]');
    await tool.getByLabel('Tool 0 target').fill('170');
    await tool.getByRole('button', { name: 'Set', exact: true }).click();
    await page.getByTestId('target-tool0').filter({ hasText: '170.0°C' }).waitFor();
    // The hotend heats: its reading rises from what it was.
    await waitForNumber(page, '[data-testid=actual-tool0]', { above: parseFloat(before ?? '0') + 5 });
    const status = await server.api('/api/printer');
    const body = await status.json() as { temperature: { tool0: { target: number }; bed: { target: number } } };
    assert.equal(body.temperature.tool0.target, 170);
    assert.equal(body.temperature.bed.target, 60);
    await screenshot(page, '02-temperature');
  });

  await step('uploads a G-code file with a progress bar', async () => {
    await openTab(page, 'Files');
    // Slow the upload down so the progress bar is observable.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: 50 * 1024 });
    await page.getByTestId('upload-input').setInputFiles(GCODE);
    const bar = page.getByRole('progressbar', { name: 'Upload progress' });
    await bar.waitFor();
    await waitForNumber(page, '[role=progressbar][aria-label="Upload progress"]', { attr: 'aria-valuenow', above: 0, below: 100 });
    await screenshot(page, '03-upload-progress');
    await bar.waitFor({ state: 'detached', timeout: 30_000 });
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    await page.locator('li[data-file="prusaslicer-2.6.1_small.gcode"]').waitFor();
    const res = await server.api('/api/files/local/prusaslicer-2.6.1_small.gcode');
    assert.equal(res.status, 200);
  });

  await step('starts a print and shows its progress', async () => {
    await openTab(page, 'Files');
    const row = page.locator('li[data-file="prusaslicer-2.6.1_small.gcode"]');
    await row.getByRole('button', { name: 'Print' }).click();
    await waitForState(page, /^(Starting|Printing)/);
    await page.getByTestId('job-file').filter({ hasText: 'prusaslicer-2.6.1_small.gcode' }).waitFor();
    await waitForNumber(page, '[data-testid=job-progress]', { above: 0 }, 60_000);
    await screenshot(page, '04-printing');
  });

  await step('pauses, resumes and cancels (with confirmation)', async () => {
    const job = page.getByRole('region', { name: 'Job' });
    await job.getByRole('button', { name: 'Pause' }).click();
    await waitForState(page, /^Paused$/);
    await job.getByRole('button', { name: 'Resume' }).click();
    await waitForState(page, /^Printing/);
    await job.getByRole('button', { name: 'Stop…' }).click();
    const dialog = page.getByRole('form', { name: 'Stop the print?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Stop print' }).click();
    await waitForState(page, /^Operational$/, 60_000);
  });

  await fileListSteps(step, page, server, GCODE);

  await step('uploads to the printer\'s SD card and lists the SD files', async () => {
    await openTab(page, 'Files');
    const dir = await tempDir(t, 'gantry-ui-sd-');
    const file = join(dir, 'sdpart.gcode');
    await writeFile(file, 'G28\nG1 Z0.2\nG1 X10 Y10 E1\n');
    const files = page.getByRole('region', { name: 'Files' });
    await files.getByLabel("Upload to the printer's SD card").check();
    await page.getByTestId('upload-input').setInputFiles(file);
    await page.getByTestId('sd-list').locator('li.file').filter({ hasText: /sdpart/i }).waitFor({ timeout: 30_000 });
    await files.getByLabel("Upload to the printer's SD card").uncheck();
  });

  await step('the G-code preview draws the layers of the file', async () => {
    await openTab(page, 'G-code');
    await page.getByTestId('preview-file').selectOption('prusaslicer-2.6.1_small.gcode');
    const canvas = page.getByTestId('preview-canvas');
    await canvas.waitFor();
    // The sample holds the purge line (Z 0.2) and one object layer (Z 0.3).
    assert.equal(Number(await canvas.getAttribute('data-layers')), 2);
    await page.getByRole('slider', { name: 'Layer' }).fill('1');
    await page.getByTestId('preview-layer').filter({ hasText: 'Layer 2 / 2 · Z 0.30 mm' }).waitFor();
    await screenshot(page, '06-gcode-preview');
  });

  await step('a command sent in the terminal gets its reply in the log', async () => {
    await openTab(page, 'Terminal');
    await page.getByLabel('Command').fill('m115');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByTestId('terminal-log').filter({ hasText: 'Send: M115' }).waitFor();
    await page.getByTestId('terminal-log').filter({ hasText: /Recv: FIRMWARE_NAME/ }).waitFor();
    // The command history comes back with the arrow key.
    await page.getByLabel('Command').press('ArrowUp');
    assert.equal(await page.getByLabel('Command').inputValue(), 'm115');
    await page.getByLabel('Command').fill('');
    // The temperature filter from the settings hides the firmware's temperature reports.
    const log = page.getByTestId('terminal-log');
    const tempLine = /Recv:\s+(ok\s+)?T:\d/;
    await log.filter({ hasText: tempLine }).waitFor();
    await page.getByLabel('Suppress temperature messages').check();
    assert.doesNotMatch(await log.textContent() ?? '', tempLine);
    await page.getByLabel('Suppress temperature messages').uncheck();
    await screenshot(page, '07-terminal');
  });

  await step('the control tab jogs the print head', async () => {
    await openTab(page, 'Control');
    await page.getByRole('button', { name: 'Home all' }).click();
    await page.getByRole('radio', { name: '10', exact: true }).click();
    await page.getByRole('button', { name: 'X+' }).click();
    await openTab(page, 'Terminal');
    await page.getByTestId('terminal-log').filter({ hasText: /Send: (N\d+ )?G1 X10/ }).waitFor();
    await openTab(page, 'Control');
    // A custom control from the settings sends its command with the value of its input.
    const custom = page.getByRole('region', { name: 'Custom controls' });
    await custom.getByLabel('Speed').fill('128');
    await custom.getByRole('button', { name: 'Fan at speed' }).click();
    await openTab(page, 'Terminal');
    await page.getByTestId('terminal-log').filter({ hasText: /Send: (N\d+ )?M106 S128/ }).waitFor();
    await openTab(page, 'Control');
    // Feed rate, flow rate and fan.
    const rates = page.getByRole('region', { name: 'Rates' });
    await rates.getByLabel('Feed rate').fill('150');
    await rates.getByRole('button', { name: 'Set' }).first().click();
    await rates.getByLabel('Flow rate').fill('90');
    await rates.getByRole('button', { name: 'Set' }).last().click();
    await page.getByRole('button', { name: 'Fan off' }).click();
    await openTab(page, 'Terminal');
    for (const sent of [/Send: (N\d+ )?M220 S150/, /Send: (N\d+ )?M221 S90/, /Send: (N\d+ )?M107/]) {
      await page.getByTestId('terminal-log').filter({ hasText: sent }).waitFor();
    }
    await openTab(page, 'Control');
    await screenshot(page, '08-control');
  });

  await step('an app-key request made through the API is approved in the browser', async () => {
    const req = await fetch(server.url + '/plugin/appkeys/request', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ app: 'UITestSlicer' }),
    });
    assert.equal(req.status, 201);
    const { app_token: token } = await req.json() as { app_token: string };
    // The app keeps polling, as real slicers do (a request not polled for 5 s is dropped).
    let apiKey: string | undefined;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const r = await fetch(`${server.url}/plugin/appkeys/request/${token}`);
        if (r.status === 200) {
          apiKey = ((await r.json()) as { api_key: string }).api_key;
          return;
        }
        if (r.status !== 202) throw new Error(`poll answered ${r.status}`);
        await new Promise((res) => setTimeout(res, 500));
      }
    })();
    try {
      await page.getByTestId('appkey-app').filter({ hasText: 'UITestSlicer' }).waitFor();
      await screenshot(page, '09-appkey-request');
      await page.getByRole('button', { name: 'Allow' }).click();
      await poller;
    } finally {
      polling = false;
    }
    assert.ok(apiKey, 'the app received a key');
    const check = await server.api('/api/currentuser', { key: apiKey });
    assert.equal(((await check.json()) as { name: string }).name, USER);
  });

  await step('settings pages render and save', async () => {
    await openTab(page, 'Settings');
    const name = page.getByRole('form', { name: 'Printer' }).getByLabel('Printer name');
    await name.fill('Workshop');
    await page.getByRole('form', { name: 'Printer' }).getByRole('button', { name: 'Save' }).click();
    await page.locator('.brand').filter({ hasText: 'Workshop' }).waitFor();
    const s = await (await server.api('/api/settings')).json() as { appearance: { name: string } };
    assert.equal(s.appearance.name, 'Workshop');
    await screenshot(page, '10-settings');
    // Each settings form saves what it shows without an error from the server.
    for (const section of ['Serial connection', 'Temperatures', 'GCODE scripts', 'Webcam']) {
      await page.locator('.settings-nav').getByRole('button', { name: section }).click();
      const saves = page.waitForResponse((r) => r.url().endsWith('/api/settings') && r.request().method() === 'POST');
      await page.getByRole('form', { name: section }).getByRole('button', { name: 'Save' }).click();
      assert.equal((await saves).status(), 200, `saving ${section}`);
    }
    await page.getByRole('form', { name: 'Webcam' }).getByLabel('Stream URL').fill('http://127.0.0.1:9/stream');
    await page.getByRole('form', { name: 'Webcam' }).getByRole('button', { name: 'Save' }).click();
    await until('the webcam URL to be stored', async () => {
      const st = await (await server.api('/api/settings')).json() as { webcam?: { streamUrl?: string } };
      return st.webcam?.streamUrl === 'http://127.0.0.1:9/stream';
    });
    // The profile in use: the filament loaded and the machine's limits reach the stored profile; emptied, they are gone.
    await page.locator('.settings-nav').getByRole('button', { name: 'Printer profile' }).click();
    const profileForm = page.getByRole('form', { name: 'Printer profile' });
    await profileForm.getByLabel('Filament diameter').fill('2.85');
    await profileForm.getByLabel('Print acceleration (mm/s²)').fill('1200');
    await profileForm.getByLabel('Max acceleration X (mm/s²)').fill('800');
    await profileForm.getByRole('button', { name: 'Save' }).click();
    type StoredProfile = { extruder: { filamentDiameter?: number }; machineLimits?: Record<string, unknown> };
    const stored = async (): Promise<StoredProfile> => await (await server.api('/api/printerprofiles/_default')).json() as StoredProfile;
    await until('the profile to be saved', async () => (await stored()).extruder.filamentDiameter === 2.85);
    assert.deepEqual((await stored()).machineLimits, { maxAcceleration: { x: 800 }, printAcceleration: 1200 });
    await screenshot(page, '10b-settings-profile');
    // The form is rebuilt from the saved profile; emptying the fields clears them.
    await until('the form to show the saved value', async () => (await profileForm.getByLabel('Print acceleration (mm/s²)').inputValue()) === '1200');
    await profileForm.getByLabel('Filament diameter').fill('');
    await profileForm.getByLabel('Print acceleration (mm/s²)').fill('');
    await profileForm.getByLabel('Max acceleration X (mm/s²)').fill('');
    await profileForm.getByRole('button', { name: 'Save' }).click();
    await until('the profile to be cleared', async () => (await stored()).extruder.filamentDiameter === undefined);
    assert.equal((await stored()).machineLimits, undefined);
    for (const section of ['API keys', 'Access control', 'System']) {
      await page.locator('.settings-nav').getByRole('button', { name: section }).click();
      await page.locator('.settings-body .section').first().waitFor();
    }
    await page.locator('.settings-nav').getByRole('button', { name: 'Access control' }).click();
    await page.getByRole('cell', { name: USER, exact: true }).waitFor();
    await screenshot(page, '11-settings-users');
  });

  await step('works on a phone-sized screen', async () => {
    await resizeTo(page, 390, 844);
    await openTab(page, 'Temperature');
    await stateText(page).waitFor();
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    assert.ok(overflow <= 1, `no horizontal scrolling (overflow ${overflow}px)`);
    await screenshot(page, '12-phone');
  });

  await step('logs out', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(/\/login/);
    await page.getByRole('button', { name: 'Log in' }).waitFor();
    assert.equal(await page.getByTestId('import-hint').count(), 0, 'the import hint is for the first visit only');
    const res = await page.request.get(server.url + '/api/currentuser');
    assert.equal(((await res.json()) as { name: string | null }).name, null);
  });

  await step('a read-only user sees the printer but not the controls they may not use', async () => {
    await resizeTo(page, 1280, 900);
    // The remember-me cookie of the previous user must not log anyone back in after a logout.
    await page.getByLabel('User name').fill(VIEWER);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByTestId('user-name').filter({ hasText: VIEWER }).waitFor();
    await page.getByRole('tab', { name: 'Temperature' }).waitFor();
    assert.equal(await page.getByRole('tab', { name: 'Control' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /^(Connect|Disconnect)$/ }).count(), 0);
    assert.equal(await page.getByTestId('upload-input').count(), 0);
    assert.equal(await page.getByRole('region', { name: 'Job' }).getByRole('button').count(), 0);
    await openTab(page, 'Settings');
    await page.getByText('You can view these settings').waitFor();
    assert.ok(await page.getByRole('form', { name: 'Printer' }).getByRole('button', { name: 'Save' }).isDisabled());
    await screenshot(page, '13-read-only');
  });

  assert.deepEqual(errors, [], 'no script errors in the page');
});
