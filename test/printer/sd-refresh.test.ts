// SD listing requests do not pile up: a firmware repeating //action:sd_updated, or a client refreshing in a loop, queues one M20 while one waits unsent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer, waitFor } from './helpers.ts';
import type { TestServer } from '../helpers/server.ts';

/** The commands written to the printer so far (terminal lines `Send: …`, line number and checksum taken off). */
/** A listing request: Gantry asks a Marlin reporting EXTENDED_M20 for long names too (`M20 L`). */
const isListing = (c: string): boolean => c === 'M20' || c === 'M20 L';

const sent = (s: TestServer): string[] => s.printer.terminal().filter((l) => l.startsWith('Send: '))
  .map((l) => l.replace(/^Send: (N\d+ )?/, '').replace(/\*\d+$/, ''));

// The link in its own thread (the default) and on the main thread take different paths to the sender's queue.
for (const linkThread of ['worker', 'main'] as const) {
  test(`a firmware that repeats //action:sd_updated gets one listing request while one waits, not one per line (link: ${linkThread})`, async (t) => {
    const s = await connectedServer(t, { serial: { terminalLogSize: 2000, linkThread } });
    await waitFor('the card is ready', () => s.printer.sdReady() || undefined);
    await waitFor('the first listing', () => sent(s).some(isListing) || undefined);
    const before = sent(s).filter(isListing).length;

    // 30 debug commands, each answered with //action:sd_updated, then a dwell of 3 s (real time) that holds the queue:
    // the M20 the first action asks for waits behind it, and every later action finds it unsent.
    const action = '!!DEBUG:action sd_updated';
    const commands = [...Array.from({ length: 30 }, () => action), 'G4 S3000'];
    assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { commands } })).status, 204);
    await waitFor('a listing after the dwell', () => {
      const all = sent(s);
      return all.findLastIndex(isListing) > all.lastIndexOf('G4 S3000') || undefined;
    }, 30_000);
    assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { command: 'M117 done' } })).status, 204);
    await waitFor('every command written', () => sent(s).includes('M117 done') || undefined, 30_000);
    const listings = sent(s).filter(isListing).length - before;
    assert.equal(listings, 1, `${listings} M20s for 30 //action:sd_updated`);
  });
}

test('POST /api/printer/sd refresh in a loop asks for one listing while one waits unsent', async (t) => {
  const s = await connectedServer(t, { serial: { terminalLogSize: 2000 } });
  await waitFor('the card is ready', () => s.printer.sdReady() || undefined);
  await waitFor('the first listing', () => sent(s).some(isListing) || undefined);
  const before = sent(s).filter(isListing).length;
  // A dwell of 5 s (real time) holds the queue, so every refresh below is asked for while the first one waits.
  assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { command: 'G4 S5000' } })).status, 204);
  await waitFor('the dwell is written', () => sent(s).includes('G4 S5000') || undefined);
  const answers = await Promise.all(Array.from({ length: 40 }, () => s.api('/api/printer/sd', { method: 'POST', json: { command: 'refresh' } })));
  assert.deepEqual(new Set(answers.map((r) => r.status)), new Set([204]));
  assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { command: 'M117 done' } })).status, 204);
  await waitFor('every command written', () => sent(s).includes('M117 done') || undefined, 30_000);
  const listings = sent(s).filter(isListing).length - before;
  assert.equal(listings, 1, `${listings} M20s for 40 refreshes asked for behind one dwell`);
});
