// Copying or moving a file into a folder that does not exist is a client's mistake: 409 "No such folder", the
// source untouched, nothing alarming logged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { multipartBody } from './multipart.ts';

test('copy and move into a folder that does not exist answer 409 "No such folder" and log no error', async (t) => {
  const s = await startTestServer(t);
  const { body, contentType } = multipartBody([{ name: 'file', filename: 'cube.gcode', value: 'G28\n' }]);
  assert.equal((await s.api('/api/files/local', { method: 'POST', body, headers: { 'Content-Type': contentType } })).status, 201);
  for (const command of ['copy', 'move']) {
    for (const destination of ['nowhere/cube.gcode', 'no/such/deep/cube.gcode', 'cube.gcode/inside.gcode']) {
      const res = await s.api('/api/files/local/cube.gcode', { method: 'POST', json: { command, destination } });
      assert.equal(res.status, 409, `${command} → ${destination}`);
      assert.deepEqual(await res.json(), { error: 'No such folder' });
    }
  }
  assert.equal((await s.api('/api/files/local/cube.gcode')).status, 200, 'the source is where it was');
  await s.stop();
  const log = await readFile(join(s.paths.logs, 'gantry.log'), 'utf8').catch(() => '');
  assert.doesNotMatch(log, /(copy|move) failed|"level":50/);
});
