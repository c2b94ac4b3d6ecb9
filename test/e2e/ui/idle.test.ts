// A page left open costs the printer nothing: two idle tabs make no file-list requests and no M20 after the first load,
// also after the user's own refresh and an upload (which once set off a reload loop of `force=true` and M20 L).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startTestServer } from '../../helpers/server.ts';
import { buildWeb } from '../../../web/build.ts';
import { launchBrowser, openTab, watchErrors } from './browser.ts';
import { needs } from '../../helpers/tools.ts';

// The loop this guards against ran at about 3 reloads a second, each set off by a push message. The idle window is
// counted in the status messages the server pushes, not in a fixed time: with a temperature report every half second
// (each pushed), six of them (about 3 s) would have held ~9 reloads of that loop, and on a loaded machine the window
// stretches with the messages it waits for.
const IDLE_PUSHES = 6;

test('two idle tabs send no file-list requests and no M20 beyond the first load', { skip: needs('chromium') }, async (t) => {
  // Chromium starts while the server is set up.
  const launching = launchBrowser(t);
  await buildWeb({ ifStale: true });
  // No analysis: its end (MetadataAnalysisFinished) rightly reloads the list once per tab, at a moment that depends on
  // the machine's load, and would fall into the idle window when the machine is busy.
  const server = await startTestServer(t, { settings: {
    devel: { virtualPrinter: { throttle: 0.25 } },
    serial: { timeout: { temperatureAutoreport: 0.5 } },
    gcodeAnalysis: { runAt: 'never' },
  } });
  await server.access.users.addUser({ name: 'ida', password: 'pw-ida-12345', groups: ['admins', 'users'] });
  assert.equal((await server.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL' } })).status, 204);

  const browser = await launching;
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const first = await context.newPage();
  first.setDefaultTimeout(40_000);
  const errors = watchErrors(first);
  await first.goto(server.url + '/login');
  await first.getByLabel('User name').fill('ida');
  await first.getByLabel('Password').fill('pw-ida-12345');
  await first.getByRole('button', { name: 'Log in' }).click();
  await first.getByTestId('printer-state').filter({ hasText: /^Operational$/ }).waitFor();
  const second = await context.newPage();
  await second.goto(server.url + '/');
  await second.getByTestId('printer-state').filter({ hasText: /^Operational$/ }).waitFor();

  let fileRequests = 0;
  let m20 = 0;
  let pushes = 0;
  const pushWaiters: Array<() => void> = [];
  for (const page of [first, second]) {
    page.on('request', (r) => { if (new URL(r.url()).pathname.startsWith('/api/files') && r.method() === 'GET') fileRequests++; });
  }
  // What the terminal shows comes over the push socket; one tab's copy counts each line once.
  const watchTerminal = (page: Page) => page.on('websocket', (ws) => ws.on('framereceived', (f) => {
    m20 += (String(f.payload).match(/Send: (N\d+ )?M20\b/g) ?? []).length;
    if (String(f.payload).startsWith('{"current"')) {
      pushes++;
      pushWaiters.splice(0).forEach((wake) => wake());
    }
  }));
  const pushesSeen = (n: number) => new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for push message ${n} (seen ${pushes})`)), 30_000);
    const check = () => {
      if (pushes < n) return void pushWaiters.push(check);
      clearTimeout(timer);
      resolve();
    };
    check();
  });
  watchTerminal(first);
  await first.reload();
  await first.getByTestId('printer-state').filter({ hasText: /^Operational$/ }).waitFor();
  // The file manager is a page of its own; showing it asks the server for nothing (the listing is already loaded).
  await openTab(first, 'Files');
  await openTab(second, 'Files');

  // The user's own refresh asks the printer once (so the counter can see an M20 at all) and reloads each tab at most once.
  // (The reload's history message replays the M20 sent on connecting; count from here.)
  fileRequests = 0;
  m20 = 0;
  await first.getByRole('button', { name: 'Refresh files' }).click();
  const until = async (what: string, ok: () => boolean) => {
    const end = Date.now() + 10_000;
    while (!ok()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await until('the M20 of the refresh', () => m20 >= 1);
  // An upload announces itself to both tabs, which reload once each.
  const form = new FormData();
  form.append('file', new Blob(['G28\nG1 Z0.2\n']), 'idle.gcode');
  assert.equal((await server.api('/api/files/local', { method: 'POST', body: form })).status, 201);
  await first.locator('li[data-file="idle.gcode"]').waitFor();
  await second.locator('li[data-file="idle.gcode"]').waitFor();

  const [requestsBefore, m20Before] = [fileRequests, m20];
  assert.ok(requestsBefore <= 6, `a refresh and an upload cost ${requestsBefore} listings`);
  await pushesSeen(pushes + IDLE_PUSHES);
  assert.equal(fileRequests - requestsBefore, 0, 'file-list requests while idle');
  assert.equal(m20 - m20Before, 0, 'M20 lines while idle');
  assert.equal(m20Before, 1, 'the refresh sent exactly one M20');
  assert.deepEqual(errors, []);
});
