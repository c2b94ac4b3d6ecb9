// Upload intake: streams incoming bytes into a hidden temp file (hashing on the way, size-capped) so an upload only
// becomes visible by a rename once complete; an aborted or refused upload leaves nothing behind.
import { mkdir, open, readdir, rm, unlink, rename, type FileHandle } from 'node:fs/promises';
import type { Dirent } from 'node:fs';
import { createHash, randomBytes, type Hash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { DomainError, ErrorCodes } from '../core/errors.ts';
import { collectYoungGarbage } from '../core/gc.ts';
import { isWriteTempOf, syncFolder } from '../core/atomic-file.ts';
import { copyFileExactly } from './exact-copy.ts';
import { METADATA_FILE } from './metadata-store.ts';

const TEMP_PREFIX = '.upload-';
const TEMP_SUFFIX = '.tmp';

/** A hidden name in `dir` for a file or folder not yet in place (an upload, a copy), which a start removes if it is left there. */
export const unfinishedIn = (dir: string): string => join(dir, `${TEMP_PREFIX}${randomBytes(8).toString('hex')}${TEMP_SUFFIX}`);

/** The names `unfinishedIn` makes. */
const isPlacedLater = (name: string): boolean => name.startsWith(TEMP_PREFIX) && name.endsWith(TEMP_SUFFIX);
/** Whether a name in the uploads is something not yet in place: an upload or a copy under its hidden name, a metadata write's temp file. */
export const isUnfinishedName = (name: string): boolean => isPlacedLater(name) || isWriteTempOf(name, METADATA_FILE);

/**
 * Deletes what a stopped server left unfinished in `dir` and the folders below it: uploads and copies (files and
 * folders) not yet in place, and metadata writes a kill cut short (one per killed write, else kept for good).
 */
export async function removeStaleUploads(dir: string, depth = 0): Promise<void> {
  let names: Dirent[];
  try {
    names = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const d of names) {
    if (d.isFile() && isUnfinishedName(d.name)) await unlink(join(dir, d.name)).catch(() => {});
    else if (d.isDirectory() && isPlacedLater(d.name)) await rm(join(dir, d.name), { recursive: true, force: true }).catch(() => {});
    else if (d.isDirectory() && !d.name.startsWith('.') && depth < 32) await removeStaleUploads(join(dir, d.name), depth + 1);
  }
}

export class UploadSink {
  readonly tmpPath: string;
  private fh: FileHandle | undefined;
  private readonly hash: Hash = createHash('sha1');
  private bytes = 0;
  private closed = false;

  constructor(dir: string, private readonly maxSize: number) {
    this.tmpPath = unfinishedIn(dir);
  }

  /** Opens the temp file; true when its folder was gone (removed behind the server's back) and was made again. */
  async open(): Promise<boolean> {
    try {
      this.fh = await open(this.tmpPath, 'wx', 0o644);
      return false;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await mkdir(dirname(this.tmpPath), { recursive: true });
      this.fh = await open(this.tmpPath, 'wx', 0o644);
      return true;
    }
  }

  get size(): number {
    return this.bytes;
  }

  /** Writes one chunk; awaiting it is the back-pressure that keeps memory flat whatever the upload size. */
  async write(chunk: Buffer): Promise<void> {
    if (!this.fh) throw new Error('upload sink not open');
    this.bytes += chunk.length;
    if (this.bytes > this.maxSize) throw new DomainError(ErrorCodes.PAYLOAD_TOO_LARGE, 'Upload exceeds the maximum upload size');
    this.hash.update(chunk);
    // The chunks written so far are garbage already: freed every 256 KB, before they pile up (core/gc.ts).
    if (this.bytes >>> 18 !== (this.bytes - chunk.length) >>> 18) collectYoungGarbage();
    let off = 0;
    while (off < chunk.length) {
      const { bytesWritten } = await this.fh.write(chunk, off, chunk.length - off);
      off += bytesWritten;
    }
  }

  /** Flushes and closes; returns the SHA-1 of everything written. */
  async finish(): Promise<string> {
    if (!this.fh) throw new Error('upload sink not open');
    await this.fh.sync();
    await this.fh.close();
    this.closed = true;
    return this.hash.digest('hex');
  }

  /**
   * Moves the finished temp file into place. Where the target folder is on another file system (a disk mounted inside
   * the uploads folder) the rename fails with EXDEV: the file is copied beside the target under a hidden temp name
   * first, synced, and renamed from there, so the target never shows half a file, not even to a listing meanwhile or
   * after a crash (a start removes the temp name), and keeps its modification time's millisecond (the content key the
   * upload's hash is placed under: LocalStorage.placing).
   */
  async commit(target: string): Promise<void> {
    try {
      await rename(this.tmpPath, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      await this.copyAcross(target);
    }
    // The 201 says the file is there: after a power cut too.
    await syncFolder(dirname(target));
  }

  private async copyAcross(target: string): Promise<void> {
    const beside = unfinishedIn(dirname(target));
    try {
      await copyFileExactly(this.tmpPath, beside);
      await rename(beside, target);
    } catch (err) {
      // EEXIST: the name was taken before the copy began (the copy never replaces a file), so not this upload's.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') await unlink(beside).catch(() => {});
      throw err;
    }
    // The upload is in place: a temp file that cannot go now is removed at the next start, the upload stands.
    await unlink(this.tmpPath).catch(() => {});
  }

  /** Removes every trace of the upload; safe to call more than once and after commit. */
  async discard(): Promise<void> {
    if (this.fh && !this.closed) {
      this.closed = true;
      await this.fh.close().catch(() => {});
    }
    await unlink(this.tmpPath).catch(() => {});
  }
}
