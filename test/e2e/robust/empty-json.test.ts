// Issue 15 item 12: an empty body sent with Content-Type: application/json is no body on every route (FDM Monster sends it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../../helpers/server.ts';
import { raw } from './raw.ts';

const JSON_TYPE = { 'Content-Type': 'application/json' };

test('DELETE of a file and a system command with Content-Type: application/json and an empty body succeed', async (t) => {
  const s = await startTestServer(t, { settings: { system: { actions: [{ action: 'noop', name: 'Nothing', command: 'true' }] } } });
  const headers = { ...JSON_TYPE, 'X-Api-Key': s.apiKey };
  for (const [i, chunked] of [false, true].entries()) {
    const name = `del${i}.gcode`;
    await writeFile(join(s.paths.uploads, name), 'G28\n');
    // Content-Length: 0 and an empty chunked body are both "no body".
    const del = await raw(`${s.url}/api/files/local/${name}`, { method: 'DELETE', headers, body: '', chunked });
    assert.equal(del.status, 204, `DELETE (chunked=${chunked}) answered ${del.status} ${del.body}`);
    await assert.rejects(stat(join(s.paths.uploads, name)));

    const cmd = await raw(`${s.url}/api/system/commands/custom/noop`, { method: 'POST', headers, body: '', chunked });
    assert.equal(cmd.status, 204, `system command (chunked=${chunked}) answered ${cmd.status} ${cmd.body}`);
  }
});

test('an empty JSON body on a route that needs one is a 400 about the body, and malformed JSON is still 400', async (t) => {
  const s = await startTestServer(t);
  const headers = { ...JSON_TYPE, 'X-Api-Key': s.apiKey };
  const empty = await raw(`${s.url}/api/printer/command`, { method: 'POST', headers, body: '', chunked: true });
  assert.equal(empty.status, 400);
  assert.ok((JSON.parse(empty.body) as { error: string }).error);
  const bad = await raw(`${s.url}/api/printer/command`, { method: 'POST', headers, body: '{nope' });
  assert.equal(bad.status, 400);
  assert.equal((JSON.parse(bad.body) as { error: string }).error, 'Malformed JSON body in request');
});
