// Every command route checks the JSON type of `command` and of its fields as its schema declares: an array (or a
// number) where a string or integer is declared is a 400, never coerced (`{"command":["resume"]}` resumed a print).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer } from '../helpers/server.ts';
import { multipartBody } from '../files/multipart.ts';

/** Each command route with a command it knows (every route that takes `{"command": …}`). */
const ROUTES: Array<[string, string]> = [
  ['/api/plugin/recovery', 'resume'], ['/api/plugin/recovery', 'discard'],
  ['/api/connection', 'connect'], ['/api/connection', 'disconnect'],
  ['/api/printer/tool', 'target'], ['/api/printer/bed', 'target'], ['/api/printer/chamber', 'target'],
  ['/api/printer/printhead', 'home'], ['/api/printer/sd', 'init'],
  ['/api/job', 'start'], ['/api/job', 'cancel'], ['/api/job', 'pause'],
  ['/api/files/local/cube.gcode', 'select'], ['/api/files/local/cube.gcode', 'copy'], ['/api/files/local/cube.gcode', 'analyse'],
  ['/api/files/local', 'select'],
  ['/api/plugin/appkeys', 'generate'], ['/api/plugin/appkeys', 'revoke'],
  ['/api/util/test', 'path'], ['/api/timelapse/unrendered/x', 'render'],
];

test('every command route answers 400 to a command given as an array or a number, and does nothing', async (t) => {
  const s = await startTestServer(t);
  const { body, contentType } = multipartBody([{ name: 'file', filename: 'cube.gcode', value: 'G28\n' }]);
  assert.equal((await s.api('/api/files/local', { method: 'POST', body, headers: { 'Content-Type': contentType } })).status, 201);
  const wrong: string[] = [];
  for (const [path, command] of ROUTES) {
    for (const value of [[command], 7, { command }, true]) {
      const res = await s.api(path, { method: 'POST', json: { command: value } });
      // The printer routes check that the printer is operational first, as OctoPrint orders it (409, nothing done).
      const allowed = path.startsWith('/api/printer/') ? [400, 409] : [400];
      if (!allowed.includes(res.status)) wrong.push(`${path} ${JSON.stringify({ command: value })} → ${res.status} ${await res.text()}`);
    }
  }
  assert.deepEqual(wrong, []);
  assert.equal(((await (await s.api('/api/job')).json()) as { job: { file: { name: unknown } } }).job.file.name, null, 'nothing was selected');
});

test('declared field types are checked, not coerced: integers, strings and booleans given as arrays are a 400', async (t) => {
  const s = await startTestServer(t);
  const cases: Array<[string, unknown]> = [
    ['/api/plugin/recovery', { command: 'resume', line: ['5'] }],
    ['/api/plugin/recovery', { command: 'resume', line: '5' }],
    ['/api/plugin/appkeys', { command: 'generate', app: ['x'] }],
    ['/api/files/local/cube.gcode', { command: 'copy', destination: ['x'] }],
  ];
  const wrong: string[] = [];
  for (const [path, json] of cases) {
    const res = await s.api(path, { method: 'POST', json });
    if (res.status !== 400) wrong.push(`${path} ${JSON.stringify(json)} → ${res.status}`);
  }
  assert.deepEqual(wrong, []);
  // Query strings are text: their numbers and flags are still read from it.
  assert.equal((await s.api('/api/printer/tool?history=true&limit=2')).status === 409 || (await s.api('/api/files?recursive=true')).status === 200, true);
});
