// An uploaded file is analysed once, even when clients list the files while it is being put in place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../../helpers/server.ts';
import { waitFor } from '../../helpers/wait.ts';
import { multipartBody } from '../multipart.ts';

/** A few thousand moves: an analysis long enough to still run when the upload queues its own. */
const GCODE = `M83\n${Array.from({ length: 20_000 }, (_, i) => `G1 X${(i % 200) + 1} Y${(i * 7) % 200} E0.05 F1800`).join('\n')}\n`;

test('an upload is analysed once while a client keeps listing the files', async (t) => {
  const s = await startTestServer(t);
  const started = new Map<string, number>();
  const finished = new Set<string>();
  t.after(s.events.on('test', 'MetadataAnalysisStarted', (p) => { started.set(String(p.path), (started.get(String(p.path)) ?? 0) + 1); }));
  t.after(s.events.on('test', 'MetadataAnalysisFinished', (p) => { finished.add(String(p.path)); }));

  // A listing made between the file's arrival on disk and the upload's own queueing of its analysis queued one first.
  let listing = true;
  const lister = (async () => {
    while (listing) await (await s.api('/api/files?recursive=true')).arrayBuffer();
  })();
  const upload = async (name: string): Promise<void> => {
    const { body, contentType } = multipartBody([{ name: 'file', filename: name, value: GCODE }]);
    const res = await s.api('/api/files/local', { method: 'POST', body, headers: { 'Content-Type': contentType } });
    assert.equal(res.status, 201);
    await res.arrayBuffer();
    await waitFor(`the analysis of ${name}`, () => finished.has(name), 30_000);
  };
  const names = Array.from({ length: 8 }, (_, i) => `part-${i}.gcode`);
  try {
    for (const name of names) await upload(name);
    // A second analysis of a file starts as soon as its first ends: the next upload's analysis finishing is after it.
    await upload('last.gcode');
  } finally {
    listing = false;
    await lister;
  }
  assert.deepEqual(names.filter((n) => started.get(n) !== 1).map((n) => `${n}: ${started.get(n)}`), [], 'files analysed more than once');
});
