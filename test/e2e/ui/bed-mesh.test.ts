// The Bed mesh page in headless Chromium: Probe bed on the virtual printer draws the 3D surface and the heat map with
// the mesh's range, loaded lazily (not in the main bundle); a second probe after the bed changed can be compared.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer } from '../../helpers/connected-server.ts';
import { buildWeb } from '../../../web/build.ts';
import { launchBrowser, openTab, screenshot, stepper, watchErrors, logIn, scriptsFetched } from './browser.ts';
import { needs } from '../../helpers/tools.ts';

test('Bed mesh page: probe, 3D view and heat map with the colour scale, history', { skip: needs('chromium') }, async (t) => {
  const launching = launchBrowser(t);
  await buildWeb({ ifStale: true });
  const server = await connectedServer(t);
  await server.access.users.addUser({ name: 'ada', password: 'pw-ada-12345', groups: ['admins', 'users'] });
  const browser = await launching;
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.setDefaultTimeout(30_000);
  const errors = watchErrors(page);
  const step = stepper(t, page, 'bed-mesh-');
  const scripts = scriptsFetched(page);

  await step('the page loads its code when opened and says there is no mesh yet', async () => {
    await logIn(page, server.url, 'ada', 'pw-ada-12345');
    await page.getByRole('tab', { name: 'Temperature', exact: true }).waitFor();
    assert.ok(!scripts.some((s) => s.includes('BedMeshTab')), 'not loaded before the page is opened');
    await openTab(page, 'Bed mesh');
    await page.getByText('No bed mesh yet.').waitFor();
    assert.ok(scripts.some((s) => s.includes('BedMeshTab')));
  });

  await step('Probe bed draws the mesh in 3D, with its range', async () => {
    await page.getByRole('button', { name: 'Probe bed' }).click();
    await page.getByRole('img', { name: /3D surface/ }).waitFor();
    const latest = (await (await server.api('/api/plugin/bedmesh')).json()) as { latest: { range: number } };
    await page.getByText(`range ${latest.latest.range.toFixed(3)} mm`).waitFor();
    await screenshot(page, 'bed-mesh-3d');
  });

  await step('the heat map shows each point\'s value', async () => {
    await page.getByRole('button', { name: 'Heat map' }).click();
    await page.getByRole('img', { name: 'Bed mesh heat map' }).waitFor();
    const painted = await page.getByRole('img', { name: 'Bed mesh heat map' }).evaluate((el) => {
      // Runs in the page: the canvas, typed by what is used of it (the tests' types have no DOM).
      const c = el as unknown as { width: number; height: number; getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } };
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let coloured = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && (d[i] !== d[i + 2])) coloured++;
      return coloured;
    });
    assert.ok(painted > 1000, `the heat map is painted (${painted} coloured pixels)`);
    await page.getByRole('table', { name: 'Mesh history' }).getByRole('row').nth(1).waitFor();
  });
  assert.deepEqual(errors, []);
});
