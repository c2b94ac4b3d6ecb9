// An upload into a folder that is another disk (a USB stick mounted inside the uploads folder): it appears whole or not at all, keeps the hash the upload computed, and leaves no temp file behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { statSync, watch } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { needs } from '../helpers/tools.ts';
import { waitFor } from '../helpers/wait.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

test('an upload into a mounted disk inside the uploads folder is never seen half-written there, and keeps its hash', { skip: needs('tmpfs') }, async (t) => {
  const baseDir = await mkdtemp(join(tmpdir(), 'gantry-other-disk-'));
  const uploads = join(baseDir, 'uploads');
  const disk = join(uploads, 'usb');
  await mkdir(disk, { recursive: true });
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=128m', 'tmpfs', disk], { encoding: 'utf8' });
  assert.equal(mounted.status, 0, mounted.stderr);
  const started: { stop?: () => Promise<void> } = {};
  // One hook, so the order is sure: the server stops, then the disk goes, then the base dir.
  t.after(async () => {
    await started.stop?.();
    spawnSync('umount', ['-l', disk]);
    await rm(baseDir, { recursive: true, force: true });
  });
  const s = await startTestServer(undefined, { baseDir });
  started.stop = () => s.stop();

  // 48 MB: copying it to the other disk takes long enough that a file appearing under its name and then growing is
  // seen doing so by the watcher (it was, every run, before the copy went to a temp name first).
  const line = 'G1 X100.25 Y80.5 E0.0345 F1800\n';
  const content = Buffer.from(line.repeat(Math.ceil((48 * 1024 * 1024) / line.length)));
  const sizes: number[] = [];
  const watcher = watch(disk, (_event, name) => {
    if (name !== 'big.gcode') return;
    try {
      sizes.push(statSync(join(disk, name)).size);
    } catch {
      // gone again between the event and the look: nothing seen
    }
  });
  t.after(() => watcher.close());

  const form = new FormData();
  form.set('file', new Blob([content]), 'big.gcode');
  form.set('path', 'usb');
  const res = await s.api('/api/files/local', { method: 'POST', body: form });
  assert.equal(res.status, 201, await res.clone().text());
  await waitFor('the watcher to see the file in place', () => sizes.includes(content.length));
  assert.deepEqual(sizes.filter((n) => n !== content.length), [], 'every look at the file under its name saw all of it');

  const entry = (await (await s.api('/api/files/local/usb/big.gcode')).json()) as Json;
  assert.equal(entry.size, content.length);
  assert.equal(entry.hash, createHash('sha1').update(content).digest('hex'));
  const leftovers = [...await readdir(disk), ...await readdir(uploads)].filter((n) => n.startsWith('.upload-'));
  assert.deepEqual(leftovers, [], 'no temp file left on either disk');
});
