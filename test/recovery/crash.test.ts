// kill -9 of the server mid-print on the virtual printer: after the restart the offer is there (file, line, Z,
// temperatures, cause), a changed file is refused, discard clears it and OctoPrint's recovery file.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, access } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { multipartBody } from '../files/multipart.ts';
import { waitFor } from '../printer/helpers.ts';
import { ensureBuilt } from '../helpers/built-server.ts';
import { api, journalOnDisk, layeredGcode, startChild, zAfterLines, type Child, type Json } from './helpers.ts';

// The server runs as users run it: the built CLI (dist/ rebuilt when the sources changed).
before(ensureBuilt);

const SETTINGS = { devel: { virtualPrinter: { throttle: 0.05, busyInterval: 0.2 } } };

async function upload(c: Child, name: string, content: string): Promise<number> {
  const { body, contentType } = multipartBody([{ name: 'file', filename: name, value: content }]);
  const r = await fetch(`${c.url}/api/files/local`, { method: 'POST', body, headers: { 'Content-Type': contentType, 'X-Api-Key': c.key } });
  await r.arrayBuffer();
  return r.status;
}

async function connect(c: Child): Promise<void> {
  assert.equal((await api(c, '/api/connection', { json: { command: 'connect', port: 'VIRTUAL', baudrate: 115200 } })).status, 204);
  await waitFor('Operational', async () => ((await (await api(c, '/api/connection')).json()) as Json).current.state === 'Operational' || undefined, 15_000);
}

test('kill -9 mid-print: the restarted server offers the resume with file, line, Z and temperatures; changed file refused; discard clears', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'gantry-recovery-'));
  const children: Child[] = [];
  t.after(async () => {
    for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });
  const gcode = layeredGcode(12, 15, 20);
  const first = await startChild(dir, SETTINGS);
  children.push(first);
  await connect(first);
  assert.equal(await upload(first, 'part.gcode', gcode), 201);
  assert.equal((await api(first, '/api/files/local/part.gcode', { json: { command: 'select', print: true } })).status, 204);

  // The journal on disk reaches layer 2 while the print runs (it is written at layer changes).
  const seen = await waitFor('journal at layer 2', async () => {
    const j = await journalOnDisk(dir);
    return j && j.status === 'printing' && (j.layer ?? -1) >= 2 ? j : undefined;
  }, 60_000);
  assert.equal(((await (await api(first, '/api/job')).json()) as Json).state, 'Printing', 'still printing when killed');
  first.proc.kill('SIGKILL');
  await new Promise((r) => first.proc.once('exit', r));
  const atKill = (await journalOnDisk(dir))!;
  assert.ok(atKill.executed.filepos >= seen.executed.filepos);
  assert.ok(atKill.executed.filepos <= atKill.acknowledged.filepos, 'executed is never past acknowledged');
  const octo = parse(await readFile(join(dir, 'data', 'print_recovery_data.yaml'), 'utf8')) as Json;
  assert.deepEqual(Object.keys(octo).sort(), ['date', 'origin', 'path', 'pos']);
  // OctoPrint's copy is written right after the journal, so a kill between the two leaves it one write behind: never ahead.
  assert.deepEqual([octo.origin, octo.path], ['local', 'part.gcode']);
  assert.ok(typeof octo.pos === 'number' && octo.pos <= atKill.executed.filepos, `pos ${octo.pos} is not past the journal's ${atKill.executed.filepos}`);

  const second = await startChild(dir, SETTINGS);
  children.push(second);
  const offer = (await (await api(second, '/api/plugin/recovery')).json()) as Json;
  assert.equal(offer.available, true);
  assert.equal(offer.cause, 'host-restarted');
  assert.equal(offer.origin, 'local');
  assert.equal(offer.path, 'part.gcode');
  assert.equal(offer.filepos, atKill.executed.filepos);
  // line is where a resume starts: the byte offset is the start of that line, and Z is the file's Z before it.
  assert.equal(Buffer.byteLength(gcode.split('\n').slice(0, offer.line - 1).join('\n')) + 1, offer.filepos);
  assert.equal(offer.z, zAfterLines(gcode, offer.line - 1));
  assert.ok(offer.layer >= 2);
  assert.equal(offer.temperatures.tool0, 200);
  assert.equal(offer.temperatures.bed, 60);
  assert.equal(typeof offer.time, 'number');

  // Not connected: refused. Connected, but the file changed since: refused, nothing printed.
  const notConnected = await api(second, '/api/plugin/recovery', { json: { command: 'resume' } });
  assert.equal(notConnected.status, 409);
  await connect(second);
  assert.equal(await upload(second, 'part.gcode', gcode.replace('M106 S128', 'M106 S255')), 201);
  const changed = await api(second, '/api/plugin/recovery', { json: { command: 'resume' } });
  assert.equal(changed.status, 409);
  assert.match(((await changed.json()) as Json).error, /changed/);
  assert.equal(((await (await api(second, '/api/job')).json()) as Json).state, 'Operational');
  const bad = await api(second, '/api/plugin/recovery', { json: { command: 'explode' } });
  assert.equal(bad.status, 400);

  assert.equal((await api(second, '/api/plugin/recovery', { json: { command: 'discard' } })).status, 204);
  assert.deepEqual(await (await api(second, '/api/plugin/recovery')).json(), { available: false });
  assert.equal(await journalOnDisk(dir), null);
  await assert.rejects(access(join(dir, 'data', 'print_recovery_data.yaml')));
  assert.equal((await api(second, '/api/plugin/recovery', { json: { command: 'discard' } })).status, 409);
  second.proc.kill('SIGTERM');
  await new Promise((r) => second.proc.once('exit', r));
});
