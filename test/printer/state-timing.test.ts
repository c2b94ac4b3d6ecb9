// States that change when the printer does (#57): what the API reads back right after a connect, an Upload-and-Print, a
// target temperature, and the end of a job is what was asked for or what the printer did, never a stale state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { connectVirtual, connectedServer, stateText, FAST_PRINTER } from '../helpers/connected-server.ts';
import { waitFor } from '../helpers/wait.ts';
import { job, jobCommand, uploadFile, type Json } from './job/helpers.ts';

/** G4 S<n> takes n simulated seconds: with FAST_PRINTER's throttle, n ms. */
const dwell = (ms: number): string => `G4 S${ms}`;

async function command(s: Awaited<ReturnType<typeof startTestServer>>, commands: string[]): Promise<void> {
  const r = await s.api('/api/printer/command', { method: 'POST', json: { commands } });
  await r.arrayBuffer();
  assert.equal(r.status, 204);
}

async function toolTarget(s: Awaited<ReturnType<typeof startTestServer>>): Promise<number | null> {
  const body = (await (await s.api('/api/printer/tool')).json()) as Json;
  return body.tool0?.target ?? null;
}

test('after an accepted connect /api/connection says it is connecting at once, not Closed', async (t) => {
  const s = await startTestServer(t, { settings: FAST_PRINTER });
  assert.equal(await stateText(s), 'Closed');
  const r = await s.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL', baudrate: 115200 } });
  await r.arrayBuffer();
  assert.equal(r.status, 204);
  const state = await stateText(s);
  assert.ok(['Opening serial connection', 'Detecting serial connection', 'Connecting', 'Operational'].includes(state), `right after connect: ${state}`);
  const printerState = (await (await s.api('/api/printer')).json()) as Json;
  assert.notEqual(printerState.state?.text, 'Offline', 'GET /api/printer agrees');
  await waitFor('Operational', async () => (await stateText(s)) === 'Operational');
});

test('a connect that is refused (unknown profile or port) leaves the connection Closed', async (t) => {
  const s = await startTestServer(t, { settings: FAST_PRINTER });
  await assert.rejects(s.printer.connect({ port: 'VIRTUAL', baudrate: 115200, profileId: 'no-such-profile' }));
  await assert.rejects(s.printer.connect({ port: '/dev/no-such-port', baudrate: 115200 }), /port is invalid/);
  assert.equal(await stateText(s), 'Closed');
});

test('Upload and Print behind queued commands: /api/job says Printing as soon as the upload is answered', async (t) => {
  const s = await startTestServer(t, { settings: FAST_PRINTER });
  await connectVirtual(s);
  // Commands queued before the job (a fresh connect's start-up dialogue, a client's own): 600 ms of work ahead.
  await command(s, [dwell(600)]);
  const r = await uploadFile(s, 'cura.gcode', 'G28\nG1 X10 Y10 F3000\nG1 X20 Y20\nM84\n', [{ name: 'print', value: 'true' }]);
  await r.arrayBuffer();
  assert.equal(r.status, 201);
  const j = await job(s);
  assert.equal(j.state, 'Printing');
  assert.equal(j.job.file.name, 'cura.gcode');
  await waitFor('the print done', async () => (await job(s)).state === 'Operational');
});

test('a target set through /api/printer/tool and /bed reads back at once, idle and behind queued moves', async (t) => {
  const s = await connectedServer(t);
  const tool = await s.api('/api/printer/tool', { method: 'POST', json: { command: 'target', targets: { tool0: 40 } } });
  await tool.arrayBuffer();
  assert.equal(tool.status, 204);
  assert.equal(await toolTarget(s), 40, 'idle');

  await command(s, [dwell(800)]);
  const bed = await s.api('/api/printer/bed', { method: 'POST', json: { command: 'target', target: 35 } });
  await bed.arrayBuffer();
  assert.equal(bed.status, 204);
  const again = await s.api('/api/printer/tool', { method: 'POST', json: { command: 'target', targets: { tool0: 45 } } });
  await again.arrayBuffer();
  // Reports keep coming while the dwell holds the commands back (their targets are the old ones): the asked target stays.
  const until = Date.now() + 600;
  for (let reads = 0; reads === 0 || Date.now() < until; reads++) {
    const bedBody = (await (await s.api('/api/printer/bed')).json()) as Json;
    assert.equal(bedBody.bed?.target, 35, `bed target, read ${reads}`);
    assert.equal(await toolTarget(s), 45, `tool target, read ${reads}`);
  }
  await s.printer.settled(10_000);
  assert.equal(await toolTarget(s), 45);
});

test('Finishing begins when the last line is acknowledged: a pause during the last line pauses the job', async (t) => {
  const s = await connectedServer(t);
  const gcode = 'G28\nG1 X10 Y10 F3000\n' + dwell(1500) + '\n';
  const r = await uploadFile(s, 'last.gcode', gcode, [{ name: 'print', value: 'true' }]);
  await r.arrayBuffer();
  assert.equal(r.status, 201);
  const size = Buffer.byteLength(gcode);
  // The last line written: the job has handed every line to the firmware, which is still dwelling on it.
  await waitFor('the last line written', async () => (await job(s)).progress.filepos === size);
  assert.equal((await job(s)).state, 'Printing', 'the last line is not acknowledged yet');
  assert.equal(await jobCommand(s, 'pause', 'pause'), 204);
  await waitFor('Paused', async () => (await job(s)).state === 'Paused');
  assert.equal(await jobCommand(s, 'pause', 'resume'), 204);
  await waitFor('the job done', async () => (await job(s)).state === 'Operational');
  assert.equal((await job(s)).progress.completion, 100);
});
