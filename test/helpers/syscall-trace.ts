// Test helper: the built server run under strace, and its log read back as system calls, for tests of what reaches the disk and in which order.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT, startGantryProcess, type RunningGantry } from './built-server.ts';

/** One system call as strace -f -y logged it. */
export interface Call {
  name: string;
  text: string;
}

/** What a traced server gives a test. */
export interface TracedServer {
  g: RunningGantry;
  api(path: string, init?: RequestInit): Promise<Response>;
  /** Stops the server (strace ends with it); safe to call again. */
  stop(): Promise<void>;
  /** Stops the server and reads the trace: every call, in the order the calls ended. */
  calls(): Promise<Call[]>;
}

/**
 * strace's arguments to run `node dist/cli.js ...cli`: -y names each descriptor's path; only the calls in `trace` stop
 * the process (its seccomp filter), so it runs near its own speed. libuv may do file calls through io_uring where the
 * kernel has it, which strace would not see: UV_USE_IO_URING=0 in the environment.
 */
const straceArgs = (log: string, trace: readonly string[], cli: readonly string[]): string[] => [
  '-f', '-y', '-qq', '--seccomp-bpf', '-s', '24', '-o', log, '-e', `trace=${trace.join(',')}`, process.execPath, join(ROOT, 'dist/cli.js'), ...cli,
];

/** `node dist/cli.js serve` on `baseDir` under strace (straceArgs). A test calls `stop` in its after hook. */
export async function startTracedServer(baseDir: string, trace: readonly string[]): Promise<TracedServer> {
  const log = join(baseDir, 'trace.log');
  const g = await startGantryProcess('strace', straceArgs(log, trace, ['serve', '--port', '0', '--basedir', baseDir]), { UV_USE_IO_URING: '0' });
  const server = Number((await readFile(`/proc/${g.child.pid}/task/${g.child.pid}/children`, 'utf8')).trim().split(' ')[0]);
  // SIGTERM to strace would only detach it from the server.
  const stop = async () => {
    if (g.child.exitCode === null && server) process.kill(server, 'SIGTERM');
    await g.stop();
  };
  return {
    g,
    stop,
    api: (path, init = {}) => fetch(`${g.url}${path}`, { ...init, headers: { 'X-Api-Key': g.apiKey, ...(init.headers as Record<string, string>) } }),
    calls: async () => {
      await stop();
      return parseTrace(await readFile(log, 'utf8'));
    },
  };
}

/** Runs `node dist/cli.js ...args` to its end under strace (as startTracedServer does): its exit code, output and calls. */
export async function traceCommand(args: readonly string[], trace: readonly string[], log: string): Promise<{ code: number | null; output: string; calls: Call[] }> {
  const child = spawn('strace', straceArgs(log, trace, args), { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GANTRY_BASEDIR: '', UV_USE_IO_URING: '0' } });
  let output = '';
  child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { output += d.toString(); });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  return { code, output, calls: parseTrace(await readFile(log, 'utf8')) };
}

/** The calls in the order they ended; strace splits a call that another thread's call interrupted into two lines. */
export function parseTrace(log: string): Call[] {
  const calls: { done: number; call: Call }[] = [];
  const open = new Map<string, Call>();
  const UNFINISHED = ' <unfinished ...>';
  log.split('\n').forEach((line, i) => {
    const m = /^(\d+)\s+(.*)$/.exec(line);
    if (!m) return;
    const [, pid, rest] = m;
    const resumed = /^<\.\.\. (\w+) resumed>(.*)$/.exec(rest);
    if (resumed) {
      const start = open.get(pid);
      open.delete(pid);
      if (start) calls.push({ done: i, call: { name: start.name, text: start.text + resumed[2] } });
      return;
    }
    const name = /^(\w+)\(/.exec(rest)?.[1];
    if (!name) return;
    if (rest.endsWith(UNFINISHED)) open.set(pid, { name, text: rest.slice(0, -UNFINISHED.length) });
    else calls.push({ done: i, call: { name, text: rest } });
  });
  return calls.sort((a, b) => a.done - b.done).map((c) => c.call);
}

const succeeded = (c: Call): boolean => / = 0$/.test(c.text);

/** An fsync (or fdatasync) that succeeded on a descriptor open on `path` (strace -y shows it as `fd</path>`). */
export const syncOf = (c: Call, path: string): boolean => /^f(data)?sync$/.test(c.name) && c.text.includes(`<${path}>)`) && succeeded(c);

/** Whether a call names `path`: whole, or as a name relative to a descriptor open on its folder (`*at` calls). */
export function names(c: Call, path: string): boolean {
  const slash = path.lastIndexOf('/');
  return c.text.includes(`"${path}"`) || c.text.includes(`<${path.slice(0, slash)}>, "${path.slice(slash + 1)}"`);
}

/** The server writing an HTTP answer to a socket. */
export const isReply = (c: Call): boolean => /^write/.test(c.name) && c.text.includes('"HTTP/1.1 ');

/** The index of the first successful call of `kinds` (a name pattern) that names `path`, at or after `from`. */
export function findChange(calls: Call[], kinds: RegExp, path: string, from = 0): number {
  const at = calls.findIndex((c, i) => i >= from && kinds.test(c.name) && names(c, path) && succeeded(c));
  assert.ok(at >= 0, `a ${kinds.source} of ${path} in the trace`);
  return at;
}

/** The first successful rename to `path` at or after `from`: its index and what was renamed (a whole path). */
export function findRenameTo(calls: Call[], path: string, from = 0): { at: number; source: string } {
  for (let i = from; i < calls.length; i++) {
    const m = /^rename/.test(calls[i].name) && succeeded(calls[i]) ? /"([^"]+)"[^"]*"([^"]+)"/.exec(calls[i].text) : null;
    if (m?.[2] === path) return { at: i, source: m[1] };
  }
  assert.fail(`a rename to ${path} in the trace`);
}

/** Fails unless `path` was synced by a call in [from, to). */
export function assertSynced(calls: Call[], from: number, to: number, path: string, what: string): void {
  const between = calls.slice(from, to);
  assert.ok(between.some((c) => syncOf(c, path)), `${what}: ${path} synced in time\n${between.map((c) => `${c.name}: ${c.text}`).join('\n')}`);
}
