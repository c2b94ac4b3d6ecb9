// fakefw (../shared/bench/fakefw.c) on its own pty with every received line logged (-v), for the reconnect tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync, readSync, writeSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { buildTool } from '../transports/bench-tools.ts';

export interface LoggedFw {
  proc: ChildProcess;
  /** Every line fakefw read, as received (`N12 G1 X1*34`), in order. */
  received: string[];
  kill(): Promise<void>;
}

/** Starts fakefw with its pty linked at `link`; `-v` makes it log each line it reads (on receipt) to stderr. */
export async function startLoggedFw(link: string, args: string[] = []): Promise<LoggedFw> {
  const bin = await buildTool('fakefw');
  const proc = spawn(bin, ['-p', link, '-v', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const received: string[] = [];
  let rest = '';
  proc.stderr!.on('data', (d: Buffer) => {
    const parts = (rest + d.toString('latin1')).split('\n');
    rest = parts.pop() ?? '';
    for (const p of parts) if (p.startsWith('<< ')) received.push(p.slice(3));
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('fakefw did not start')), 5000);
    proc.stdout!.on('data', (d: Buffer) => {
      if (d.toString().includes('FAKEFW_PTY')) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.once('exit', (code) => reject(new Error(`fakefw exited with ${code}`)));
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return {
    proc,
    received,
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}

/** fakefw on a pty linked as `ttyUSB-printer` in a temporary folder of its own; both go when the test ends. */
export async function fakeFwPrinter(t: TestContext, prefix: string, args: string[] = []): Promise<{ dir: string; port: string; fw: LoggedFw }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const port = join(dir, 'ttyUSB-printer');
  const fw = await startLoggedFw(port, args);
  t.after(async () => {
    await fw.kill();
    await rm(dir, { recursive: true, force: true });
  });
  return { dir, port, fw };
}

/**
 * Plays the printer's memory across the pull: a fresh fakefw starts counting at 0, a board that kept running still
 * has the number of the last line it took. `M110 N<n>` through the pty sets it, and the `ok` is read back so nothing
 * is left for the host that opens the port next.
 */
export function setLineCounter(link: string, n: number): void {
  const fd = openSync(link, constants.O_RDWR | constants.O_NOCTTY);
  try {
    writeSync(fd, `M110 N${n}\n`);
    const buf = Buffer.alloc(256);
    let got = '';
    while (!got.includes('ok\n')) {
      const k = readSync(fd, buf, 0, buf.length, null);
      if (k <= 0) break;
      got += buf.toString('latin1', 0, k);
    }
  } finally {
    closeSync(fd);
  }
}

/** `N12 G1 X1*34` → `G1 X1`. */
export const command = (wire: string): string => wire.replace(/^N\d+\s+/, '').replace(/\*\d+$/, '').trim();

/** What the connection and the temperature polls send, never a file line of the test prints. */
export const isLinkChatter = (cmd: string): boolean => /^M(105|110|115|20|21|27|114|155|400)\b/.test(cmd);
