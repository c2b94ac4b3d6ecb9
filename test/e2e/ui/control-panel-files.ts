// The file-list part of the control-panel scenario (test/e2e/ui/control-panel.test.ts): analysis shown, replace or keep,
// drag-and-drop, folders, moves, deletes, and a file under analysis; it runs on that scenario's page and server.
import assert from 'node:assert/strict';
import { openAsBlob } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Page } from 'playwright-core';
import type { TestServer } from '../../helpers/server.ts';
import { GCODE_DIR } from '../../helpers/shared-data.ts';
import { openTab, screenshot, type stepper } from './browser.ts';

/** Runs on a logged-in admin's page with the printer connected and `gcode` uploaded and analysed. */
export async function fileListSteps(step: ReturnType<typeof stepper>, page: Page, server: TestServer, gcode: string): Promise<void> {
  await step('files: analysis shown, drag-and-drop upload, new folder, move into it, delete', async () => {
    await openTab(page, 'Files');
    const files = page.getByRole('region', { name: 'Files' });
    await files.locator('li[data-file="prusaslicer-2.6.1_small.gcode"] button.name').click();
    await files.getByText('Estimated time').waitFor();
    // The file's details (a definition list), not the table's column header of the same name.
    await files.locator('dt', { hasText: 'Filament' }).waitFor();
    // Uploading a file that exists asks first; declining keeps the file as it is.
    const before = ((await (await server.api('/api/files/local/prusaslicer-2.6.1_small.gcode')).json()) as { date: number }).date;
    await page.getByTestId('upload-input').setInputFiles(gcode);
    await page.getByRole('form', { name: 'Replace file' }).getByRole('button', { name: 'Keep it' }).click();
    assert.equal(await page.getByRole('progressbar', { name: 'Upload progress' }).count(), 0);
    const after = ((await (await server.api('/api/files/local/prusaslicer-2.6.1_small.gcode')).json()) as { date: number }).date;
    assert.equal(after, before);
    // A file dropped onto the panel is uploaded like a chosen one.
    await page.evaluate(`(() => {
      const dt = new DataTransfer();
      dt.items.add(new File(['G28\\nG1 Z0.2\\nG1 X10 Y10 E1\\n'], 'dropped.gcode', { type: 'text/plain' }));
      const target = document.querySelector('section.files');
      target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    })()`);
    const dropped = files.locator('li[data-file="dropped.gcode"]');
    await dropped.waitFor();
    await files.getByRole('button', { name: 'New folder' }).click();
    await page.getByRole('form', { name: 'New folder' }).locator('input').fill('parts');
    await page.getByRole('form', { name: 'New folder' }).getByRole('button', { name: 'Create' }).click();
    await files.getByRole('button', { name: '📁 parts' }).waitFor();
    await dropped.locator('button.name').click();
    // The prompt must carry its initial text from its very first render: text typed before a later update was
    // once overwritten by it, so the move went nowhere. Record what the input holds when it enters the page.
    await page.evaluate(`(() => {
      window.__firstPromptValue = undefined;
      const seen = new MutationObserver(() => {
        const input = document.querySelector('form.dialog input');
        if (input && window.__firstPromptValue === undefined) { window.__firstPromptValue = input.value; seen.disconnect(); }
      });
      seen.observe(document.body, { childList: true, subtree: true });
    })()`);
    await dropped.getByRole('button', { name: 'Move' }).click();
    await page.getByRole('form', { name: 'Move or rename' }).locator('input').waitFor();
    assert.equal(await page.evaluate('window.__firstPromptValue'), 'dropped.gcode');
    await page.getByRole('form', { name: 'Move or rename' }).locator('input').fill('parts');
    await page.getByRole('form', { name: 'Move or rename' }).getByRole('button', { name: 'Move' }).click();
    await dropped.waitFor({ state: 'detached' });
    await files.getByRole('button', { name: '📁 parts' }).click();
    await files.locator('li[data-file="parts/dropped.gcode"]').waitFor();
    assert.equal((await server.api('/api/files/local/parts/dropped.gcode')).status, 200);
    await screenshot(page, '05-files-folder');
    await files.getByRole('button', { name: 'local' }).click();
    await files.locator('li.folder').filter({ hasText: 'parts' }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('form', { name: 'Delete' }).getByRole('button', { name: 'Delete' }).click();
    await files.getByRole('button', { name: '📁 parts' }).waitFor({ state: 'detached' });
    assert.equal((await server.api('/api/files/local/parts')).status, 404);
  });

  await step('files: a file without analysis says pending, then shows the progress the server reports', async () => {
    await openTab(page, 'Files');
    const files = page.getByRole('region', { name: 'Files' });
    // With analysis off the upload stays unanalysed; the progress comes from the server's push channel as it would
    // for a long analysis (the server side of it is tested in test/files/analysis/machine-limits.test.ts).
    await server.config.patch({ gcodeAnalysis: { runAt: 'never' } });
    const form = new FormData();
    form.append('file', new Blob(['G28\nG1 Z0.2\nG1 X10 Y10 E1\n']), 'waiting.gcode');
    assert.equal((await server.api('/api/files/local', { method: 'POST', body: form })).status, 201);
    const row = files.locator('li[data-file="waiting.gcode"]');
    await row.locator('button.name').click();
    await row.getByText('pending').waitFor();
    server.push.sendPlugin('gantry', { type: 'analysisProgress', origin: 'local', path: 'waiting.gcode', name: 'waiting.gcode', progress: 0.42 },
      { permissions: ['FILES_LIST'] });
    await row.getByText('analysing, 42 %').waitFor();
    await server.config.patch({ gcodeAnalysis: { runAt: 'idle' } });
    assert.equal((await server.api('/api/files/local/waiting.gcode', { method: 'DELETE' })).status, 204);
    await row.waitFor({ state: 'detached' });
  });

  await step('a file still being analysed says so, and can be loaded, printed, moved and deleted', async () => {
    await openTab(page, 'Files');
    // The server prints a file under analysis (it sets the analysis aside) and deletes or moves one (it cancels the
    // analysis), so only a running job may turn those buttons off. They were off while the file was analysed (it is in
    // the push's busyFiles then): a click right after an upload landed on a disabled button and did nothing. The
    // corpus's largest file twice over (72 MB) takes longer to analyse than the page needs to list the file and open
    // its row; every change of the row is recorded as it happens.
    await page.evaluate(`(() => {
      window.rowStates = [];
      const on = (li, label) => !([...li.querySelectorAll('button')].find((b) => b.textContent === label)?.disabled ?? true);
      new MutationObserver(() => {
        const li = document.querySelector('section.files li[data-file="analysed-slowly.gcode"]');
        if (li?.querySelector('.details')) window.rowStates.push({ analysing: li.querySelector('.muted').textContent.includes('analysing…'),
          load: on(li, 'Load'), print: on(li, 'Print'), move: on(li, 'Move'), delete: on(li, 'Delete') });
      }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    })()`);
    const big = await openAsBlob(join(GCODE_DIR, 'prusaslicer-2.5.0-debian_vase_0.1mm_generated.gcode'));
    const form = new FormData();
    form.append('file', new Blob([big, big]), 'analysed-slowly.gcode');
    assert.equal((await server.api('/api/files/local', { method: 'POST', body: form })).status, 201);
    const row = page.getByRole('region', { name: 'Files' }).locator('li[data-file="analysed-slowly.gcode"]');
    await row.locator('button.name').click();
    // Analysing, then analysed.
    await page.waitForFunction('(() => { const s = window.rowStates; return s.some((x) => x.analysing) && !s[s.length - 1].analysing; })()', undefined, { timeout: 60_000 });
    const states = await page.evaluate('window.rowStates') as Array<Record<string, boolean>>;
    const all = { analysing: true, load: true, print: true, move: true, delete: true };
    assert.deepEqual(states.filter((x) => x.analysing && !isDeepStrictEqual(x, all)), [], 'every button stays on while the file is analysed');
    await row.getByText('Estimated time').waitFor();
    assert.equal((await server.api('/api/files/local/analysed-slowly.gcode', { method: 'DELETE' })).status, 204);
    await row.waitFor({ state: 'detached' });
  });

  await step('files: a folder of 230 files shows 200 rows and the rest on request; a search or another order starts over', async () => {
    await openTab(page, 'Files');
    const dir = join(server.baseDir, 'uploads', 'many');
    await mkdir(dir);
    for (let i = 0; i < 230; i++) await writeFile(join(dir, `part_${i}.gcode`), 'G28\n');
    const files = page.getByRole('region', { name: 'Files' });
    await files.getByRole('button', { name: 'Refresh files' }).click();
    await files.getByRole('button', { name: '📁 many' }).click();
    const rows = files.locator('[data-testid=file-list] li[data-file]');
    const more = files.getByRole('button', { name: /^Show \d+ more/ });
    await more.waitFor();
    assert.equal(await rows.count(), 200);
    assert.equal(await more.innerText(), 'Show 30 more (30 not shown)');
    await more.click();
    await more.waitFor({ state: 'detached' });
    assert.equal(await rows.count(), 230);
    // A search is a new view: its first rows only (part_1, part_10…19, part_100…199: 111, all shown).
    await files.getByLabel('Search files').fill('part_1');
    await files.locator('[data-testid=file-list] li[data-file="many/part_199.gcode"]').waitFor();
    assert.equal(await rows.count(), 111);
    await files.getByLabel('Search files').fill('');
    await files.locator('[data-testid=file-list] li[data-file="many/part_229.gcode"]').waitFor();
    assert.equal(await rows.count(), 230, 'back in the folder shown whole: still whole');
    const order = await files.getByLabel('Sort files by').inputValue();
    await files.getByLabel('Sort files by').selectOption('size');
    await more.waitFor();
    assert.equal(await rows.count(), 200, 'another order: the first 200 again');
    await files.getByLabel('Sort files by').selectOption(order);
    await files.getByRole('button', { name: 'local' }).click();
    assert.equal((await server.api('/api/files/local/many', { method: 'DELETE' })).status, 204);
    await files.getByRole('button', { name: '📁 many' }).waitFor({ state: 'detached' });
  });

  await step('files: free space below server.diskspace is said, as a warning and then an alert', async () => {
    await openTab(page, 'Files');
    const free = page.getByTestId('free-space');
    await free.filter({ hasText: /^Free: / }).waitFor();
    assert.doesNotMatch(await free.innerText(), /low|full/, 'this machine has more than 500 MiB free');
    const limits = async (diskspace: Record<string, number>) =>
      assert.equal((await server.api('/api/settings', { method: 'POST', json: { server: { diskspace } } })).status, 200);
    // Thresholds above any disk: the page hears of the change (SettingsUpdated) and says so without a reload.
    await limits({ warning: 1e15 });
    await free.filter({ hasText: 'disk space is running low' }).waitFor();
    assert.equal(await page.getByRole('alert').filter({ hasText: 'Free:' }).count(), 0);
    await limits({ critical: 1e15 });
    await page.getByRole('alert').filter({ hasText: 'the disk is almost full' }).waitFor();
    await limits({ warning: 524288000, critical: 209715200 });
    await free.filter({ hasNotText: /low|full/ }).waitFor();
  });
}
