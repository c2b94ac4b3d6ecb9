// PrusaSlicer / OrcaSlicer / Bambu Studio "OctoPrint" host: the Test button and Upload / Upload-and-Print, as they send them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { server, connectPrinter, form, json, smallGcode, waitFor, expectStatus } from './helpers.ts';

test('Test button: /api/version has `api` and a `text` starting with "OctoPrint"; a bad key is >= 400', async (t) => {
  const s = await server(t);
  // The slicer trims the key it sends; the key field often carries stray whitespace in practice.
  const res = await s.api('/api/version', { headers: { 'X-Api-Key': s.apiKey } });
  assert.equal(res.status, 200);
  const v = await json<{ api?: unknown; text?: unknown; server?: unknown }>(res);
  assert.equal(typeof v.api, 'string');
  assert.equal(typeof v.text, 'string');
  assert.ok((v.text as string).startsWith('OctoPrint'), `validate_version_text refuses ${String(v.text)}`);
  assert.equal(typeof v.server, 'string');
  // PrusaLink host type also accepts an OctoPrint text.
  assert.match(v.text as string, /^(OctoPrint|PrusaLink)/);

  const bad = await s.api('/api/version', { key: 'WRONGKEY' });
  assert.ok(bad.status >= 400, `a wrong key must be an error for the slicer, got ${bad.status}`);
  const badBody = await json<{ error?: string }>(bad);
  assert.equal(typeof badBody.error, 'string');
});

test('Upload: multipart print="false", path="", file (octet-stream) → 2xx (no redirect), file stored, nothing printed', async (t) => {
  const s = await server(t);
  const gcode = smallGcode(20);
  // Every upload is preceded by the Test call.
  assert.equal((await s.api('/api/version')).status, 200);
  const res = await s.api('/api/files/local', { method: 'POST', body: form([['print', 'false'], ['path', '']], { name: 'benchy_0.2mm_PLA.gcode', content: gcode }), redirect: 'manual' });
  await expectStatus(res, 201, 'upload');
  // Bambu-lineage Http.cpp treats 3xx as neither success nor error.
  assert.ok(res.status >= 200 && res.status < 300);
  const body = await json<{ done: boolean; files: { local: { name: string; origin: string } } }>(res);
  assert.equal(body.files.local.name, 'benchy_0.2mm_PLA.gcode');
  assert.equal(body.files.local.origin, 'local');

  const info = await json<{ name: string; size: number }>(await s.api('/api/files/local/benchy_0.2mm_PLA.gcode'));
  assert.equal(info.size, Buffer.byteLength(gcode));
  const job = await json<{ state: string }>(await s.api('/api/job'));
  assert.ok(!job.state.startsWith('Printing'), `plain upload must not print (state ${job.state})`);
});

test('Upload into a subfolder: `path` is the parent folder of the upload path', async (t) => {
  const s = await server(t);
  assert.equal((await s.api('/api/files/local', { method: 'POST', body: form([['foldername', 'prints'], ['path', '']]) })).status, 201);
  const res = await s.api('/api/files/local', { method: 'POST', body: form([['print', 'false'], ['path', 'prints']], { name: 'cube.gcode', content: smallGcode(5) }) });
  await expectStatus(res, 201, 'upload into folder');
  const info = await s.api('/api/files/local/prints/cube.gcode');
  assert.equal(info.status, 200);
});

test('Upload and Print: print="true" on an operational printer starts the job', async (t) => {
  const s = await server(t);
  await connectPrinter(s);
  const res = await s.api('/api/files/local', { method: 'POST', body: form([['print', 'true'], ['path', '']], { name: 'go.gcode', content: smallGcode(400) }) });
  await expectStatus(res, 201, 'upload and print');
  const body = await json<{ done: boolean; files: { local: { name: string } } }>(res);
  assert.equal(body.files.local.name, 'go.gcode');
  const started = await waitFor('job on go.gcode', async () => {
    const job = await json<{ state: string; job: { file: { name: string | null } } }>(await s.api('/api/job'));
    return job.job.file.name === 'go.gcode' && /^(Printing|Starting|Operational|Finishing)/.test(job.state) ? job : undefined;
  });
  assert.equal(started.job.file.name, 'go.gcode');
  await waitFor('print done', async () => {
    const hist = await json<{ files: { name: string; prints?: { success: number } }[] }>(await s.api('/api/files/local'));
    const f = hist.files.find((x) => x.name === 'go.gcode');
    return (f?.prints?.success ?? 0) > 0 || undefined;
  }, 20_000);
});

test('libcurl as the slicers use it: -F parts, Expect: 100-continue on a large body, trimmed key', async (t) => {
  const s = await server(t);
  // Over 1 MB, so libcurl asks `Expect: 100-continue` before sending the body.
  const gcode = smallGcode(40_000);
  assert.ok(gcode.length > 1024 * 1024);
  const file = join(s.baseDir, 'curl upload.gcode');
  await writeFile(file, gcode);
  const { stdout } = await promisify(execFile)('curl', ['-sS', '-w', '\\n%{http_code}', '-H', `X-Api-Key: ${s.apiKey}`,
    '-F', 'print=false', '-F', 'path=', '-F', `file=@${file};filename=curl upload.gcode`, `${s.url}/api/files/local`]);
  const status = stdout.slice(stdout.lastIndexOf('\n') + 1);
  assert.equal(status, '201', stdout);
  const body = JSON.parse(stdout.slice(0, stdout.lastIndexOf('\n'))) as { files: { local: { name: string } } };
  // Spaces survive sanitising (OctoPrint only replaces them with enforceReallyUniversalFilenames).
  assert.equal(body.files.local.name, 'curl upload.gcode');
  const info = await s.api(`/api/files/local/${encodeURIComponent(body.files.local.name)}`);
  assert.equal(info.status, 200);
  assert.equal((await json<{ size: number }>(info)).size, Buffer.byteLength(gcode));
});
