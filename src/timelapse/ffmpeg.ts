// The ffmpeg side of rendering: OctoPrint's command line and filter chain as an argv (no shell), running it with
// progress from stderr, the thumbnail, and checking that a configured binary can be run at all.
import { spawn } from 'node:child_process';
import { access, constants, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { invalid } from '../core/errors.ts';

export const WATERMARK = fileURLToPath(new URL('./assets/watermark.png', import.meta.url));

export interface EncodeOptions {
  ffmpeg: string;
  fps: number;
  /** `<frames>/<prefix>-%d.jpg` */
  input: string;
  output: string;
  codec: string;
  threads: number;
  bitrate: string;
  watermark: string | null;
  flipH: boolean;
  flipV: boolean;
  rotate90: boolean;
}

/** `mpg`/`vob` for mpeg2video, else `mp4`/`mp4` (docs/reference/timelapse.md §6.1, §6.2). */
export function containerFor(codec: string): { ext: string; format: string } {
  return codec === 'mpeg2video' ? { ext: 'mpg', format: 'vob' } : { ext: 'mp4', format: 'mp4' };
}

/** Escapes a value for a filter option and then for the filter graph (ffmpeg's two quoting levels). */
function filterPath(path: string): string {
  const option = path.replace(/[\\':]/g, (c) => `\\${c}`);
  return option.replace(/[\\'[\],;]/g, (c) => `\\${c}`);
}

/** The -vf string: pixel format first, then hflip, vflip, transpose=2, and the watermark overlaid bottom-left. */
export function filterString(o: Pick<EncodeOptions, 'flipH' | 'flipV' | 'rotate90' | 'watermark'>): string {
  const chain = ['format=yuv420p'];
  if (o.flipH) chain.push('hflip');
  if (o.flipV) chain.push('vflip');
  if (o.rotate90) chain.push('transpose=2');
  if (o.watermark === null) return `[in] ${chain.join(',')} [out]`;
  return `[in] ${chain.join(',')} [postprocessed]; movie=${filterPath(o.watermark)} [wm]; [postprocessed][wm] overlay=10:main_h-overlay_h-10 [out]`;
}

/** Arguments after the binary, as OctoPrint's default `ffmpegCommandline` expands them. */
export function encodeArgs(o: EncodeOptions): string[] {
  return ['-framerate', String(o.fps), '-i', o.input, '-vcodec', o.codec, '-threads', String(o.threads), '-b:v', o.bitrate,
    '-f', containerFor(o.codec).format, '-y', '-vf', filterString(o), o.output];
}

export interface RunResult {
  code: number;
  stdout: string[];
  /** The last stderr lines (ffmpeg is chatty; the tail says why it failed). */
  stderr: string[];
}

const KEEP_LINES = 30;

function seconds(h: string, m: string, s: string): number {
  return Number(h) * 3600 + Number(m) * 60 + Number(s);
}

/**
 * Runs ffmpeg, reporting progress in percent from `Duration:` (whole seconds, as 1.9.3) and `time=` in stderr; no
 * progress when the total is under a second. Never rejects for a non-zero exit; a binary that cannot start rejects.
 */
export function runFfmpeg(binary: string, args: string[], onProgress?: (percent: number) => void, signal?: AbortSignal): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'], signal, killSignal: 'SIGKILL' });
    const stdout: string[] = [];
    const stderr: string[] = [];
    let partial = '';
    let total = 0;
    const onLine = (line: string) => {
      if (line.trim() === '') return;
      stderr.push(`${line}\n`);
      if (stderr.length > KEEP_LINES) stderr.shift();
      const d = /Duration: (\d+):(\d+):(\d+(?:\.\d+)?)/.exec(line);
      if (d) total = Math.floor(seconds(d[1], d[2], d[3]));
      const t = /time=(\d+):(\d+):(\d+(?:\.\d+)?)/.exec(line);
      if (t && total > 0) onProgress?.((seconds(t[1], t[2], t[3]) / total) * 100);
    };
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      const parts = (partial + chunk).split(/[\r\n]/);
      partial = parts.pop() ?? '';
      for (const p of parts) onLine(p);
    });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      for (const l of chunk.split('\n')) if (l !== '') stdout.push(`${l}\n`);
      if (stdout.length > KEEP_LINES) stdout.splice(0, stdout.length - KEEP_LINES);
    });
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (partial !== '') onLine(partial);
      resolve({ code: code ?? (signal ? 255 : 0), stdout, stderr });
    });
  });
}

/** The binary a configured path or bare name runs (PATH is searched for names without a slash), or null. */
export async function locateExecutable(path: string): Promise<string | null> {
  const candidates = path.includes('/') || isAbsolute(path)
    ? [path]
    : (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((d) => join(d, path));
  for (const c of candidates) {
    try {
      await access(c, constants.X_OK);
      if ((await stat(c)).isFile()) return c;
    } catch {
      // not this one
    }
  }
  return null;
}

/** Config-time check of webcam.ffmpegPath: a clear 400 instead of a timelapse that silently never renders. */
export async function checkFfmpegPath(path: string | null | undefined): Promise<void> {
  if (path === null || path === undefined || path.trim() === '') {
    throw invalid('Timelapse needs ffmpeg: set webcam.ffmpegPath to the ffmpeg binary (e.g. /usr/bin/ffmpeg)');
  }
  if ((await locateExecutable(path)) === null) {
    throw invalid(`Invalid webcam.ffmpegPath setting: ${path} is not an executable file`);
  }
}
