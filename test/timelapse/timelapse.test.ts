// Timelapse end to end on the virtual printer with a fake camera and Debian's ffmpeg: z-change and timed captures,
// post roll, the rendered movie checked with ffprobe, events in order, listing, downloads, permissions, a dead camera,
// a failing encoder, unrendered jobs, and stabilised snapshots (park moves, same extruded length).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { connectedServer, waitFor } from '../printer/helpers.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { uploadFile } from '../printer/job/helpers.ts';
import { rawClient, userWithKey } from '../push/push-clients.ts';
import { FFMPEG, events, fakeCamera, layeredGcode, probe, type Json } from './helpers.ts';
import { needs } from '../helpers/tools.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const TIMELAPSE_EVENTS = new Set(['PrintStarted', 'PrintDone', 'PrintFailed', 'CaptureStart', 'CaptureDone', 'CaptureFailed', 'PostRollStart',
  'PostRollEnd', 'MovieRendering', 'MovieDone', 'MovieFailed']);

async function configure(s: TestServer, body: Json): Promise<Response> {
  return s.api('/api/timelapse', { method: 'POST', json: body });
}

async function print(s: TestServer, name: string, text: string): Promise<void> {
  const r = await uploadFile(s, name, text, [{ name: 'print', value: 'true' }]);
  assert.equal(r.status, 201, await r.text());
}

test('zchange: a frame per layer (z-hops skipped), post roll, a real mp4 with thumbnail, events in order, listing and downloads', { skip: needs('ffmpeg') }, async (t) => {
  const cam = await fakeCamera(t);
  // Layers some ms apart: with the link in its own thread, Z changes reach the main thread in bursts, and layers that
  // arrive closer than minDelay (1 ms here) are one frame. A real print's layers are seconds apart.
  const s = await connectedServer(t, { webcam: { snapshot: cam.url, ffmpeg: FFMPEG, watermark: true }, devel: { virtualPrinter: { throttle: 0.05, busyInterval: 0.2 } } });
  const ev = events(s);
  const push = await rawClient(s);
  const { auth } = await userWithKey(s, 'watcher', { groups: ['users'] });
  push.send({ auth });
  assert.equal(await push.next('timelapse'), null, 'off at first');

  const res = await configure(s, { type: 'zchange', fps: 5, postRoll: 1, retractionZHop: 0.4, minDelay: 0.001 });
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { config: { type: 'zchange', fps: 5, postRoll: 1, retractionZHop: 0.4, minDelay: 0.001 }, enabled: true, files: [] });
  assert.deepEqual(await push.next('timelapse', (p: Json | null) => p !== null), { type: 'zchange', options: { retractionZHop: 0.4 } });

  const layers = 4;
  await print(s, 'tl_test.gcode', layeredGcode(layers).text);
  const done = await ev.next('MovieDone', 40_000);
  assert.match(done.movie_basename, /^tl_test_\d{14}\.mp4$/);
  assert.equal(done.gcode, 'tl_test.gcode');
  assert.equal(done.movie, join(s.paths.timelapse, done.movie_basename));
  assert.equal(done.movie_prefix, done.movie_basename.replace(/\.mp4$/, ''));

  // Frames are taken off the streaming path, so on the fast virtual printer the print may end before the last ones.
  const seq = ev.names().filter((n) => TIMELAPSE_EVENTS.has(n));
  const captures = layers;
  assert.deepEqual(seq.filter((n) => n !== 'PrintDone'), ['PrintStarted', ...Array(captures).fill(['CaptureStart', 'CaptureDone']).flat(),
    'PostRollStart', 'CaptureStart', 'CaptureDone', 'PostRollEnd', 'MovieRendering', 'MovieDone']);
  assert.ok(seq.indexOf('PrintDone') < seq.indexOf('PostRollStart'), 'post roll after the print');
  const frames = ev.list.filter((e) => e.name === 'CaptureDone').map((e) => e.payload.file as string);
  assert.deepEqual(frames.map((f) => f.slice(f.lastIndexOf('-'))), ['-0.jpg', '-1.jpg', '-2.jpg', '-3.jpg', '-4.jpg']);
  assert.deepEqual(ev.list.find((e) => e.name === 'PostRollStart')!.payload, { postroll_duration: null, postroll_length: 1, postroll_fps: 5 });

  // captures + post roll: the post-roll frame repeated postRoll × fps more times.
  const movie = await probe(done.movie);
  assert.equal(movie.frames, captures + 1 + 5);
  assert.equal(movie.codec, 'h264');
  assert.equal(movie.pixFmt, 'yuv420p');
  assert.deepEqual(await readdir(join(s.paths.timelapse, 'tmp')), [], 'frames removed after the render');
  assert.ok(!(await readdir(s.paths.timelapse)).some((n) => n.startsWith('.')), 'no hidden temp file left');
  // renderProgress for a 2 s movie, and the MovieDone event on the socket.
  const progress = await push.next('renderProgress') as Json;
  assert.equal(typeof progress.progress, 'number');
  await push.next('event', (e: Json) => e.type === 'MovieDone');
  const order = push.messages.map((m) => ('renderProgress' in m ? 'progress' : (m.event as Json | undefined)?.type)).filter((n) => n === 'progress' || n === 'MovieRendering' || n === 'MovieDone');
  assert.equal(order[0], 'MovieRendering');
  assert.equal(order[order.length - 1], 'MovieDone');
  assert.ok(order.includes('progress'));

  const list = await (await s.api('/api/timelapse?unrendered=true')).json() as Json;
  assert.equal(list.files.length, 1);
  const f = list.files[0];
  assert.equal(f.name, done.movie_basename);
  assert.equal(f.url, `/downloads/timelapse/${f.name}`);
  assert.equal(f.thumbnail, `/downloads/timelapse/${f.name}.thumb.jpg`);
  assert.match(f.size, /^\d+\.\dKB$/);
  assert.deepEqual(list.unrendered, []);

  const dl = await s.api(f.url);
  assert.equal(dl.status, 200);
  assert.equal(dl.headers.get('content-type'), 'video/mp4');
  assert.match(dl.headers.get('content-disposition') ?? '', /^attachment; filename="tl_test_\d+\.mp4"; filename\*=UTF-8''tl_test_/);
  assert.equal(dl.headers.get('cache-control'), 'max-age=0, must-revalidate, private');
  assert.equal((await dl.arrayBuffer()).byteLength, f.bytes);
  const thumb = await s.api(f.thumbnail);
  assert.equal(thumb.headers.get('content-type'), 'image/jpeg');
  assert.deepEqual([...new Uint8Array(await thumb.arrayBuffer()).slice(0, 2)], [0xff, 0xd8]);
  const redirect = await s.api(`/api/timelapse/${f.name}?x=1`, { redirect: 'manual' });
  assert.equal(redirect.status, 302);
  assert.equal(redirect.headers.get('location'), `${s.url}/downloads/timelapse/${f.name}?x=1`);
  const zip = await s.api(`/downloads/timelapses?files=${f.name}`);
  assert.equal(zip.status, 200);
  assert.equal(zip.headers.get('content-type'), 'application/zip');
  assert.equal(Buffer.from(await zip.arrayBuffer()).subarray(0, 2).toString(), 'PK');
  assert.equal((await s.api('/downloads/timelapses?files=../config.yaml')).status, 400);
  assert.equal((await s.api('/downloads/timelapse/config.yaml')).status, 404);

  // ETag revalidation; force always answers.
  const first = await s.api('/api/timelapse');
  const etag = first.headers.get('etag')!;
  assert.equal((await s.api('/api/timelapse', { headers: { 'If-None-Match': etag } })).status, 304);
  assert.equal((await s.api('/api/timelapse?force=true', { headers: { 'If-None-Match': etag } })).status, 200);

  const del = await s.api(`/api/timelapse/${f.name}`, { method: 'DELETE' });
  assert.equal(del.status, 200);
  assert.deepEqual((await del.json() as Json).files, []);
  assert.deepEqual(await readdir(s.paths.timelapse), ['tmp'], 'movie and thumbnail gone');
  assert.equal((await s.api('/api/timelapse/missing.mp4', { method: 'DELETE' })).status, 200);
});

test('timed with a failing encoder: MovieFailed says why and keeps the frames; the unrendered job renders by hand', { skip: needs('ffmpeg') }, async (t) => {
  const cam = await fakeCamera(t);
  const dir = await tempDir(t, 'gantry-badffmpeg-');
  const bad = join(dir, 'ffmpeg');
  await writeFile(bad, '#!/bin/sh\necho "simulated encoder failure" >&2\nexit 1\n');
  await chmod(bad, 0o755);
  // Real-time virtual printer so the dwell makes the print last long enough for timed frames.
  const s = await connectedServer(t, { webcam: { snapshot: cam.url, ffmpeg: bad, watermark: false, flipV: true },
    devel: { virtualPrinter: { throttle: 1, busyInterval: 0.2 } } });
  const ev = events(s);
  const res = await s.api('/api/timelapse', { method: 'POST', body: 'type=timed&interval=1&postRoll=0&fps=4&save=true',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
  assert.equal(res.status, 200);
  assert.deepEqual((await res.json() as Json).config, { type: 'timed', fps: 4, postRoll: 0, interval: 1 });
  assert.equal(s.config.current.webcam.timelapse.type, 'timed', 'saved by the global key (admins)');

  await print(s, 'timed.gcode', 'G90\nG1 X10 F6000\nG4 P2500\nG1 X20\n');
  const failed = await ev.next('MovieFailed', 30_000);
  assert.equal(failed.reason, 'returncode');
  assert.equal(failed.returncode, 1);
  assert.deepEqual(failed.error, ['simulated encoder failure\n']);
  assert.deepEqual(failed.out, []);
  const captures = ev.names().filter((n) => n === 'CaptureDone').length;
  assert.ok(captures >= 2, `timed frames at +0 s and +1 s (got ${captures})`);
  const names = ev.names().filter((n) => TIMELAPSE_EVENTS.has(n));
  assert.deepEqual(names.slice(-2), ['MovieRendering', 'MovieFailed']);

  const unrendered = (await (await s.api('/api/timelapse?unrendered=true')).json() as Json).unrendered as Json[];
  assert.equal(unrendered.length, 1);
  assert.equal(unrendered[0].name, failed.movie_prefix);
  assert.equal(unrendered[0].count, captures);
  assert.deepEqual([unrendered[0].recording, unrendered[0].rendering, unrendered[0].processing], [false, false, false]);

  // Fix the encoder through the settings (a dead path is refused there), then render the kept frames.
  const refused = await s.api('/api/settings', { method: 'POST', json: { webcam: { ffmpegPath: join(dir, 'nope') } } });
  assert.equal(refused.status, 400);
  assert.match((await refused.json() as Json).error, /ffmpegPath/);
  assert.equal((await s.api('/api/settings', { method: 'POST', json: { webcam: { ffmpegPath: FFMPEG } } })).status, 200);
  assert.equal((await s.api(`/api/timelapse/unrendered/${failed.movie_prefix}`, { method: 'POST', json: { command: 'frobnicate' } })).status, 400);
  const render = await s.api(`/api/timelapse/unrendered/${failed.movie_prefix}`, { method: 'POST', json: { command: 'render' } });
  assert.equal(render.status, 204);
  const done = await ev.next('MovieDone', 30_000);
  assert.equal(done.gcode, 'unknown');
  const movie = await probe(done.movie);
  assert.equal(movie.frames, captures);
  // flipV only, no watermark: the 64×48 test pattern keeps its size.
  assert.deepEqual([movie.width, movie.height], [64, 48]);

  const none = await s.api('/api/timelapse/unrendered/nothing_here', { method: 'POST', json: { command: 'render' } });
  assert.equal(none.status, 204);
  const noFrames = await ev.next('MovieFailed');
  assert.equal(noFrames.reason, 'no_frames');
  assert.equal(noFrames.movie_basename, 'nothing_here.mp4');
});

test('a cancelled print renders `<prefix>-fail.mpg` with mpeg2video (vob), no post roll', { skip: needs('ffmpeg') }, async (t) => {
  const cam = await fakeCamera(t);
  const s = await connectedServer(t, { webcam: { snapshot: cam.url, ffmpeg: FFMPEG, ffmpegVideoCodec: 'mpeg2video' },
    devel: { virtualPrinter: { throttle: 0.2, busyInterval: 0.2 } } });
  const ev = events(s);
  assert.equal((await configure(s, { type: 'zchange', minDelay: 0.001 })).status, 200);
  await print(s, 'long.gcode', layeredGcode(2, { hop: 0, extra: ['G1 Z0.1 F600', 'G4 P15000'] }).text);
  await ev.next('CaptureDone');
  // While printing: the job's frames are `recording`, and nothing renders by hand.
  const during = (await (await s.api('/api/timelapse?unrendered=true')).json() as Json).unrendered as Json[];
  assert.deepEqual(during.map((u) => [u.count, u.recording, u.processing]), [[1, true, true]]);
  assert.equal((await s.api(`/api/timelapse/unrendered/${during[0].name}`, { method: 'DELETE' })).status, 409);
  const busy = await s.api(`/api/timelapse/unrendered/${during[0].name}`, { method: 'POST', json: { command: 'render' } });
  assert.deepEqual([busy.status, await busy.json()], [409, { error: 'Printer is currently printing, cannot render timelapse' }]);
  const cancel = await s.api('/api/job', { method: 'POST', json: { command: 'cancel' } });
  assert.equal(cancel.status, 204);
  const done = await ev.next('MovieDone', 30_000);
  assert.match(done.movie_basename, /^long_\d{14}-fail\.mpg$/);
  assert.equal(done.movie_prefix, done.movie_basename.replace(/-fail\.mpg$/, ''));
  const seq = ev.names().filter((n) => TIMELAPSE_EVENTS.has(n));
  assert.deepEqual(seq.slice(seq.indexOf('PrintFailed')), ['PrintFailed', 'MovieRendering', 'MovieDone']);
  const movie = await probe(done.movie);
  assert.equal(movie.codec, 'mpeg2video');
  assert.equal(movie.frames, ev.names().filter((n) => n === 'CaptureDone').length);
  const listed = (await (await s.api('/api/timelapse')).json() as Json).files as Json[];
  assert.deepEqual(listed.map((f) => f.name), [done.movie_basename]);
  assert.equal((await s.api(listed[0].url)).headers.get('content-type'), 'video/mpeg');
});

test('a dead camera: CaptureFailed, the print finishes, MovieFailed no_frames; ffmpeg or camera missing is a 400 at config time', async (t) => {
  const cam = await fakeCamera(t);
  cam.dead = true;
  const s = await connectedServer(t, { webcam: { snapshot: cam.url } });
  const missing = await configure(s, { type: 'zchange' });
  assert.equal(missing.status, 400);
  assert.match((await missing.json() as Json).error, /ffmpeg/);
  await s.config.patch({ webcam: { ffmpeg: FFMPEG } });
  const ev = events(s);
  assert.equal((await configure(s, { type: 'zchange', minDelay: 0.001 })).status, 200);
  await print(s, 'dead.gcode', layeredGcode(3, { hop: 0 }).text);
  const failure = await ev.next('CaptureFailed');
  assert.match(failure.error, /^500 Server Error: .* for url: http:\/\/127\.0\.0\.1/);
  assert.equal(failure.webcamDisplay, 'Classic Webcam');
  assert.equal(failure.snapshotDisplay, cam.url);
  assert.equal(failure.webcamProvider, 'classicwebcam');
  await ev.next('PrintDone');
  const mf = await ev.next('MovieFailed');
  assert.deepEqual({ ...mf, movie_prefix: undefined }, { gcode: 'dead.gcode', movie: 'n/a', movie_basename: 'a', movie_prefix: undefined,
    returncode: 0, out: '', error: '', reason: 'no_frames' });
  // While the camera fails, layers do not pile up more timeouts behind the one in progress.
  assert.ok(ev.names().filter((n) => n === 'CaptureFailed').length >= 1);
  assert.equal(ev.names().includes('MovieRendering'), false);

  await s.config.patch({ webcam: { snapshot: '' } });
  const noCam = await configure(s, { type: 'timed' });
  assert.equal(noCam.status, 400);
  assert.match((await noCam.json() as Json).error, /snapshotUrl/);
});

test('a camera that never answers does not keep a stopped server alive: the frame under way is given up at the stop, and no CaptureFailed follows', async (t) => {
  const sockets: Socket[] = [];
  let asked: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => { asked = resolve; });
  const camera = createServer((req) => { sockets.push(req.socket); asked(); }); // never answers
  await new Promise<void>((r) => camera.listen(0, '127.0.0.1', r));
  t.after(() => { for (const sk of sockets) sk.destroy(); camera.close(); });
  const url = `http://127.0.0.1:${(camera.address() as AddressInfo).port}/snapshot`;
  const s = await connectedServer(t, { webcam: { snapshot: url, ffmpeg: FFMPEG, snapshotTimeout: 120 } });
  const ev = events(s);
  assert.equal((await configure(s, { type: 'timed', interval: 1 })).status, 200);
  await print(s, 'watched.gcode', layeredGcode(200, { hop: 0 }).text);
  await ev.next('CaptureStart');
  await reached;
  const closed = new Promise((resolve) => sockets[0].once('close', () => resolve('closed')));
  await s.stop();
  // Before, the request stayed open until the snapshot timeout (here 120 s), and with it the stopped server's process.
  let bound: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([closed, new Promise((r) => { bound = setTimeout(() => r('still open 20 s after the stop'), 20_000); })]);
  clearTimeout(bound);
  assert.equal(outcome, 'closed');
  assert.equal(ev.names().includes('CaptureFailed'), false);
});

test('config POST: 1.9.3 validation, defaults for omitted fields, save only for admins; permissions of every route', async (t) => {
  const s = await startTestServer(t, { settings: { webcam: { snapshot: 'http://127.0.0.1:9/snap', ffmpeg: FFMPEG } } });
  for (const [body, error] of [[{ type: 'timed', fps: 0 }, 'fps is invalid'], [{ type: 'timed', postRoll: -1 }, 'postRoll is invalid'],
    [{ type: 'timed', interval: 'x' }, 'interval is invalid'], [{ type: 'zchange', minDelay: 0 }, 'minDelay is invalid'],
    [{ type: 'zchange', retractionZHop: -0.1 }, 'retractionZHop is invalid'], [{ type: 'timed', fps: null }, 'fps is invalid'],
    [{ type: 'foo' }, 'type is invalid']] as const) {
    const r = await configure(s, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.deepEqual(await r.json(), { error }, JSON.stringify(body));
  }
  assert.deepEqual((await (await configure(s, { type: 'timed', interval: 1.5 })).json() as Json).config, { type: 'timed', postRoll: 0, fps: 25, interval: 1 });
  assert.deepEqual((await (await configure(s, { fps: 3 })).json() as Json).config, { type: 'timed', postRoll: 0, fps: 25, interval: 1 }, 'no type: unchanged');
  assert.deepEqual((await (await configure(s, { type: 'zchange' })).json() as Json).config,
    { type: 'zchange', postRoll: 0, fps: 25, retractionZHop: 0, minDelay: 5 }, 'omitted fields take defaults');
  assert.equal(s.config.current.webcam.timelapse.type, 'off', 'nothing saved without save');

  await s.access.users.addUser({ name: 'tl_user', password: 'pw-123456', groups: ['users'] });
  await s.access.users.addUser({ name: 'tl_ro', password: 'pw-123456', groups: ['readonly'] });
  const user = await s.access.users.generateUserKey('tl_user');
  const ro = await s.access.users.generateUserKey('tl_ro');
  const applied = await s.api('/api/timelapse', { method: 'POST', json: { type: 'timed', interval: 7, save: true }, key: user });
  assert.equal(applied.status, 200);
  assert.deepEqual((await applied.json() as Json).config, { type: 'timed', postRoll: 0, fps: 25, interval: 7 });
  assert.equal(s.config.current.webcam.timelapse.type, 'off', 'save by a non-admin is ignored');
  await configure(s, { type: 'zchange', minDelay: 2, save: true });
  const disk = await readFile(s.paths.config, 'utf8');
  assert.match(disk, /timelapse:\n\s+type: zchange/);
  assert.deepEqual(s.config.current.webcam.timelapse.options, { interval: null, retractionZHop: 0, minDelay: 2 });

  // Concurrent saves: what is applied in memory is what is on disk.
  const answers = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map((fps) => configure(s, { type: 'timed', interval: 2, fps, save: true })));
  assert.deepEqual(answers.map((r) => r.status), Array(8).fill(200));
  const now = (await (await s.api('/api/timelapse')).json() as Json).config;
  assert.equal(now.fps, s.config.current.webcam.timelapse.fps);
  assert.match(await readFile(s.paths.config, 'utf8'), new RegExp(`fps: ${now.fps}\\n`));

  assert.equal((await s.api('/api/timelapse', { key: ro })).status, 200);
  assert.equal((await s.api('/api/timelapse?unrendered=true', { key: ro })).status, 200);
  for (const [method, path, key, status] of [
    ['GET', '/api/timelapse', null, 403], ['POST', '/api/timelapse', ro, 403], ['DELETE', '/api/timelapse/a.mp4', ro, 403],
    ['DELETE', '/api/timelapse/unrendered/a', ro, 403], ['POST', '/api/timelapse/unrendered/a', ro, 403],
    ['GET', '/downloads/timelapse/a.mp4', null, 403], ['GET', '/downloads/timelapses?files=a.mp4', null, 403],
    ['DELETE', '/api/timelapse/a.mp4', user, 200], ['DELETE', '/api/timelapse/unrendered/a', user, 204],
    ['GET', '/downloads/timelapse/a.mp4', ro, 404], ['GET', '/api/timelapse/..%2Fx.mp4', user, 404],
  ] as const) {
    const r = await s.api(path, { method, key, ...(method === 'POST' ? { json: { command: 'render' } } : {}) });
    assert.equal(r.status, status, `${method} ${path} as ${key === null ? 'anonymous' : key === ro ? 'readonly' : 'user'}`);
    await r.arrayBuffer();
  }
});

test('stabilised snapshots: the head parks at every layer change while the frame is taken, and extrudes the same length', async (t) => {
  const cam = await fakeCamera(t);
  cam.delayMs = 150;
  const s = await connectedServer(t, { serial: { log: true }, webcam: { snapshot: cam.url, ffmpeg: FFMPEG, watermark: false,
    stabilize: { enabled: true, x: 5, y: 195, retract: 1, lift: 0.5, delay: 0 } } });
  const ev = events(s);
  const atSnapshot: string[][] = [];
  cam.onRequest = () => atSnapshot.push(s.printer.terminal().filter((l) => l.startsWith('Send: ')));
  assert.equal((await configure(s, { type: 'zchange', minDelay: 0.001, retractionZHop: 0.4 })).status, 200);
  const layers = 3;
  const { text, totalE } = layeredGcode(layers);
  await print(s, 'park.gcode', text);
  const done = await ev.next('MovieDone', 40_000);
  assert.equal((await probe(done.movie)).frames, layers, 'one frame per layer, none for the z-hops');

  // The extruder position the virtual printer ends at: the file's extrusion, retractions undone.
  const reply = new Promise<string>((resolve) => {
    const stop = s.printer.watchReplies((line) => { if (line.startsWith('X:')) { stop(); resolve(line); } });
  });
  assert.equal((await s.api('/api/printer/command', { method: 'POST', json: { command: 'M114' } })).status, 204);
  const e = Number(/E:(-?[\d.]+)/.exec(await reply)![1]);
  assert.equal(e.toFixed(2), totalE.toFixed(2));

  const log = await waitFor('serial.log with the whole print', async () => {
    const text = await readFile(join(s.paths.logs, 'serial.log'), 'utf8').catch(() => '');
    return text.includes('M84') ? text : undefined;
  });
  const sent = log.split('\n').filter((l) => l.includes('Send: ')).map((l) => l.slice(l.indexOf('Send: ') + 6).replace(/^N\d+ /, '').replace(/\*\d+$/, ''));
  const parks = sent.map((l, i) => (l === 'G0 X5 Y195 F9000' ? i : -1)).filter((i) => i >= 0);
  assert.equal(parks.length, layers, 'a park per layer');
  for (const [n, i] of parks.entries()) {
    const z = ((n + 1) * 0.2).toFixed(1).replace(/0$/, '').replace(/\.$/, '');
    assert.deepEqual(sent.slice(i - 4, i + 8), ['G90', 'M83', 'G1 E-1 F2400', `G0 Z${Number(z) + 0.5} F600`, 'G0 X5 Y195 F9000', 'M400',
      `G0 X20 Y20 F9000`, `G0 Z${Number(z)} F600`, 'G1 E1 F2400', 'G90', 'M83', 'G1 F600'], `park ${n}`);
  }
  // The stream waits for each snapshot: when the camera is asked, the last line sent is the park's M400.
  assert.equal(atSnapshot.length, layers);
  for (const lines of atSnapshot) assert.match(lines[lines.length - 1], /^Send: N\d+ M400\*\d+$/);
  assert.match(atSnapshot[0][atSnapshot[0].length - 2], /G0 X5 Y195 F9000/);
});

test('stabilised snapshots with a dead camera: parks stop after the first failure, the print goes on', async (t) => {
  const cam = await fakeCamera(t);
  cam.dead = true;
  const s = await connectedServer(t, { serial: { log: true }, webcam: { snapshot: cam.url, ffmpeg: FFMPEG,
    stabilize: { enabled: true, x: 5, y: 195, delay: 0 } } });
  const ev = events(s);
  assert.equal((await configure(s, { type: 'zchange', minDelay: 0.001 })).status, 200);
  await print(s, 'deadpark.gcode', layeredGcode(4, { hop: 0 }).text);
  await ev.next('PrintDone');
  assert.equal((await ev.next('MovieFailed')).reason, 'no_frames');
  const log = await waitFor('serial.log with the whole print', async () => {
    const text = await readFile(join(s.paths.logs, 'serial.log'), 'utf8').catch(() => '');
    return text.includes('M84') ? text : undefined;
  });
  assert.equal(log.split('\n').filter((l) => l.includes('G0 X5 Y195 F9000')).length, 1, 'only the first layer parked');
  assert.ok(cam.requests.length >= 2, 'frames are still tried, where the head is');
});

test('unrendered frames: listing by prefix, exact-prefix delete, age cleanup only when unrendered jobs are listed', async (t) => {
  const s = await startTestServer(t);
  const tmp = join(s.paths.timelapse, 'tmp');
  const frame = Buffer.from([0xff, 0xd8, 0xff, 0xd9]);
  for (const n of ['job_1-0.jpg', 'job_1-1.jpg', 'job-0.jpg', 'tmp_00001.jpg', 'nodash.jpg']) await writeFile(join(tmp, n), frame);
  const list = (await (await s.api('/api/timelapse?unrendered=true')).json() as Json).unrendered as Json[];
  assert.deepEqual(list.map((u) => [u.name, u.count, u.bytes, u.size, u.processing]), [['job', 1, 4, '4.0B', false], ['job_1', 2, 8, '8.0B', false]]);
  assert.equal((await readdir(tmp)).includes('tmp_00001.jpg'), false, 'pre-1.2.9 frames go at once');
  const del = await s.api('/api/timelapse/unrendered/job', { method: 'DELETE' });
  assert.equal(del.status, 204);
  assert.equal(await del.text(), '');
  assert.deepEqual((await readdir(tmp)).sort(), ['job_1-0.jpg', 'job_1-1.jpg', 'nodash.jpg'], 'job_1 is not matched by job');

  await s.config.patch({ webcam: { cleanTmpAfterDays: 0 } });
  await s.api('/api/timelapse');
  assert.equal((await readdir(tmp)).length, 3, 'a plain listing cleans nothing');
  assert.deepEqual((await (await s.api('/api/timelapse?unrendered=true')).json() as Json).unrendered, []);
  assert.deepEqual(await readdir(tmp), ['nodash.jpg'], 'names without a dash are left alone');
});

test('an unrendered job whose frames are being deleted cannot be rendered meanwhile', async (t) => {
  const s = await startTestServer(t);
  const tmp = join(s.paths.timelapse, 'tmp');
  const frame = Buffer.from([0xff, 0xd8, 0xff, 0xd9]);
  for (let i = 0; i < 50; i++) await writeFile(join(tmp, `job-${i}.jpg`), frame);
  // The deletion is under way (its checks are done) when the render is asked for.
  const deleting = s.timelapse.deleteUnrendered('job');
  // Before, the render was queued and made a movie of whatever frames the deletion had not reached yet.
  assert.throws(() => s.timelapse.renderUnrendered('job'), { message: 'Timelapse is being deleted, cannot render it' });
  await deleting;
  assert.deepEqual(await readdir(tmp), []);
});
