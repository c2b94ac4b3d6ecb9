// Changes to the files asked for at the same moment over HTTP (two browser tabs, a farm manager's retries): each answers
// as it would one after the other — one succeeds, the rest say why not, none answers 500 — and disk and listing agree.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

function upload(s: TestServer, name: string, extra: Record<string, string> = {}): Promise<Response> {
  const form = new FormData();
  for (const [k, v] of Object.entries(extra)) form.set(k, v);
  form.set('file', new Blob(['G28\nG1 X10 E1\n']), name);
  return s.api('/api/files/local', { method: 'POST', body: form });
}

const statuses = async (answers: Promise<Response>[]): Promise<number[]> =>
  (await Promise.all(answers.map(async (a) => { const r = await a; await r.arrayBuffer(); return r.status; }))).sort();

/** The file names under the uploads folder with a metadata entry, by folder. */
async function metadataNames(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const folder of ['', 'f1', 'f2', 'f3']) {
    const text = await readFile(join(root, folder, '.metadata.json'), 'utf8').catch(() => '{}');
    for (const name of Object.keys(JSON.parse(text) as object)) out.push(join(folder, name));
  }
  return out.sort();
}

test('parallel moves of one file: one 201, the others 404, no 500; the file and its metadata are in one place', async (t) => {
  const s = await startTestServer(t);
  assert.equal((await upload(s, 'a.gcode')).status, 201);
  for (const f of ['f1', 'f2', 'f3']) assert.equal((await s.api('/api/files/local', { method: 'POST', body: (() => { const b = new FormData(); b.set('foldername', f); return b; })() })).status, 201);
  // The analysis writes metadata too: it is done first, so what is checked below is the moves' doing.
  await waitFor('the analysis', async () => ((await (await s.api('/api/files/local/a.gcode')).json()) as { gcodeAnalysis?: unknown }).gcodeAnalysis);
  const moves = Array.from({ length: 12 }, (_, i) => s.api('/api/files/local/a.gcode', { method: 'POST', json: { command: 'move', destination: `f${(i % 3) + 1}` } }));
  // Before, several passed the checks at once: the later renames failed (500) and the first move's metadata was left behind.
  assert.deepEqual(await statuses(moves), [201, ...Array<number>(11).fill(404)]);
  const root = s.paths.uploads;
  const placed = (await Promise.all(['f1', 'f2', 'f3'].map(async (f) => (await readdir(join(root, f))).includes('a.gcode') ? f : null))).filter(Boolean);
  assert.equal(placed.length, 1);
  // Metadata writes are batched: on disk within a moment (before, the entry at the old place stayed for good).
  await waitFor('metadata at the new place only', async () => (await metadataNames(root)).join() === `${placed[0]}/a.gcode`);
  const listed = (await (await s.api('/api/files/local?recursive=true')).json()) as { files: Array<{ children?: Array<{ path: string }> ; path: string }> };
  assert.deepEqual(listed.files.flatMap((e) => e.children ?? [e]).map((e) => e.path), [`${placed[0]}/a.gcode`]);
});

test('parallel uploads of one name with noOverwrite: one 201, the others 409', async (t) => {
  const s = await startTestServer(t);
  // Before, each checked that no file was there before any had been placed, and all 8 went in, one over another.
  assert.deepEqual(await statuses(Array.from({ length: 8 }, () => upload(s, 'same.gcode', { noOverwrite: 'true' }))), [201, ...Array<number>(7).fill(409)]);
});

test('parallel deletes of one file: one 204, the others 404', async (t) => {
  const s = await startTestServer(t);
  assert.equal((await upload(s, 'gone.gcode')).status, 201);
  assert.deepEqual(await statuses(Array.from({ length: 8 }, () => s.api('/api/files/local/gone.gcode', { method: 'DELETE' }))), [204, ...Array<number>(7).fill(404)]);
});
