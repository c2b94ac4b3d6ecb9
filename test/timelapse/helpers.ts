// Timelapse test parts: a fake camera (a local HTTP server handing out JPEGs made by ffmpeg's testsrc), layered
// G-code for the virtual printer, ffprobe, and waiting on events.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestContext } from 'node:test';
import type { TestServer } from '../helpers/server.ts';

const run = promisify(execFile);
export const FFMPEG = '/usr/bin/ffmpeg';

let jpegs: Promise<Buffer[]> | undefined;

/** Three tiny distinct JPEGs, made once per test process. */
export function testFrames(): Promise<Buffer[]> {
  jpegs ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gantry-frames-'));
    try {
      await run(FFMPEG, ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=1', '-frames:v', '3', '-q:v', '5', join(dir, 'f-%d.jpg')]);
      const names = (await readdir(dir)).sort();
      return Promise.all(names.map((n) => readFile(join(dir, n))));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  })();
  return jpegs;
}

export interface FakeCamera {
  url: string;
  /** Snapshot requests answered, in order, with their arrival time. */
  requests: number[];
  /** Milliseconds each snapshot takes (a slow camera). */
  delayMs: number;
  /** Answer 500 instead of a picture. */
  dead: boolean;
  /** Called as each request arrives (tests look at the printer's state then). */
  onRequest?: () => void;
}

export async function fakeCamera(t: TestContext): Promise<FakeCamera> {
  const frames = await testFrames();
  const cam: FakeCamera = { url: '', requests: [], delayMs: 0, dead: false };
  const server: Server = createServer((req, res) => {
    cam.requests.push(Date.now());
    cam.onRequest?.();
    const answer = () => {
      if (cam.dead) {
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end('camera is dead');
        return;
      }
      const body = frames[(cam.requests.length - 1) % frames.length];
      res.writeHead(200, { 'Content-Type': 'image/jpeg', 'Content-Length': body.length }).end(body);
    };
    if (cam.delayMs > 0) setTimeout(answer, cam.delayMs);
    else answer();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  cam.url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/?action=snapshot`;
  t.after(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));
  return cam;
}

/**
 * `layers` layers 0.2 mm apart, each a few extruding moves (relative E) and a retraction with a z-hop of `hop` mm.
 * `totalE` is what the file extrudes in all (retractions cancel out).
 */
export function layeredGcode(layers: number, opts: { hop?: number; moves?: number; extra?: string[] } = {}): { text: string; totalE: number } {
  const hop = opts.hop ?? 0.4;
  const moves = opts.moves ?? 4;
  const lines = ['G28', 'G90', 'M83', 'G92 E0', 'G1 X20 Y20 F6000', ...(opts.extra ?? [])];
  let totalE = 0;
  for (let l = 1; l <= layers; l++) {
    const z = (l * 0.2).toFixed(2);
    lines.push(`;LAYER:${l - 1}`, `G1 Z${z} F600`);
    for (let m = 0; m < moves; m++) {
      lines.push(`G1 X${20 + ((m + l) % 4) * 10} Y${20 + (m % 2) * 10} E0.5 F1800`);
      totalE += 0.5;
    }
    if (hop > 0) lines.push('G1 E-0.8 F2400', `G1 Z${(l * 0.2 + hop).toFixed(2)} F600`, 'G1 X20 Y20 F6000', `G1 Z${z} F600`, 'G1 E0.8 F2400');
  }
  lines.push('M84', '');
  return { text: lines.join('\n'), totalE };
}

/** Frame count and size of a movie, by ffprobe. */
export async function probe(file: string): Promise<{ frames: number; width: number; height: number; codec: string; pixFmt: string }> {
  const { stdout } = await run('ffprobe', ['-v', 'error', '-count_frames', '-select_streams', 'v:0',
    '-show_entries', 'stream=nb_read_frames,width,height,codec_name,pix_fmt', '-of', 'json', file]);
  const s = (JSON.parse(stdout) as { streams: Array<Record<string, string | number>> }).streams[0];
  return { frames: Number(s.nb_read_frames), width: Number(s.width), height: Number(s.height), codec: String(s.codec_name), pixFmt: String(s.pix_fmt) };
}

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Every event with its payload, in order, and a way to wait for one. */
export function events(s: TestServer): { list: Array<{ name: string; payload: Json }>; names: () => string[]; next: (name: string, timeoutMs?: number) => Promise<Json> } {
  const list: Array<{ name: string; payload: Json }> = [];
  const waiters = new Set<() => void>();
  s.events.onAny('timelapse-test', (name, payload) => {
    list.push({ name, payload: payload as Json });
    for (const w of [...waiters]) w();
  });
  const seen = new Map<string, number>();
  return {
    list,
    names: () => list.map((e) => e.name),
    /** The next event of that name not returned before. */
    next(name, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const from = seen.get(name) ?? 0;
          const i = list.findIndex((e, k) => k >= from && e.name === name);
          if (i === -1) return false;
          seen.set(name, i + 1);
          resolve(list[i].payload);
          return true;
        };
        if (check()) return;
        const timer = setTimeout(() => { waiters.delete(w); reject(new Error(`no ${name} within ${timeoutMs} ms (saw ${list.map((e) => e.name).filter((n) => !n.startsWith('Printer') && n !== 'ZChange').join(',')})`)); }, timeoutMs);
        const w = () => { if (check()) { clearTimeout(timer); waiters.delete(w); } };
        waiters.add(w);
      });
    },
  };
}
