// webcam.ffmpegCommandline templates: checked in POST /api/settings like 1.9.3 (placeholders required, a template that
// expands), expanded word by word into ffmpeg's argv, and rendered with Debian's ffmpeg; the default template gives
// exactly the argv of timelapse.md §6.2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { access, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestServer } from '../helpers/server.ts';
import { effectiveConfig } from '../../src/config/config-store.ts';
import { encodeArgs } from '../../src/timelapse/ffmpeg.ts';
import { checkCommandline, expandCommandline, splitWords } from '../../src/timelapse/ffmpeg-template.ts';
import { FFMPEG, events, probe, testFrames, type Json } from './helpers.ts';

const DEFAULTS = effectiveConfig({});

test('templates: the default expands to 1.9.3\'s argv; values stay one argument; bad templates are refused with a reason', () => {
  const values = { ffmpeg: '/usr/bin/ffmpeg', fps: '4', input: '/t/my "job"-%d.jpg', output: '/m/.job.mp4', videocodec: 'libx264', threads: '2',
    bitrate: '2000k', containerformat: 'mp4', filters: '[in] format=yuv420p [out]' };
  assert.deepEqual(expandCommandline(DEFAULTS.webcam.ffmpegCommandline, values), ['/usr/bin/ffmpeg', ...encodeArgs({ ffmpeg: 'x', fps: 4,
    input: values.input, output: values.output, codec: 'libx264', threads: 2, bitrate: '2000k', watermark: null, flipH: false, flipV: false, rotate90: false })]);
  assert.deepEqual(expandCommandline('nice -n 19 {ffmpeg} -i {input} -vf \'{{a}}\' out-{fps}.mp4 {output}', values),
    ['nice', '-n', '19', '/usr/bin/ffmpeg', '-i', '/t/my "job"-%d.jpg', '-vf', '{a}', 'out-4.mp4', '/m/.job.mp4']);
  assert.deepEqual(splitWords(`a "b c" 'd "e"' f\\ g "h\\"i" ''`), ['a', 'b c', 'd "e"', 'f g', 'h"i', '']);
  for (const [template, reason] of [
    ['{ffmpeg} -i "{input}"', /needs \{output\}/],
    ['ffmpeg -i {input} {output}', /needs \{ffmpeg\}/],
    ['{ffmpeg} -i {input} -r {framerate} {output}', /unknown placeholder \{framerate\}/],
    ['{ffmpeg} -i "{input} {output}', /unclosed " quote/],
    ['{ffmpeg} -i {input} {output} }', /single "}"/],
    ['{ffmpeg} -i {input} {output} {fps', /"\{" without "\}"/],
  ] as const) assert.throws(() => checkCommandline(template), reason, template);
  checkCommandline(DEFAULTS.webcam.ffmpegCommandline);
});

test('a custom template renders a real movie with ffmpeg; a bad one is a 400 in the settings and a MovieFailed from config.yaml', async (t) => {
  const s = await startTestServer(t, { settings: { webcam: { ffmpeg: FFMPEG, watermark: false } } });
  const settings = async () => (await (await s.api('/api/settings')).json() as Json).webcam as Json;
  assert.equal((await settings()).ffmpegCommandline, DEFAULTS.webcam.ffmpegCommandline);

  const bad = await s.api('/api/settings', { method: 'POST', json: { webcam: { ffmpegCommandline: '{ffmpeg} -i "{input}" -y out.mp4' } } });
  assert.equal(bad.status, 400);
  assert.match((await bad.json() as Json).error, /webcam\.ffmpegCommandline.*\{output\}/);
  assert.equal((await s.api('/api/settings', { method: 'POST', json: { webcam: { ffmpegCommandline: 42 } } })).status, 400);
  assert.equal((await settings()).ffmpegCommandline, DEFAULTS.webcam.ffmpegCommandline, 'a refused template changes nothing');

  // Scaled down and without OctoPrint's filters: the movie shows the template was used.
  const template = '{ffmpeg} -framerate {fps} -i "{input}" -vcodec {videocodec} -threads {threads} -b:v {bitrate} -f {containerformat} -y -vf "scale=32:24,format=yuv420p" "{output}"';
  assert.equal((await s.api('/api/settings', { method: 'POST', json: { webcam: { ffmpegCommandline: template } } })).status, 200);
  assert.equal((await settings()).ffmpegCommandline, template);
  assert.equal(s.config.current.webcam.ffmpegCommandline, template);

  const tmp = join(s.paths.timelapse, 'tmp');
  const frames = await testFrames();
  for (const [i, f] of frames.entries()) await writeFile(join(tmp, `custom_1-${i}.jpg`), f);
  const ev = events(s);
  assert.equal((await s.api('/api/timelapse/unrendered/custom_1', { method: 'POST', json: { command: 'render' } })).status, 204);
  const done = await ev.next('MovieDone', 30_000);
  const movie = await probe(done.movie);
  assert.deepEqual([movie.width, movie.height, movie.frames, movie.codec], [32, 24, frames.length, 'h264']);
  await access(`${done.movie}.thumb.jpg`);

  // A template broken by hand in config.yaml (the API refuses it) fails the render with the reason; the frames stay.
  await s.config.patch({ webcam: { ffmpegCommandline: '{ffmpeg} -i "{input}" {nope} "{output}"' } });
  for (const [i, f] of frames.entries()) await writeFile(join(tmp, `custom_2-${i}.jpg`), f);
  assert.equal((await s.api('/api/timelapse/unrendered/custom_2', { method: 'POST', json: { command: 'render' } })).status, 204);
  const failed = await ev.next('MovieFailed', 30_000);
  assert.equal(failed.reason, 'returncode');
  assert.deepEqual(failed.error, ['webcam.ffmpegCommandline: unknown placeholder {nope}\n']);
  assert.deepEqual((await readdir(tmp)).filter((n) => n.startsWith('custom_2')).length, frames.length);
});
