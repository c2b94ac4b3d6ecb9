// A backlog of unanalysed files (copied in by hand, metadata lost) is analysed as many at a time as the analyser runs:
// each announced when it really starts, a file the user asks for first, and the push busyFiles list as short.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { tempDirUntilExit } from '../helpers/temp-dir.ts';
import { passiveLogin, rawClient } from '../push/push-clients.ts';

const FOLDERS = 3;
const PER_FOLDER = 15;

test('60 files copied in behind the server\'s back: analysed one at a time (started, finished, started…), all of them, a requested one first', { timeout: 60_000 }, async (t) => {
  // Removed at exit: the server, stopped after the test, writes metadata into it up to its stop.
  const baseDir = await tempDirUntilExit('gantry-backlog-');
  for (let f = 0; f < FOLDERS; f++) {
    await mkdir(join(baseDir, 'uploads', `folder${f}`), { recursive: true });
    for (let i = 0; i < PER_FOLDER; i++) {
      await writeFile(join(baseDir, 'uploads', `folder${f}`, `part-${i}.gcode`), `G28\nM83\n${'G1 X10 Y10 E0.5 F1200\n'.repeat(50 + i)}`);
    }
  }
  await writeFile(join(baseDir, 'uploads', 'wanted.gcode'), 'G28\nM83\nG1 X5 E1 F600\n');
  // Held back until the test listens: the server would start on the backlog as it starts.
  const s = await startTestServer(t, { baseDir, settings: { gcodeAnalysis: { runAt: 'never' } } });
  const total = FOLDERS * PER_FOLDER + 1;
  const order: string[] = [];
  let inFlight = 0;
  let most = 0;
  let busyMost = 0;
  const finished = new Set<string>();
  const allDone = new Promise<void>((resolve) => {
    s.events.on('test', 'MetadataAnalysisStarted', (p) => {
      order.push(`start ${p.path}`);
      most = Math.max(most, ++inFlight);
    });
    s.events.on('test', 'MetadataAnalysisFinished', (p) => {
      order.push(`finish ${p.path}`);
      inFlight--;
      finished.add(String(p.path));
      if (finished.size === total) resolve();
    });
  });
  // What a browser sees: the busyFiles of every `current` message while the backlog runs.
  const client = await rawClient(s);
  t.after(() => client.close());
  client.send({ auth: await passiveLogin(s, s.apiKey) });
  await client.next('history');

  assert.equal((await s.api('/api/settings', { method: 'POST', json: { gcodeAnalysis: { runAt: 'idle' } } })).status, 200);
  // A listing queues what it shows without an analysis.
  assert.equal((await s.api('/api/files?recursive=true')).status, 200);
  // Asked for by a user: it goes before the rest of the backlog.
  const asked = order.length;
  assert.equal((await s.api('/api/files/local/wanted.gcode', { method: 'POST', json: { command: 'analyse' } })).status, 204);
  await allDone;
  // As many as came (about two a second; a fast machine may finish the backlog before the first).
  for (const current of client.ofType('current') as { busyFiles: unknown[] }[]) busyMost = Math.max(busyMost, current.busyFiles.length);

  assert.equal(most, 1, `at most one analysis under way at a time (the analyser runs one); order: ${order.slice(0, 8).join(', ')} …`);
  // The one under way when the request came finishes first (and one more may start before the request arrives).
  const startsBefore = order.slice(asked, order.indexOf('start wanted.gcode', asked)).filter((e) => e.startsWith('start'));
  assert.ok(order.indexOf('start wanted.gcode', asked) > 0 && startsBefore.length <= 1, `the requested file starts next: ${order.slice(asked, asked + 6).join(', ')}`);
  assert.ok(busyMost <= 1, `busyFiles held ${busyMost} files`);
  const files = (await (await s.api('/api/files?recursive=true')).json()) as { files: { children?: { gcodeAnalysis?: unknown }[] }[] };
  const children = files.files.flatMap((f) => f.children ?? []);
  assert.equal(children.length, FOLDERS * PER_FOLDER);
  assert.ok(children.every((c) => c.gcodeAnalysis !== undefined), 'every file has its analysis');
});
