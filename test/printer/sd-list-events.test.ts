// An SD listing that did not change is no news: a client answering UpdatedFiles with `?force=true` (which sends M20)
// must not set off a loop of listings; a changed listing is still announced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectedServer, waitFor } from './helpers.ts';

test('UpdatedFiles follows an SD listing only when the listing changed', async (t) => {
  const s = await connectedServer(t);
  await waitFor('the card', () => s.printer.sdReady() || undefined);
  let listings = 0;
  const unwatch = s.printer.watchReplies((line) => { if (/End file list/i.test(line)) listings++; });
  t.after(unwatch);
  let updated = 0;
  s.events.on('sd-list-test', 'UpdatedFiles', () => { updated++; });
  const refresh = async () => {
    const before = listings;
    assert.equal((await s.api('/api/files/sdcard?force=true')).status, 200);
    await waitFor('the listing', () => listings > before || undefined);
  };
  await refresh();
  updated = 0;
  await refresh();
  await refresh();
  assert.equal(updated, 0, 'two unchanged listings announced nothing');

  // A file written to the card changes the listing: that one is announced.
  assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { commands: ['M28 new.gco', 'G28', 'M29'] } })).status, 204);
  updated = 0;
  await refresh();
  await waitFor('the announcement', () => updated > 0 || undefined);
});
