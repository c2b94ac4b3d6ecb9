// Spoolman end to end (src/spools/) against the stand-in Spoolman (test/helpers/spoolman-standin.ts, the documented
// API of docs/reference/plugins.md §5.3): a real print on fakefw through a pty reports the filament it used, at the sync
// interval and at the end, equal to the file's analysed extrusion within 0.5 % and never more than was sent; a Spoolman
// outage mid-print loses nothing (the unsent use waits on disk); SET_ACTIVE_SPOOL from the terminal never reaches the
// firmware, nor does the one in the file, which moves the rest of the print to another spool.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { stateText } from '../helpers/connected-server.ts';
import { waitFor } from '../helpers/wait.ts';
import { needs } from '../helpers/tools.ts';
import { startSpoolmanStandin, type SpoolmanStandin } from '../helpers/spoolman-standin.ts';
import { command, startLoggedFw, type LoggedFw } from '../recovery/fakefw.ts';

/** Absolute E with retracts and primes, G92 E0 resets, a relative stretch: what a slicer writes. */
function gcode(layers: number, opts: { switchAt?: number } = {}): string {
  const out = ['G28', 'G90', 'M82', 'G92 E0'];
  let e = 0;
  for (let l = 1; l <= layers; l++) {
    // A spool change written in the file (as a slicer's filament-change G-code would): Gantry answers it, in order.
    if (l === opts.switchAt) out.push('SET_ACTIVE_SPOOL ID=1');
    out.push(`G1 Z${(l * 0.2).toFixed(2)} F600`);
    for (let k = 0; k < 20; k++) {
      e += 0.8;
      out.push(`G1 X${10 + (k % 5) * 10} Y${10 + (k % 3) * 10} E${e.toFixed(5)} F3000`);
    }
    out.push(`G1 E${(e - 1).toFixed(5)} F2400`, `G1 E${e.toFixed(5)} F2400`); // retract and prime: no filament
    if (l % 10 === 0) { out.push('G92 E0'); e = 0; }
  }
  out.push('M83', ...Array.from({ length: 30 }, () => 'G1 X20 E0.5 F1800'), 'M82');
  return out.join('\n') + '\n';
}

interface Rig { s: TestServer; fw: LoggedFw; spoolman: SpoolmanStandin; dir: string }

async function rig(t: TestContext, fwArgs: string[]): Promise<Rig> {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-spoolman-'));
  const port = join(dir, 'ttyUSB-printer');
  const fw = await startLoggedFw(port, fwArgs);
  const spoolman = await startSpoolmanStandin();
  t.after(async () => {
    await fw.kill();
    await spoolman.stop();
    await rm(dir, { recursive: true, force: true });
  });
  spoolman.add(900);
  spoolman.add(800);
  const s = await startTestServer(t, {
    settings: { serial: { additionalPorts: [port], log: false }, plugins: { spoolman: { server: spoolman.url, syncInterval: 0.3 } } },
  });
  // The spools' feed reconnects quickly in tests.
  const r = await s.api('/api/connection', { method: 'POST', json: { command: 'connect', port, baudrate: 115200 } });
  assert.equal(r.status, 204);
  await waitFor('Operational', async () => (await stateText(s)) === 'Operational' || undefined, 20_000);
  await waitFor('Spoolman connected', async () => ((await (await s.api('/api/plugin/spoolman')).json()) as { spoolman_connected: boolean }).spoolman_connected || undefined, 20_000);
  return { s, fw, spoolman, dir };
}

async function upload(s: TestServer, name: string, text: string): Promise<number> {
  const form = new FormData();
  form.append('file', new Blob([text]), name);
  assert.equal((await s.api('/api/files/local', { method: 'POST', body: form })).status, 201);
  return waitFor('analysis', async () => {
    const f = (await (await s.api(`/api/files/local/${name}`)).json()) as { gcodeAnalysis?: { filament?: { tool0?: { length: number } } } };
    return f.gcodeAnalysis?.filament?.tool0?.length;
  }, 30_000);
}

const terminal = async (s: TestServer, cmd: string) => {
  const r = await s.api('/api/printer/command', { method: 'POST', json: { command: cmd } });
  assert.equal(r.status, 204, await r.text());
};

const status = async (s: TestServer) => (await (await s.api('/api/plugin/spoolman')).json()) as {
  spoolman_connected: boolean; active: Record<string, number>; pending_reports: Array<{ spool_id: number; filament_used: number }>;
};

test('a print on fakefw reports its filament to the active spool: at the sync interval, at the end, equal to the file within 0.5 %', { skip: needs('shared-data', 'cc') }, async (t) => {
  const { s, fw, spoolman } = await rig(t, ['-d', '1500']);
  const length = await upload(s, 'part.gcode', gcode(120, { switchAt: 61 }));
  // From the terminal: answered by Gantry, never sent to the printer; a spool Spoolman lacks is refused.
  await terminal(s, 'SET_ACTIVE_SPOOL ID=999');
  await waitFor('the refusal in the terminal', async () => s.printer.terminal().some((l) => /no spool 999/i.test(l)) || undefined);
  await terminal(s, 'SET_ACTIVE_SPOOL ID=2');
  await waitFor('spool 2 active', async () => (await status(s)).active['0'] === 2 || undefined);
  const done = new Promise<void>((resolve) => s.events.on('test', 'PrintDone', () => resolve()));
  const during: number[] = [];
  s.events.on('test', 'PrintDone', () => during.push(spoolman.uses.length));
  assert.equal((await s.api('/api/files/local/part.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
  await done;
  await waitFor('everything reported', async () => (await status(s)).pending_reports.length === 0
    && Math.abs(spoolman.usedLength(1) + spoolman.usedLength(2) - length) / length < 0.005 || undefined, 20_000).catch(() => {});
  const sum = spoolman.usedLength(1) + spoolman.usedLength(2);
  assert.ok(Math.abs(sum - length) / length < 0.005, `reported ${sum} mm, the file extrudes ${length} mm`);
  assert.ok(during[0] >= 2, `use was reported while printing (${during[0]} reports before the end)`);
  // Never more than was extruded: the running sum never exceeds the file's total.
  let running = 0;
  for (const u of spoolman.uses) { running += Number(u.body.use_length); assert.ok(running <= length * 1.000001, `${running} > ${length}`); }
  // The file's own SET_ACTIVE_SPOOL ID=1 half-way: the first half went to spool 2, the rest to spool 1.
  const first = spoolman.usedLength(2) / sum;
  assert.ok(first > 0.4 && first < 0.6, `spool 2 got ${(first * 100).toFixed(1)} % (the file switches at half)`);
  assert.ok(spoolman.uses.every((u) => Object.keys(u.body).join() === 'use_length'), 'only use_length is sent');
  assert.ok(!fw.received.map(command).some((c) => /ACTIVE_SPOOL/i.test(c)), 'the host word never reached the firmware');
  // History records the spool of the print.
  // Written once the print's end is booked (after PrintDone).
  const hist = await waitFor('the print history entry', async () => {
    const text = await readFile(join(s.paths.data, 'print-history.json'), 'utf8').catch(() => '[]');
    const list = JSON.parse(text) as Array<{ spools?: Array<{ tool: number; spool_id: number; used: number }> }>;
    return list.length > 0 ? list : undefined;
  });
  const entry = hist.at(-1)!;
  assert.deepEqual(entry.spools?.map((x) => x.spool_id).sort(), [1, 2]);
  assert.ok(Math.abs(entry.spools!.reduce((a, x) => a + x.used, 0) - length) / length < 0.005);
  // The change feed: Spoolman's own update reached Gantry's copy of the spool.
  const st = (await (await s.api('/api/plugin/spoolman')).json()) as { spools: Record<string, { remaining_length: number } | null> };
  assert.ok(Math.abs(st.spools['0']!.remaining_length - spoolman.spools.get(1)!.remaining_length) < 1e-6);
});

test('a Spoolman outage mid-print loses nothing: the use waits on disk and goes once Spoolman is back', { skip: needs('shared-data', 'cc') }, async (t) => {
  const { s, spoolman } = await rig(t, ['-d', '2000']);
  const length = await upload(s, 'long.gcode', gcode(120));
  assert.equal((await s.api('/api/plugin/spoolman', { method: 'POST', json: { command: 'select', tool: 0, spool_id: 1 } })).status, 200);
  const done = new Promise<void>((resolve) => s.events.on('test', 'PrintDone', () => resolve()));
  assert.equal((await s.api('/api/files/local/long.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
  await waitFor('a first report', async () => spoolman.uses.length > 0 || undefined, 20_000);
  await spoolman.stop();
  const queued = await waitFor('use queued while Spoolman is away', async () => {
    const st = await status(s);
    return !st.spoolman_connected && (st.pending_reports[0]?.filament_used ?? 0) > 20 ? st : undefined;
  }, 20_000);
  // The queue's file is written right after the report fails (an atomic write of its own, not in the answer's path).
  const onDisk = await waitFor('the unsent use on disk', async () => {
    const d = JSON.parse(await readFile(join(s.paths.data, 'spoolman.json'), 'utf8')) as { pending?: Record<string, number> };
    return (d.pending?.['1'] ?? 0) > 0 ? d : undefined;
  }, 10_000);
  assert.ok(onDisk.pending!['1'] > 0, 'the unsent use is on disk');
  assert.ok(queued.pending_reports[0].spool_id === 1);
  await done;
  await spoolman.start();
  await waitFor('the queue sent after the outage', async () => {
    const st = await status(s);
    return st.spoolman_connected && st.pending_reports.length === 0 && Math.abs(spoolman.usedLength(1) - length) / length < 0.005 || undefined;
  }, 30_000).catch(() => {});
  const sum = spoolman.usedLength(1);
  assert.ok(Math.abs(sum - length) / length < 0.005, `reported ${sum} mm, the file extrudes ${length} mm`);
});
