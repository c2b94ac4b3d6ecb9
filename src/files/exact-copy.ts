// Copies of files and folders whose files keep their modification time's millisecond, which stored hashes and analyses are keyed by, and are on disk when the copy returns.
import { constants, copyFile, cp, readdir, stat, utimes } from 'node:fs/promises';
import { basename, join, relative } from 'node:path';
import { syncFile, syncTree } from '../core/atomic-file.ts';

/**
 * fs.cp's preserveTimestamps sets times through Date objects, rounded to the nearest millisecond: a file modified at
 * …541.59 ms was copied with …542, so about every other copied file no longer matched its metadata's key (size and
 * whole milliseconds: contentKey, metadata-store.ts) and lost its analysis: analysed and hashed again from the disk. The copy gets
 * the middle of the source's millisecond, well clear of a rounding either way.
 */
async function keepMillisecond(src: string, dst: string): Promise<void> {
  const st = await stat(src);
  await utimes(dst, st.atimeMs / 1000, (Math.floor(st.mtimeMs) + 0.5) / 1000);
}

/**
 * A file, to a path where nothing is yet, synced (content and times): the caller links or renames it into place and
 * then syncs that folder, and a power cut must not leave the name with a file the disk never got.
 */
export async function copyFileExactly(src: string, dst: string): Promise<void> {
  await copyFile(src, dst, constants.COPYFILE_EXCL);
  await keepMillisecond(src, dst);
  await syncFile(dst);
}

/**
 * A folder with everything in it but what `leaveOut` names (files being written: their temp files come and go while
 * the copy runs, and one gone before it was copied failed the whole copy), to a path where nothing is yet; every file
 * and folder of the copy synced (not its parent).
 */
export async function copyTreeExactly(src: string, dst: string, leaveOut: (name: string) => boolean = () => false): Promise<void> {
  await cp(src, dst, { recursive: true, errorOnExist: true, force: false, preserveTimestamps: true, filter: (from) => from === src || !leaveOut(basename(from)) });
  for (const entry of await readdir(dst, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const rel = relative(dst, join(entry.parentPath, entry.name));
    await keepMillisecond(join(src, rel), join(dst, rel));
  }
  await syncTree(dst);
}
