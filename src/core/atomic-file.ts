// Atomic file replacement (temp file + fsync + rename + dir fsync): a crash mid-write leaves the old or the new file, never half of one; and the syncs other writers of files use.
import { open, rename, unlink, mkdir, readdir } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';

const queues = new Map<string, Promise<void>>();

/**
 * Moves a file that cannot be read as what it should hold (a damaged SD card, a hand edit) to
 * `<name>.corrupt-<time>` beside it, so the next save does not overwrite what may still be recovered by hand.
 * Resolves to the new path, or undefined when the file could not be moved (gone already).
 */
export async function setAside(path: string): Promise<string | undefined> {
  const aside = `${path}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  return rename(path, aside).then(() => aside, () => undefined);
}

/** Temp files are `.<name>.<12 hex>.tmp`; nothing else in a folder looks like that. */
const TEMP_TAIL = '.tmp';
const TEMP_NAME = /^\..+\.[0-9a-f]{12}\.tmp$/;

/** Whether `name` is a temp file that writeFileAtomic makes while it writes `target` (a file name). */
export const isWriteTempOf = (name: string, target: string): boolean => name.startsWith(`.${target}.`) && TEMP_NAME.test(name);

/**
 * Removes the temp files a killed process left mid-write in `dirs` (not recursive). They may hold secrets (config.yaml
 * holds the API key), and nothing else ever renames them. Call at start, before anything writes. Returns what was removed.
 */
export async function removeStaleTempFiles(dirs: readonly string[]): Promise<string[]> {
  const removed: string[] = [];
  for (const dir of dirs) {
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      if (!TEMP_NAME.test(name)) continue;
      const full = join(dir, name);
      await unlink(full).then(() => removed.push(full), () => {});
    }
  }
  return removed;
}

export interface AtomicWriteOptions {
  mode?: number;
  /**
   * Create the file's folder when it is missing (default). Off for files that belong to a folder someone else owns
   * (per-folder metadata): writing there must never bring back a folder that was just deleted.
   */
  createFolder?: boolean;
}

export async function writeFileAtomic(path: string, data: string | Uint8Array, opts: number | AtomicWriteOptions = {}): Promise<void> {
  const { mode = 0o644, createFolder = true } = typeof opts === 'number' ? { mode: opts } : opts;
  // Serialise writers of the same path so the last call always wins on disk.
  const prev = queues.get(path) ?? Promise.resolve();
  const next = prev.catch(() => {}).then(() => doWrite(path, data, mode, createFolder));
  queues.set(path, next);
  try {
    await next;
  } finally {
    if (queues.get(path) === next) queues.delete(path);
  }
}

async function doWrite(path: string, data: string | Uint8Array, mode: number, createFolder: boolean): Promise<void> {
  const dir = dirname(path);
  if (createFolder) await mkdir(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}${TEMP_TAIL}`);
  const fh = await open(tmp, 'w', mode);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw err;
  }
  await fh.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
  await syncFolder(dir);
}

/**
 * Puts a folder's entries on disk: a file created, renamed, linked or removed in it is only sure to be there (or gone)
 * after a power cut once its folder is synced, whatever was synced of the file itself. A file system that cannot sync
 * a folder (some FUSE and network ones refuse) is left to its own guarantees.
 */
export async function syncFolder(dir: string): Promise<void> {
  const dh = await open(dir, 'r').catch(() => null);
  if (!dh) return;
  try {
    await dh.sync().catch(() => {});
  } finally {
    await dh.close();
  }
}

/**
 * Removes a file for good: its folder is synced, so a power cut does not bring back what a client was told is gone.
 * False when there was no such file; other failures throw.
 */
export async function removeFile(path: string): Promise<boolean> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  await syncFolder(dirname(path));
  return true;
}

/** Puts a file's content and times on disk; a failure is the caller's (the data may not be there). */
export async function syncFile(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Puts a folder and everything below it on disk: each file, each folder (their entries), itself last; not its own entry in its parent. */
export async function syncTree(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await syncTree(path);
    else if (entry.isFile()) await syncFile(path);
  }
  await syncFolder(dir);
}
