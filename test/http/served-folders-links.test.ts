// Links in every folder the server serves files from (timelapse movies and thumbnails, uploads, logs): only regular
// files whose real path is inside the folder are served; a link out of it is a 404 and its target's bytes never leave.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';

const SECRET = 'top secret, outside every served folder';

test('links out of the timelapse, uploads and logs folders are not served; links within them are', async (t) => {
  const s = await startTestServer(t);
  const secret = join(s.baseDir, 'secret.txt');
  await writeFile(secret, SECRET);
  const outside = join(s.baseDir, 'elsewhere');
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'inner.gcode'), SECRET);
  await writeFile(join(outside, 'inner.mp4'), SECRET);

  const timelapse = s.paths.timelapse;
  await mkdir(timelapse, { recursive: true });
  await writeFile(join(timelapse, 'real.mp4'), 'movie');
  await symlink(secret, join(timelapse, 'passwd.mp4'));
  await symlink('/etc/passwd', join(timelapse, 'etc.mp4'));
  await symlink(secret, join(timelapse, 'thumb.jpg'));
  await symlink('real.mp4', join(timelapse, 'alias.mp4'));

  const uploads = join(s.baseDir, 'uploads');
  await writeFile(join(uploads, 'real.gcode'), 'G28\n');
  await symlink(secret, join(uploads, 'passwd.gcode'));
  await symlink(outside, join(uploads, 'outdir'));
  await symlink('real.gcode', join(uploads, 'alias.gcode'));

  await symlink(secret, join(s.paths.logs, 'link.log'));

  const refused = [
    '/downloads/timelapse/passwd.mp4', '/downloads/timelapse/etc.mp4', '/downloads/timelapse/thumb.jpg',
    '/downloads/timelapses?files=passwd.mp4', '/downloads/timelapses?files=real.mp4,etc.mp4',
    '/downloads/files/local/passwd.gcode', '/downloads/files/local/outdir/inner.gcode',
    '/downloads/logs/link.log',
  ];
  for (const path of refused) {
    const res = await s.api(path);
    const body = await res.text();
    assert.ok(res.status === 404 || res.status === 400, `${path} → ${res.status}`);
    assert.ok(!body.includes(SECRET) && !body.includes('root:'), path);
  }
  const served: Array<[string, string]> = [
    ['/downloads/timelapse/real.mp4', 'movie'], ['/downloads/timelapse/alias.mp4', 'movie'],
    ['/downloads/files/local/real.gcode', 'G28\n'], ['/downloads/files/local/alias.gcode', 'G28\n'],
  ];
  for (const [path, body] of served) {
    const res = await s.api(path);
    assert.equal(res.status, 200, path);
    assert.equal(await res.text(), body, path);
  }
});
