// The local control file: while a server runs, `gantry user …` and `gantry apikey` on this machine act through its API
// (same serialised stores, same rules) instead of writing its files behind its back.
import { randomBytes } from 'node:crypto';
import { readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../core/atomic-file.ts';
import type { KeyResolver } from './access-service.ts';

/** In the base dir, readable by its owner only: whoever can read it could read config.yaml's API key anyway. */
export const CONTROL_FILE = '.gantry-control.json';

export interface ControlInfo { pid: number; url: string; token: string }

/** A URL this machine can reach the server at: wildcard listen addresses become loopback. */
export function localUrl(url: string): string {
  const u = new URL(url);
  if (u.hostname === '0.0.0.0') u.hostname = '127.0.0.1';
  if (u.hostname === '[::]') u.hostname = '[::1]';
  return u.origin;
}

/**
 * Publishes a fresh random token that acts as the global API key of this server for as long as it runs (also when no
 * global key is configured), and where to reach it. Returns the function that withdraws the file at stop.
 */
export async function publishLocalControl(baseDir: string, url: string, access: { registerKeyResolver(fn: KeyResolver): void }): Promise<() => Promise<void>> {
  const token = randomBytes(32).toString('hex');
  access.registerKeyResolver((_key, probe) => (probe.matches(token) ? 'global' : undefined));
  const file = join(baseDir, CONTROL_FILE);
  const info: ControlInfo = { pid: process.pid, url: localUrl(url), token };
  await writeFileAtomic(file, `${JSON.stringify(info)}\n`, 0o600);
  return async () => {
    // Only our own file: a newer server on the same base dir may have replaced it.
    const current = await readControlFile(baseDir);
    if (current?.token === token) await unlink(file).catch(() => {});
  };
}

export async function readControlFile(baseDir: string): Promise<ControlInfo | undefined> {
  try {
    const v = JSON.parse(await readFile(join(baseDir, CONTROL_FILE), 'utf8')) as Partial<ControlInfo>;
    if (typeof v.pid === 'number' && typeof v.url === 'string' && typeof v.token === 'string') return { pid: v.pid, url: v.url, token: v.token };
  } catch {
    // absent or half-written: no server to talk to
  }
  return undefined;
}

/** The server running on `baseDir`, if its control file names a live process that answers to the token. */
export async function findRunningServer(baseDir: string): Promise<ControlInfo | undefined> {
  const info = await readControlFile(baseDir);
  if (!info) return undefined;
  try {
    process.kill(info.pid, 0);
  } catch (err) {
    // EPERM: alive but someone else's; ESRCH: a stale file left by a killed server.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  try {
    const res = await fetch(`${info.url}/api/version`, { headers: { 'X-Api-Key': info.token }, signal: AbortSignal.timeout(3_000) });
    await res.arrayBuffer();
    return res.ok ? info : undefined;
  } catch {
    return undefined;
  }
}
