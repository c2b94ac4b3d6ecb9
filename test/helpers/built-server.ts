// Test helper: builds dist/ when stale and starts a built `gantry serve` as a child process (plain node, no tsx), for tests of what users run.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

let built: Promise<unknown> | undefined;

/**
 * Rebuilds dist/ when the sources are newer (scripts/build.mjs --if-stale), so a test never runs yesterday's build.
 * Checked once per process: the files of a test group share the answer.
 */
export async function ensureBuilt(): Promise<void> {
  built ??= run(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT });
  await built;
}

export interface RunningGantry {
  child: ChildProcess;
  url: string;
  /** The global API key printed on first start. */
  apiKey: string;
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then the exit code once it is gone; a process still there after 15 s is killed and the call fails. */
  stop(): Promise<number | null>;
}

/**
 * Starts `command ...args` (e.g. node dist/cli.js serve --port 0 --basedir DIR) and resolves once it prints its
 * "is up at" line, or rejects with its output when it exits first.
 */
export function startGantryProcess(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<RunningGantry> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GANTRY_BASEDIR: '', ...env } });
  let out = '';
  let err = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const up = /is up at (http:\/\/\S+)/.exec(out);
      if (!up) return;
      resolve({
        child,
        url: up[1],
        apiKey: /global API key:\s+(\S+)/.exec(out)?.[1] ?? '',
        stdout: () => out,
        stderr: () => err,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          let hung: NodeJS.Timeout | undefined;
          const bound = new Promise<never>((_, fail) => {
            hung = setTimeout(() => {
              child.kill('SIGKILL');
              fail(new Error(`${command} ${args.join(' ')} was still running 15 s after SIGTERM\nstdout: ${out.slice(-2000)}\nstderr: ${err.slice(-2000)}`));
            }, 15_000);
          });
          try {
            return await Promise.race([exited, bound]);
          } finally {
            clearTimeout(hung);
          }
        },
      });
    });
    void exited.then((code) => reject(new Error(`${command} ${args.join(' ')} exited with ${code} before it was up\nstdout: ${out}\nstderr: ${err}`)));
  });
}

/** The command names of every process below `pid` (children, their children…), from /proc. */
export async function descendants(pid: number): Promise<string[]> {
  const names: string[] = [];
  let tasks: string[];
  try {
    tasks = await readdir(`/proc/${pid}/task`);
  } catch {
    return names;
  }
  for (const task of tasks) {
    const children = await readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '');
    for (const c of children.split(' ').filter(Boolean).map(Number)) {
      names.push((await readFile(`/proc/${c}/comm`, 'utf8').catch(() => '?')).trim(), ...(await descendants(c)));
    }
  }
  return names;
}
