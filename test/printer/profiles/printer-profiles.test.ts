// /api/printerprofiles over real HTTP: default shape, CRUD, validation 400s, delete rules, ETag, events, persistence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../../helpers/server.ts';
import { builtinDefaultProfile } from '../../../src/printer/profiles/printer-profile-shape.ts';

type Profile = Record<string, unknown> & { id: string; resource: string; default: boolean; current: boolean };

test('the list holds _default in OctoPrint shape with absolute resource, default and current', async (t) => {
  const s = await startTestServer(t);
  const res = await s.api('/api/printerprofiles');
  assert.equal(res.status, 200);
  const body = await res.json() as { profiles: Record<string, Profile> };
  assert.deepEqual(Object.keys(body.profiles), ['_default']);
  const { resource, default: isDefault, current, ...rest } = body.profiles._default;
  assert.deepEqual(rest, builtinDefaultProfile());
  assert.equal(resource, `${s.url}/api/printerprofiles/_default`);
  assert.equal(isDefault, true);
  assert.equal(current, true);
  const one = await s.api('/api/printerprofiles/_default');
  assert.equal(one.status, 200);
  assert.equal((await one.json() as Profile).name, 'Default');
  assert.equal((await s.api('/api/printerprofiles/nope')).status, 404);
});

test('resource URLs follow reverse-proxy headers', async (t) => {
  const s = await startTestServer(t);
  const res = await s.api('/api/printerprofiles/_default', {
    headers: { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'printer.example', 'X-Script-Name': '/octo' },
  });
  assert.equal((await res.json() as Profile).resource, 'https://printer.example/octo/api/printerprofiles/_default');
});

test('POST creates a profile based on another, sanitises the id, fires PrinterProfileAdded and persists as YAML', async (t) => {
  const s = await startTestServer(t);
  const seen: string[] = [];
  s.events.on('test', 'PrinterProfileAdded', (p) => seen.push(p.identifier));
  const res = await s.api('/api/printerprofiles', {
    method: 'POST',
    json: { profile: { id: 'My Prof!', name: 'Mine', volume: { width: '250' }, extruder: { count: '2', offsets: [[0, 0], [20, 0]] }, junk: 1 } },
  });
  assert.equal(res.status, 200);
  const { profile } = await res.json() as { profile: Profile & { volume: { width: number; depth: number }; extruder: { count: number } } };
  assert.equal(profile.id, 'My_Prof');
  assert.equal(profile.volume.width, 250);
  assert.equal(profile.volume.depth, 200);
  assert.equal(profile.extruder.count, 2);
  assert.equal(profile.default, false);
  assert.equal('junk' in profile, false);
  assert.equal(profile.resource, `${s.url}/api/printerprofiles/My_Prof`);
  assert.deepEqual(seen, ['My_Prof']);
  const text = await readFile(join(s.paths.printerProfiles, 'My_Prof.profile'), 'utf8');
  assert.match(text, /name: Mine/);

  const dup = await s.api('/api/printerprofiles', { method: 'POST', json: { profile: { id: 'My_Prof', name: 'again' } } });
  assert.equal(dup.status, 400);
  assert.deepEqual(await dup.json(), { error: 'Profile already exists and overwriting was not allowed' });

  const based = await s.api('/api/printerprofiles', { method: 'POST', json: { basedOn: 'My_Prof', profile: { id: 'child', name: 'Child' } } });
  const child = (await based.json() as { profile: { extruder: { count: number }; name: string } }).profile;
  assert.equal(child.extruder.count, 2);
  assert.equal(child.name, 'Child');
});

test('POST validation errors are 400 with the reference texts', async (t) => {
  const s = await startTestServer(t);
  const post = async (json: unknown) => {
    const res = await s.api('/api/printerprofiles', { method: 'POST', json });
    return { status: res.status, body: await res.json() as { error: string } };
  };
  assert.deepEqual(await post({}), { status: 400, body: { error: 'profile is missing' } });
  assert.deepEqual(await post({ profile: { name: 'x' } }), { status: 400, body: { error: 'profile.id is missing' } });
  assert.deepEqual(await post({ profile: { id: 'x' } }), { status: 400, body: { error: 'profile.name is missing' } });
  for (const profile of [
    { extruder: { count: 0 } },
    { extruder: { count: 100 } },
    { extruder: { count: 'many' } },
    { volume: { width: -1 } },
    { volume: { height: 10000 } },
    { volume: { formFactor: 'triangle' } },
    { volume: { origin: 'middle' } },
    { extruder: { offsets: [[1, 2, 3]] } },
    { axes: { x: { speed: 'fast' } } },
    { heatedBed: 'maybe' },
  ]) {
    const r = await post({ profile: { id: 'bad', name: 'Bad', ...profile } });
    assert.deepEqual(r, { status: 400, body: { error: 'profile is invalid' } }, JSON.stringify(profile));
  }
  assert.equal((await s.api('/api/printerprofiles/bad')).status, 404);
});

test('circular beds are centred and square; custom boxes are clamped and the default box collapses to false', async (t) => {
  const s = await startTestServer(t);
  const res = await s.api('/api/printerprofiles', {
    method: 'POST',
    json: { profile: { id: 'delta', name: 'Delta', volume: { formFactor: 'circular', width: 180, depth: 50, origin: 'lowerleft',
      custom_box: { x_min: -100, x_max: 10, y_min: null } } } },
  });
  const vol = (await res.json() as { profile: { volume: Record<string, unknown> } }).profile.volume;
  assert.equal(vol.origin, 'center');
  assert.equal(vol.depth, 180);
  assert.deepEqual(vol.custom_box, { x_min: -100, y_min: -90, z_min: 0, x_max: 90, y_max: 90, z_max: 200 });
  const same = await s.api('/api/printerprofiles', {
    method: 'POST',
    json: { profile: { id: 'box', name: 'Box', volume: { custom_box: { x_min: 0, x_max: 200 } } } },
  });
  assert.equal((await same.json() as { profile: { volume: { custom_box: unknown } } }).profile.volume.custom_box, false);
});

test('PATCH deep-merges, can make a profile default, and an unknown id lands on the default profile', async (t) => {
  const s = await startTestServer(t);
  const modified: string[] = [];
  s.events.on('test', 'PrinterProfileModified', (p) => modified.push(p.identifier));
  await s.api('/api/printerprofiles', { method: 'POST', json: { profile: { id: 'p1', name: 'One' } } });
  const res = await s.api('/api/printerprofiles/p1', { method: 'PATCH', json: { profile: { axes: { z: { speed: 400 } }, default: true } } });
  assert.equal(res.status, 200);
  const p = (await res.json() as { profile: Profile & { axes: { z: { speed: number; inverted: boolean }; x: { speed: number } } } }).profile;
  assert.deepEqual(p.axes.z, { speed: 400, inverted: false });
  assert.equal(p.axes.x.speed, 6000);
  assert.equal(p.default, true);
  assert.equal(s.config.current.printerProfiles.default, 'p1');
  const list = await (await s.api('/api/printerprofiles')).json() as { profiles: Record<string, Profile> };
  assert.equal(list.profiles._default.default, false);
  assert.equal(list.profiles.p1.current, true, 'not connected: the default is current');

  const quirk = await s.api('/api/printerprofiles/zzz', { method: 'PATCH', json: { profile: { name: 'Renamed' } } });
  assert.equal(quirk.status, 200);
  assert.equal((await quirk.json() as { profile: Profile }).profile.id, 'p1');
  assert.deepEqual(modified, ['p1', 'p1']);

  const missing = await s.api('/api/printerprofiles/p1', { method: 'PATCH', json: {} });
  assert.deepEqual([missing.status, await missing.json()], [400, { error: 'profile missing' }]);
  const invalidPatch = await s.api('/api/printerprofiles/p1', { method: 'PATCH', json: { profile: { extruder: { count: 0 } } } });
  assert.deepEqual([invalidPatch.status, await invalidPatch.json()], [400, { error: 'profile is invalid' }]);
});

test('DELETE: 204 for unknown ids, 409 for the default and the selected profile, event on success', async (t) => {
  const s = await startTestServer(t);
  const deleted: string[] = [];
  s.events.on('test', 'PrinterProfileDeleted', (p) => deleted.push(p.identifier));
  assert.equal((await s.api('/api/printerprofiles/ghost', { method: 'DELETE' })).status, 204);
  const def = await s.api('/api/printerprofiles/_default', { method: 'DELETE' });
  assert.deepEqual([def.status, await def.json()], [409, { error: 'Cannot delete default profile' }]);
  await s.api('/api/printerprofiles', { method: 'POST', json: { profile: { id: 'p2', name: 'Two' } } });
  s.printerProfiles.select('p2');
  const sel = await s.api('/api/printerprofiles/p2', { method: 'DELETE' });
  assert.deepEqual([sel.status, await sel.json()], [409, { error: 'Cannot delete currently selected profile' }]);
  s.printerProfiles.select(null);
  const ok = await s.api('/api/printerprofiles/p2', { method: 'DELETE' });
  assert.equal(ok.status, 204);
  assert.equal(await ok.text(), '');
  assert.equal((await s.api('/api/printerprofiles/p2')).status, 404);
  assert.deepEqual(deleted, ['p2']);
});

test('ETag revalidation answers 304 until something changes; force=true bypasses it', async (t) => {
  const s = await startTestServer(t);
  const first = await s.api('/api/printerprofiles');
  const etag = first.headers.get('etag') ?? '';
  assert.ok(etag);
  assert.ok(first.headers.get('last-modified'));
  assert.equal((await s.api('/api/printerprofiles', { headers: { 'If-None-Match': etag } })).status, 304);
  assert.equal((await s.api('/api/printerprofiles?force=true', { headers: { 'If-None-Match': etag } })).status, 200);
  await s.api('/api/printerprofiles', { method: 'POST', json: { profile: { id: 'new', name: 'New' } } });
  assert.equal((await s.api('/api/printerprofiles', { headers: { 'If-None-Match': etag } })).status, 200);
});

test('writes need SETTINGS, reads CONNECTION; profiles survive a restart and hand-written files are completed', async (t) => {
  const s = await startTestServer(t);
  assert.equal((await s.api('/api/printerprofiles', { key: null })).status, 403);
  assert.equal((await s.api('/api/printerprofiles', { method: 'POST', key: null, json: { profile: { id: 'a', name: 'A' } } })).status, 403);
  await s.api('/api/printerprofiles', { method: 'POST', json: { profile: { id: 'kept', name: 'Kept', heatedBed: false } } });
  await writeFile(join(s.paths.printerProfiles, 'hand.profile'), 'name: Hand\nextruder:\n  count: 3\n');
  await writeFile(join(s.paths.printerProfiles, 'broken.profile'), 'name: [unclosed\n');
  await s.printerProfiles.start();
  assert.equal(s.printerProfiles.get('kept')?.heatedBed, false);
  const hand = s.printerProfiles.get('hand');
  assert.equal(hand?.extruder.count, 3);
  assert.equal(hand?.axes.x.speed, 6000);
  assert.equal(s.printerProfiles.get('broken'), undefined);
});

test('connecting with a profile makes it current; it cannot be deleted while selected', async (t) => {
  const s = await startTestServer(t, { settings: { devel: { virtualPrinter: { throttle: 0 } } } });
  await s.api('/api/printerprofiles', { method: 'POST', json: { profile: { id: 'mk3', name: 'MK3', extruder: { count: 1 } } } });
  const res = await s.api('/api/connection', { method: 'POST', json: { command: 'connect', port: 'VIRTUAL', baudrate: 115200, printerProfile: 'mk3' } });
  assert.equal(res.status, 204);
  // Connecting runs asynchronously after the 204; the profile is selected as the link starts.
  let list = await (await s.api('/api/printerprofiles')).json() as { profiles: Record<string, Profile> };
  for (const deadline = Date.now() + 5000; !list.profiles.mk3.current && Date.now() < deadline;) {
    await new Promise((r) => setTimeout(r, 50));
    list = await (await s.api('/api/printerprofiles')).json() as { profiles: Record<string, Profile> };
  }
  assert.equal(list.profiles.mk3.current, true);
  assert.equal(list.profiles._default.current, false);
  assert.equal(list.profiles._default.default, true);
  const del = await s.api('/api/printerprofiles/mk3', { method: 'DELETE' });
  assert.deepEqual([del.status, await del.json()], [409, { error: 'Cannot delete currently selected profile' }]);
  assert.equal((await s.api('/api/connection', { method: 'POST', json: { command: 'disconnect' } })).status, 204);
  // The disconnect completes asynchronously; the selection is dropped once the link is closed.
  const deadline = Date.now() + 5000;
  for (;;) {
    const after = await (await s.api('/api/printerprofiles')).json() as { profiles: Record<string, Profile> };
    if (after.profiles._default.current) break;
    assert.ok(Date.now() < deadline, 'the default profile becomes current again after disconnecting');
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal((await s.api('/api/printerprofiles/mk3', { method: 'DELETE' })).status, 204);
});

test('machineLimits and extruder.filamentDiameter (Gantry\'s additions) are validated, kept, merged and cleared with null', async (t) => {
  const s = await startTestServer(t);
  const machineLimits = { maxAcceleration: { x: 500, y: 500 }, printAcceleration: 800, jerk: { x: 0 }, junctionDeviation: 0 };
  const created = await s.api('/api/printerprofiles', { method: 'POST', json: { profile: {
    id: 'mk3', name: 'MK3', machineLimits, extruder: { filamentDiameter: '2.85' },
  } } });
  assert.equal(created.status, 200);
  const p = (await created.json() as { profile: Profile & { machineLimits: unknown; extruder: { filamentDiameter: number } } }).profile;
  assert.deepEqual(p.machineLimits, machineLimits);
  assert.equal(p.extruder.filamentDiameter, 2.85);
  // Left unset they are absent, so the default profile keeps OctoPrint's shape exactly.
  const plain = (await (await s.api('/api/printerprofiles/_default')).json()) as Record<string, unknown> & { extruder: Record<string, unknown> };
  assert.equal('machineLimits' in plain, false);
  assert.equal('filamentDiameter' in plain.extruder, false);

  for (const bad of [
    { machineLimits: { printAcceleration: 0 } }, { machineLimits: { maxFeedrate: { x: -1 } } }, { machineLimits: { jerk: { x: 'fast' } } },
    { machineLimits: 'none' }, { extruder: { filamentDiameter: 0 } }, { extruder: { filamentDiameter: 40 } },
  ]) {
    const r = await s.api('/api/printerprofiles/mk3', { method: 'PATCH', json: { profile: bad } });
    assert.deepEqual([r.status, await r.json()], [400, { error: 'profile is invalid' }], JSON.stringify(bad));
  }
  const merged = await s.api('/api/printerprofiles/mk3', { method: 'PATCH', json: { profile: { machineLimits: { travelAcceleration: 1500, jerk: { x: null } } } } });
  const m = (await merged.json() as { profile: { machineLimits: unknown } }).profile;
  assert.deepEqual(m.machineLimits, { maxAcceleration: { x: 500, y: 500 }, printAcceleration: 800, travelAcceleration: 1500, junctionDeviation: 0 });
  // Kept on disk and read back at the next start.
  const stored = await readFile(join(s.baseDir, 'printerProfiles', 'mk3.profile'), 'utf8');
  assert.match(stored, /travelAcceleration: 1500/);
  const cleared = await s.api('/api/printerprofiles/mk3', { method: 'PATCH', json: { profile: { machineLimits: null, extruder: { filamentDiameter: null } } } });
  const c = (await cleared.json() as { profile: Record<string, unknown> & { extruder: Record<string, unknown> } }).profile;
  assert.equal('machineLimits' in c, false);
  assert.equal('filamentDiameter' in c.extruder, false);
});

test('changes asked for at once answer as if asked in turn: one add of an id, every PATCH kept, on disk as in memory', async (t) => {
  const s = await startTestServer(t);
  const added: string[] = [];
  s.events.on('parallel-profiles-test', 'PrinterProfileAdded', (p) => added.push(p.identifier));
  t.after(() => s.events.removeOwner('parallel-profiles-test'));
  const adds = await Promise.all(Array.from({ length: 8 }, () => s.api('/api/printerprofiles', { method: 'POST', json: { profile: { id: 'twin', name: 'Twin' } } })));
  // Before, each found no profile of that id and all eight were added.
  assert.deepEqual(adds.map((r) => r.status).sort(), [200, ...Array<number>(7).fill(400)]);
  assert.deepEqual(added, ['twin']);
  // Before, each PATCH merged onto the profile as it was before any of them: the last one written lost the others.
  const patches = await Promise.all(['width', 'depth', 'height'].map((axis, i) =>
    s.api('/api/printerprofiles/twin', { method: 'PATCH', json: { profile: { volume: { [axis]: 101 + i } } } })));
  assert.deepEqual(patches.map((r) => r.status), [200, 200, 200]);
  const volume = ((await (await s.api('/api/printerprofiles/twin')).json()) as { volume: Record<string, unknown> }).volume;
  assert.deepEqual([volume.width, volume.depth, volume.height], [101, 102, 103]);
  const onDisk = await readFile(join(s.paths.printerProfiles, 'twin.profile'), 'utf8');
  assert.match(onDisk, /width: 101\n\s+depth: 102\n\s+height: 103\n/);
});
