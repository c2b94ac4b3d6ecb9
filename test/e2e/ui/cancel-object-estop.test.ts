// The UI's cancel-object and emergency stop against a printing fakefw on a pty (issue #54): an object of the list is
// cancelled with a click and a confirmation, the list shows it cancelled and the server's objlist agrees; then the
// header's E-stop, confirmed, puts M112 on the printer's wire and the state shown is the server's (not "Printing").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../../helpers/server.ts';
import { buildWeb } from '../../../web/build.ts';
import { waitFor } from '../../printer/helpers.ts';
import { uploadFile, recorder, type Json } from '../../printer/job/helpers.ts';
import { command, fakeFwPrinter } from '../../recovery/fakefw.ts';
import { launchBrowser, logIn, screenshot, watchErrors } from './browser.ts';
import { needs } from '../../helpers/tools.ts';

/** Three labelled objects (PrusaSlicer's comment style) over `layers` layers, absolute E. */
function plate(layers: number): string {
  const out = ['G28', 'G90', 'M82', 'G92 E0'];
  let e = 0;
  for (let l = 0; l < layers; l++) {
    out.push(`G1 Z${((l + 1) * 0.2).toFixed(2)} F600`);
    for (const [name, x0] of [['left', 10], ['middle', 40], ['right', 70]] as const) {
      out.push(`; printing object ${name}`);
      for (let i = 0; i < 40; i++) {
        e += 0.02;
        out.push(`G1 X${x0 + (i % 2) * 10} Y${10 + (i % 20) * 0.5} E${e.toFixed(4)} F1800`);
      }
      out.push(`; stop printing object ${name}`);
    }
  }
  out.push('M104 S0', '');
  return out.join('\n');
}

test('UI: cancel an object from the list (confirmed), then the emergency stop in the header (confirmed) reaches the printer',
  { skip: needs('chromium') }, async (t) => {
    const launching = launchBrowser(t);
    await buildWeb({ ifStale: true });
    // -d: 4 ms a line, so the print runs for minutes unless stopped.
    const { port, fw } = await fakeFwPrinter(t, 'gantry-ui-estop-', ['-d', '4000']);
    const s = await startTestServer(t, { settings: { serial: { additionalPorts: [port], log: false } } });
    await s.access.users.addUser({ name: 'olga', password: 'pw-olga-12345', groups: ['admins', 'users'] });
    assert.equal((await s.api('/api/connection', { method: 'POST', json: { command: 'connect', port, baudrate: 115200 } })).status, 204);
    await waitFor('Operational', () => s.printer.isOperational() || undefined, 30_000);
    const rec = recorder(s);
    assert.equal((await uploadFile(s, 'plate.gcode', plate(60))).status, 201);
    await waitFor('objects in the analysis', async () => {
      const f = await (await s.api('/api/files/local/plate.gcode')).json() as Json;
      return f.gcodeAnalysis?.gantry?.objects?.length === 3 || undefined;
    }, 60_000);
    assert.equal((await s.api('/api/files/local/plate.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);

    const browser = await launching;
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(40_000);
    const errors = watchErrors(page);
    await logIn(page, s.url, 'olga', 'pw-olga-12345');
    await page.getByTestId('printer-state').filter({ hasText: /^Printing/ }).waitFor();

    // Cancel "middle" from the list: nothing happens before the confirmation.
    const panel = page.getByTestId('cancel-objects');
    await panel.getByRole('button', { name: 'Cancel middle' }).click();
    const ask = page.getByRole('dialog', { name: 'Cancel object' });
    await ask.waitFor();
    const objlist = async () => ((await (await s.api('/api/plugin/cancelobject', { method: 'POST', json: { command: 'objlist' } })).json()) as Json).list as Json[];
    assert.equal((await objlist()).find((o) => o.object === 'middle')!.cancelled, false, 'not before the confirmation');
    await ask.getByRole('button', { name: 'Cancel object' }).click();
    await ask.waitFor({ state: 'detached' });
    await panel.getByTestId('object-row').filter({ hasText: 'middle (cancelled)' }).waitFor();
    const list = await objlist();
    assert.deepEqual(list.map((o) => [o.object, o.cancelled]), [['left', false], ['middle', true], ['right', false]]);
    assert.equal(await panel.getByRole('button', { name: 'Cancel middle' }).count(), 0, 'no cancel button for a cancelled object');
    await screenshot(page, 'cancel-object');

    // The emergency stop: in the header while printing, asks first, then M112 goes to the printer.
    const estop = page.getByTestId('emergency-stop');
    await estop.click();
    const stop = page.getByRole('dialog', { name: 'Emergency stop' });
    await stop.waitFor();
    await stop.getByRole('button', { name: 'Stop now' }).click();
    await waitFor('M112 at the printer', () => fw.received.map(command).includes('M112') || undefined, 30_000);
    await waitFor('the print ended', () => rec.names().some((n) => n === 'PrintFailed' || n === 'PrintCancelled') || undefined, 30_000);
    // The page shows what the server says, and that is not printing any more.
    const server = ((await (await s.api('/api/connection')).json()) as Json).current.state as string;
    assert.doesNotMatch(server, /Printing/);
    await page.getByTestId('printer-state').filter({ hasText: server }).waitFor();
    assert.doesNotMatch((await page.getByTestId('printer-state').textContent()) ?? '', /Printing/);
    await screenshot(page, 'emergency-stop');
    assert.deepEqual(errors, []);
  });
