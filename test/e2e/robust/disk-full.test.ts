// A full or read-only disk (an SD card that filled up or was remounted read-only): every write the API is asked for
// answers 507 saying why, changes nothing in memory or on disk, the server stays up (its own log included), a print
// goes on to its end, and once there is room again the same requests succeed.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { connectVirtual, FAST_PRINTER } from '../../helpers/connected-server.ts';
import { nextEvent } from '../../helpers/wait.ts';
import { needs } from '../../helpers/tools.ts';

/** A server whose base dir is on its own 2 MB tmpfs; unmounted (after the server stopped) when the test ends. */
async function serverOnSmallDisk(t: TestContext): Promise<{ s: TestServer; disk: string }> {
  const disk = await mkdtemp(join(tmpdir(), 'gantry-small-disk-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', disk], { encoding: 'utf8' });
  assert.equal(mounted.status, 0, mounted.stderr);
  const started: { s?: TestServer } = {};
  // One hook, so the order is sure: the server stops, then the disk goes, then its mount point.
  t.after(async () => {
    await started.s?.stop();
    spawnSync('umount', ['-l', disk]);
    await rm(disk, { recursive: true, force: true });
  });
  started.s = await startTestServer(undefined, { baseDir: join(disk, 'base'), settings: FAST_PRINTER });
  return { s: started.s, disk };
}

/** Takes every free block of the disk; returns the filler's path (unlink it to give the room back). */
async function fill(disk: string): Promise<string> {
  const filler = join(disk, 'filler');
  await writeFile(filler, Buffer.alloc(4 * 1024 * 1024)).then(
    () => assert.fail('the 2 MB disk took 4 MB'),
    (err: NodeJS.ErrnoException) => assert.equal(err.code, 'ENOSPC'),
  );
  return filler;
}

function upload(s: TestServer, name: string, text: string): Promise<Response> {
  const form = new FormData();
  form.set('file', new Blob([text]), name);
  return s.api('/api/files/local', { method: 'POST', body: form });
}

const GCODE = Array.from({ length: 2000 }, (_, i) => `G1 X${i % 200} Y${(i * 7) % 200} E${(i / 100).toFixed(2)}`).join('\n') + '\n';

test('on a full disk: 507 saying so, nothing half-done in memory or on disk, the server and its log stay up; with room again it all works', { skip: needs('tmpfs') }, async (t) => {
  const { s, disk } = await serverOnSmallDisk(t);
  assert.equal((await upload(s, 'first.gcode', 'G28\n')).status, 201);
  const config = await readFile(s.paths.config, 'utf8');
  const users = await readFile(s.paths.users, 'utf8');
  const uploads = (await readdir(s.paths.uploads)).sort();
  const filler = await fill(disk);

  const full = /not enough free disk space/;
  const expect507 = async (what: string, res: Promise<Response>) => {
    const r = await res;
    const body = await r.text();
    assert.equal(r.status, 507, `${what}: ${body}`);
    assert.match((JSON.parse(body) as { error: string }).error, full, what);
  };
  // Several times over: each failure is logged with its stack, more than the log file's last free bytes.
  for (let round = 0; round < 5; round++) {
    await expect507('upload', upload(s, 'big.gcode', GCODE.repeat(2)));
    await expect507('settings', s.api('/api/settings', { method: 'POST', json: { appearance: { name: `Full ${round}` } } }));
    await expect507('new user', s.api('/api/access/users', { method: 'POST', json: { name: `bob${round}`, password: 'pw-bob-12345', active: true } }));
    await expect507('new API key', s.api('/api/settings/apikey', { method: 'POST' }));
    await expect507('copy', s.api('/api/files/local/first.gcode', { method: 'POST', json: { command: 'copy', destination: `copy${round}.gcode` } }));
    await expect507('printer profile', s.api('/api/printerprofiles', { method: 'POST', json: { profile: { id: `p${round}`, name: 'P' } } }));
  }
  // Nothing changed: not in memory, not on disk, and no temp file or partial upload left.
  const shown = (await (await s.api('/api/settings')).json()) as { appearance: { name: string } };
  assert.doesNotMatch(shown.appearance.name, /^Full/);
  assert.equal(await readFile(s.paths.config, 'utf8'), config);
  assert.equal(await readFile(s.paths.users, 'utf8'), users);
  assert.deepEqual((await readdir(s.paths.uploads)).sort(), uploads);
  const listed = (await (await s.api('/api/files/local')).json()) as { files: Array<{ name: string }> };
  assert.deepEqual(listed.files.map((f) => f.name), ['first.gcode']);
  assert.equal((await s.api('/api/version')).status, 200, 'the old API key still works');
  assert.deepEqual((await readdir(s.paths.base)).filter((n) => n.includes('.tmp')), []);

  // A read-only disk says that instead.
  assert.equal(spawnSync('mount', ['-o', 'remount,ro', disk]).status, 0);
  const ro = await s.api('/api/settings', { method: 'POST', json: { appearance: { name: 'Read-only' } } });
  assert.equal(ro.status, 507);
  assert.match(((await ro.json()) as { error: string }).error, /read-only/);
  assert.equal(spawnSync('mount', ['-o', 'remount,rw', disk]).status, 0);

  // Room again: the same requests succeed, and memory and disk agree.
  await unlink(filler);
  assert.equal((await upload(s, 'big.gcode', GCODE)).status, 201);
  assert.equal((await s.api('/api/settings', { method: 'POST', json: { appearance: { name: 'Room again' } } })).status, 200);
  assert.match(await readFile(s.paths.config, 'utf8'), /name: Room again/);
  assert.equal((await s.api('/api/access/users', { method: 'POST', json: { name: 'bob', password: 'pw-bob-12345', active: true } })).status, 200);
  assert.match(await readFile(s.paths.users, 'utf8'), /^bob:/m);
  assert.equal((await s.api('/api/files/local/first.gcode', { method: 'POST', json: { command: 'copy', destination: 'copy.gcode' } })).status, 201);
});

test('a print started before the disk filled up goes on to its end; the server answers throughout', { skip: needs('tmpfs') }, async (t) => {
  const { s, disk } = await serverOnSmallDisk(t);
  assert.equal((await upload(s, 'part.gcode', GCODE.repeat(3))).status, 201);
  await connectVirtual(s);
  const started = nextEvent(s.events, 'PrintStarted');
  const ended = new Promise<string>((resolve) => {
    s.events.on('disk-full-test', 'PrintDone', () => resolve('PrintDone'));
    s.events.on('disk-full-test', 'PrintFailed', (p) => resolve(`PrintFailed ${JSON.stringify(p)}`));
  });
  t.after(() => s.events.removeOwner('disk-full-test'));
  assert.equal((await s.api('/api/files/local/part.gcode', { method: 'POST', json: { command: 'select', print: true } })).status, 204);
  await started;
  // The print journal, the print history and the log all fail to write from here on.
  await fill(disk);
  assert.equal((await s.api('/api/job')).status, 200);
  assert.equal(await ended, 'PrintDone');
  const job = (await (await s.api('/api/job')).json()) as { state: string };
  assert.equal(job.state, 'Operational');
});
