// The pure parts of the timelapse: ffmpeg argv and filter strings as 1.9.3 builds them, the config rules, and the
// stabiliser's layer detection and park sequence for the positioning modes slicers use, and the snapshot fetch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeArgs, filterString, containerFor } from '../../src/timelapse/ffmpeg.ts';
import { configFromRequest, configFromSettings, pushPayload } from '../../src/timelapse/timelapse-config.ts';
import { Stabilizer } from '../../src/timelapse/stabilizer.ts';
import { humanSize } from '../../src/timelapse/timelapse-folders.ts';
import { fetchSnapshot } from '../../src/timelapse/snapshot.ts';
import { execFile } from 'node:child_process';
import { createServer as createHttpsServer } from 'node:https';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { testFrames } from './helpers.ts';
import { tempDir } from '../helpers/temp-dir.ts';

const run = promisify(execFile);

test('ffmpeg: filter chain, argv and container follow timelapse.md §6.2', () => {
  assert.equal(filterString({ flipH: false, flipV: false, rotate90: false, watermark: null }), '[in] format=yuv420p [out]');
  assert.equal(filterString({ flipH: false, flipV: true, rotate90: false, watermark: null }), '[in] format=yuv420p,vflip [out]');
  assert.equal(filterString({ flipH: true, flipV: false, rotate90: true, watermark: '/w/watermark.png' }),
    '[in] format=yuv420p,hflip,transpose=2 [postprocessed]; movie=/w/watermark.png [wm]; [postprocessed][wm] overlay=10:main_h-overlay_h-10 [out]');
  assert.deepEqual(encodeArgs({ ffmpeg: 'ffmpeg', fps: 4, input: '/t/timed-%d.jpg', output: '/m/.timed.mp4', codec: 'libx264', threads: 2,
    bitrate: '2000k', watermark: null, flipH: false, flipV: false, rotate90: false }),
  ['-framerate', '4', '-i', '/t/timed-%d.jpg', '-vcodec', 'libx264', '-threads', '2', '-b:v', '2000k', '-f', 'mp4', '-y', '-vf', '[in] format=yuv420p [out]', '/m/.timed.mp4']);
  assert.deepEqual(containerFor('mpeg2video'), { ext: 'mpg', format: 'vob' });
  assert.equal(humanSize(44936), '43.9KB');
  assert.equal(humanSize(12), '12.0B');
});

test('config: request rules, saved-config fallbacks and the push form', () => {
  assert.equal(configFromRequest({ fps: 3 }), undefined);
  assert.deepEqual(configFromRequest({ type: 'timed', interval: '3', postRoll: '2', fps: '12' }), { type: 'timed', postRoll: 2, fps: 12, interval: 3 });
  assert.deepEqual(configFromRequest({ type: 'zchange', minDelay: '1.5' }), { type: 'zchange', postRoll: 0, fps: 25, retractionZHop: 0, minDelay: 1.5 });
  assert.throws(() => configFromRequest({ type: 'zchange', minDelay: 'soon' }), /minDelay is invalid/);
  assert.throws(() => configFromRequest({ type: 'timed', interval: 0 }), /interval is invalid/);
  assert.deepEqual(configFromSettings({ type: 'timed', fps: 0, postRoll: -1, options: { interval: 0.5 } }), { type: 'timed', fps: 25, postRoll: 0, interval: 1 });
  assert.deepEqual(configFromSettings({ type: 'zchange', fps: 5, postRoll: 1, options: { minDelay: null } }),
    { type: 'zchange', fps: 5, postRoll: 1, retractionZHop: 0, minDelay: 5 });
  assert.equal(pushPayload({ type: 'off' }), null);
  assert.deepEqual(pushPayload({ type: 'timed', fps: 1, postRoll: 0, interval: 4 }), { type: 'timed', options: { interval: 4 } });
});

const park = { x: 0, y: 200, retract: 2, retractSpeed: 1800, lift: 1, zSpeed: 300, travelSpeed: 6000 };

function feed(s: Stabilizer, lines: string[]): Array<{ at: string; before: string[] }> {
  const out: Array<{ at: string; before: string[] }> = [];
  for (const l of lines) {
    const ins = s.inject(l);
    if (ins) out.push({ at: l, before: ins.before });
  }
  return out;
}

test('stabiliser: layers by extrusion height, not by travel lifts or z-hops; modes and feedrate restored', () => {
  let allow = true;
  const s = new Stabilizer({ park, g90InfluencesExtruder: false, onLayer: () => (allow ? async () => {} : null) });
  const parks = feed(s, [
    'G28', 'G90', 'M82', 'G92 E0', 'G1 Z5 F3000 ; lift after homing', 'G1 X10 Y10 F6000', 'G1 Z0.3', 'G1 X50 E5 F1200 ; first layer',
    'G1 E3 F2400 ; retract', 'G1 Z0.7 ; hop', 'G1 X60 Y60 F6000', 'G1 Z0.3', 'G1 E5 ; unretract, no new extrusion', 'G1 X70 E6',
    'G1 Z0.6 F600', 'G91', 'G1 X5 E7 F1500 ; second layer, relative XYZ', 'G90',
  ]);
  assert.deepEqual(parks.map((p) => p.at), ['G1 X50 E5 F1200 ; first layer', 'G1 X5 E7 F1500 ; second layer, relative XYZ']);
  assert.deepEqual(parks[0].before, ['G90', 'M83', 'G1 E-2 F1800', 'G0 Z1.3 F300', 'G0 X0 Y200 F6000', 'M400',
    'G0 X10 Y10 F6000', 'G0 Z0.3 F300', 'G1 E2 F1800', 'G90', 'M82', 'G1 F6000']);
  assert.deepEqual(parks[1].before.slice(-3), ['G91', 'M82', 'G1 F600'], 'relative XYZ and absolute E restored');
  assert.deepEqual(parks[1].before.slice(6, 8), ['G0 X70 Y60 F6000', 'G0 Z0.6 F300']);
  allow = false;
  assert.deepEqual(feed(s, ['G1 Z0.9', 'G1 X1 E1']), [], 'no frame wanted (minDelay): no park');
});

test('stabiliser: an unknown position takes the frame in place; G92 E keeps extrusion detection right', () => {
  const s = new Stabilizer({ park, g90InfluencesExtruder: true, onLayer: () => async () => {} });
  const parks = feed(s, ['M83', 'G1 Z0.2', 'G1 E1 ; purge in place', 'G1 X5 Y5', 'G92 E0', 'G1 X6 E0.5', 'G1 Z0.4', 'G1 X7 E0.5']);
  assert.deepEqual(parks.map((p) => [p.at, p.before.length]), [['G1 E1 ; purge in place', 1], ['G1 X7 E0.5', 11]]);
  assert.deepEqual(parks[0].before, ['M400']);
});

test('snapshot fetch: TLS validation on and off against a self-signed camera, timeout, non-2xx, no partial file', async (t) => {
  const dir = await tempDir(t, 'gantry-snap-');
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    '-days', '1', '-subj', '/CN=camera.invalid']);
  const [jpeg] = await testFrames();
  let hang = false;
  const server = createHttpsServer({ key: await readFile(join(dir, 'key.pem')), cert: await readFile(join(dir, 'cert.pem')) }, (req, res) => {
    if (hang) return; // never answers
    if (req.url === '/missing') res.writeHead(404).end();
    else res.writeHead(200, { 'Content-Type': 'image/jpeg' }).end(jpeg);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
  const port = (server.address() as { port: number }).port;
  const file = join(dir, 'frame.jpg');
  const url = `https://127.0.0.1:${port}/snapshot`;
  await assert.rejects(fetchSnapshot({ url, timeout: 5, validateSsl: true }, file), /self[- ]signed|certificate/i);
  await assert.rejects(stat(file), 'no partial file');
  await fetchSnapshot({ url, timeout: 5, validateSsl: false }, file);
  assert.deepEqual(await readFile(file), jpeg);
  await assert.rejects(fetchSnapshot({ url: `https://127.0.0.1:${port}/missing`, timeout: 5, validateSsl: false }, file),
    /^Error: 404 Client Error: Not Found for url: https:\/\/127\.0\.0\.1:\d+\/missing$/);
  hang = true;
  const started = Date.now();
  await assert.rejects(fetchSnapshot({ url, timeout: 1, validateSsl: false }, file), /Timed out after 1s/);
  assert.ok(Date.now() - started < 3000);
  await assert.rejects(fetchSnapshot({ url: 'ftp://x/y', timeout: 1, validateSsl: true }, file), /Unsupported snapshot URL scheme/);
});
