// Test helper: builds the reference firmware responder (fakefw) once per process and runs it on its own pty.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BENCH_SRC_DIR } from '../helpers/shared-data.ts';

const run = promisify(execFile);
export const BENCH_DIR = BENCH_SRC_DIR;

let built: Promise<string> | undefined;

/** Compiles fakefw.c with `cc -O2` into a temp dir (once); returns the binary path. */
export function buildTool(name: 'fakefw' | 'idealhost'): Promise<string> {
  const key = name;
  const go = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gantry-bench-bin-'));
    // Synchronous: an exit handler's promises never settle.
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const out = join(dir, key);
    await run('cc', ['-O2', '-o', out, join(BENCH_DIR, `${key}.c`)]);
    return out;
  };
  if (name === 'fakefw') return (built ??= go());
  return go();
}

export interface FakeFw {
  /** The pty link the host opens. */
  port: string;
  proc: ChildProcess;
  /** Stops fakefw (SIGTERM) and returns its summary as key → value. */
  stop(): Promise<Record<string, string>>;
}

/** Starts fakefw on a fresh pty in `dir` with extra flags (`-c 50`, `-d 200`, ...). */
export async function startFakeFw(dir: string, args: string[] = []): Promise<FakeFw> {
  const bin = await buildTool('fakefw');
  const port = join(dir, 'ttyFW');
  const summary = join(dir, 'fakefw.summary');
  const proc = spawn(bin, ['-p', port, '-o', summary, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolvePty, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error('fakefw did not start')), 5000);
    proc.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      if (buf.includes('FAKEFW_PTY')) {
        clearTimeout(timer);
        resolvePty();
      }
    });
    proc.once('exit', (code) => reject(new Error(`fakefw exited with ${code}`)));
  });
  proc.stderr!.resume();
  let stopped: Promise<Record<string, string>> | undefined;
  return {
    port,
    proc,
    stop() {
      stopped ??= (async () => {
        if (proc.exitCode === null && proc.signalCode === null) {
          const exited = new Promise((r) => proc.once('exit', r));
          proc.kill('SIGTERM');
          await exited;
        }
        const text = await readFile(summary, 'utf8').catch(() => '');
        return parseSummary(text);
      })();
      return stopped;
    },
  };
}

export function parseSummary(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of (text.split('\n')[0] ?? '').matchAll(/(\w+)=(\S*)/g)) out[m[1]] = m[2];
  return out;
}
