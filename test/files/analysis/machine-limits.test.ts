// Where a running server's analysis takes the machine's limits and filament diameter from (the connected firmware's
// report, the printer profile) and how it reports the progress of a long analysis, end to end over HTTP and push.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream, openAsBlob } from 'node:fs';
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { join } from 'node:path';
import { connectedServer } from '../../printer/helpers.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { rawClient, userWithKey } from '../../push/push-clients.ts';
import { GCODE_DIR } from '../../helpers/shared-data.ts';
import { needs } from '../../helpers/tools.ts';
import { tempDir } from '../../helpers/temp-dir.ts';

interface Analysis {
  estimatedPrintTime: number;
  filament: { tool0: { length: number; volume: number } };
  gantry: { limitsSource: string; cornering: string };
}

// No limits in the file: long straight moves whose time depends mostly on the acceleration.
const GCODE = ['G28', 'G90', 'M83', 'G1 Z0.2 F600', ...Array.from({ length: 40 }, (_, i) => `G1 X${i % 2 ? 10 : 190} Y${10 + i * 4} E8 F9000`)].join('\n') + '\n';

async function uploadAndAnalyse(s: TestServer, name: string, content: string | Blob): Promise<Analysis> {
  const done = waitAnalysed(s, name);
  const form = new FormData();
  form.append('file', typeof content === 'string' ? new Blob([content]) : content, name);
  const res = await s.api('/api/files/local', { method: 'POST', body: form });
  assert.equal(res.status, 201);
  await done;
  return analysisOf(s, name);
}

function waitAnalysed(s: TestServer, name: string): Promise<void> {
  return new Promise((resolve) => {
    const off = s.events.on('test', 'MetadataAnalysisFinished', (p) => { if (p.path === name) { off(); resolve(); } });
  });
}

async function analysisOf(s: TestServer, name: string): Promise<Analysis> {
  return ((await (await s.api(`/api/files/local/${name}`)).json()) as { gcodeAnalysis: Analysis }).gcodeAnalysis;
}

test('the connected firmware\'s reported limits drive the estimate until the printer profile states its own', async (t) => {
  const s = await connectedServer(t);
  const defaults = await uploadAndAnalyse(s, 'before.gcode', GCODE);
  assert.equal(defaults.gantry.limitsSource, 'default');

  // The user lowers the firmware's accelerations and asks for its settings, as after a board reset or in the terminal.
  const reported = new Promise<void>((resolve) => {
    const off = s.printer.watchReplies((line) => { if (line.includes('M205 B')) { off(); resolve(); } });
  });
  const cmd = await s.api('/api/printer/command', { method: 'POST', json: { commands: ['M201 X400 Y400', 'M204 P400 R400 T400', 'M503'] } });
  assert.equal(cmd.status, 204);
  await reported;
  const fw = await uploadAndAnalyse(s, 'after.gcode', GCODE);
  assert.equal(fw.gantry.limitsSource, 'firmware');
  assert.equal(fw.gantry.cornering, 'junction-deviation');
  assert.ok(fw.estimatedPrintTime > defaults.estimatedPrintTime * 1.2,
    `400 mm/s² instead of 3000 makes the print longer: ${fw.estimatedPrintTime} vs ${defaults.estimatedPrintTime}`);

  // The profile in use states a lower acceleration and the filament loaded: the next analysis follows it.
  const patch = await s.api('/api/printerprofiles/_default', { method: 'PATCH', json: { profile: {
    machineLimits: { printAcceleration: 100, travelAcceleration: 100 }, extruder: { filamentDiameter: 2.85 },
  } } });
  assert.equal(patch.status, 200);
  const again = waitAnalysed(s, 'after.gcode');
  assert.equal((await s.api('/api/files/local/after.gcode', { method: 'POST', json: { command: 'analyse' } })).status, 204);
  await again;
  const profile = await analysisOf(s, 'after.gcode');
  assert.equal(profile.gantry.limitsSource, 'profile');
  assert.ok(profile.estimatedPrintTime > fw.estimatedPrintTime * 1.2, `${profile.estimatedPrintTime} vs ${fw.estimatedPrintTime}`);
  const length = profile.filament.tool0.length;
  assert.equal(length, 320);
  assert.ok(Math.abs(profile.filament.tool0.volume - (length * Math.PI * 1.425 ** 2) / 1000) < 1e-9, 'volume from the profile\'s 2.85 mm');
});

test('a long analysis reports its progress to push clients and lists the file in busyFiles while it runs', { skip: needs('shared-data') }, async (t) => {
  const s = await startTestServer(t);
  // Three copies of the 36 MB corpus file: long enough to report progress on any machine.
  const dir = await tempDir(t, 'gantry-progress-');
  const big = join(dir, 'big.gcode');
  const src = join(GCODE_DIR, 'prusaslicer-2.5.0-debian_vase_0.1mm_generated.gcode');
  const out = createWriteStream(big);
  for (let i = 0; i < 3; i++) await pipeline(createReadStream(src), out, { end: i === 2 });

  const { auth } = await userWithKey(s, 'watcher');
  const client = await rawClient(s);
  t.after(() => client.close());
  client.send({ auth });
  await client.next('history');
  // A user without FILES_LIST must not see it.
  const { auth: blindAuth } = await userWithKey(s, 'blind', { groups: [], permissions: ['STATUS'] });
  const blind = await rawClient(s);
  t.after(() => blind.close());
  blind.send({ auth: blindAuth });
  await blind.next('history');

  const analysis = await uploadAndAnalyse(s, 'big.gcode', await openAsBlob(big));
  assert.ok(analysis.estimatedPrintTime > 0);
  const reports = client.ofType('plugin')
    .filter((p) => (p as { plugin: string }).plugin === 'gantry')
    .map((p) => (p as { data: { type: string; origin: string; path: string; progress: number } }).data);
  assert.ok(reports.length >= 1, 'at least one progress report');
  for (const r of reports) {
    assert.equal(r.type, 'analysisProgress');
    assert.equal(r.origin, 'local');
    assert.equal(r.path, 'big.gcode');
    assert.ok(r.progress > 0 && r.progress < 1, String(r.progress));
  }
  const fractions = reports.map((r) => r.progress);
  assert.deepEqual(fractions, [...fractions].sort((a, b) => a - b), 'progress only grows');
  assert.equal(blind.ofType('plugin').length, 0);
  // Every current sent while the analysis ran names the file as busy; the last one after it does not.
  const busy = client.ofType('current').map((c) => (c as { busyFiles: Array<{ path: string }> }).busyFiles.map((f) => f.path));
  assert.ok(busy.some((paths) => paths.includes('big.gcode')), JSON.stringify(busy));
  // Once it is done, a current after the last one naming it busy says no file is busy (the wait fails if none does).
  // Counted from there, not from when the API showed the analysis: that current may reach the socket first.
  const lastBusy = client.messages.findLastIndex((m) => 'current' in m
    && (m.current as { busyFiles: Array<{ path: string }> }).busyFiles.some((f) => f.path === 'big.gcode'));
  await client.next('current', (c: { busyFiles: unknown[] }) => c.busyFiles.length === 0, { from: lastBusy + 1 });
});
