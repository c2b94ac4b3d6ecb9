// The `local` location on disk: walking the uploads tree into entries, folder create/copy/move/delete, hashes and
// disk usage. Knows paths and metadata, not events or jobs (file-service.ts orchestrates those).
import { readdir, stat, mkdir, rm, rename, statfs, link, unlink } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import { DomainError, ErrorCodes, conflict, notFound } from '../core/errors.ts';
import { syncFolder } from '../core/atomic-file.ts';
import { digestFile } from '../core/file-chunks.ts';
import type { Logger } from '../core/logger.ts';
import { MetadataStore, contentKey, type FileMeta } from './metadata-store.ts';
import type { FileTypes } from './file-types.ts';
import { MAX_PATH_PARTS, resolveInside, joinPath } from './safe-path.ts';
import { isUnfinishedName, unfinishedIn } from './upload-intake.ts';
import { copyFileExactly, copyTreeExactly } from './exact-copy.ts';
import type { StoredEntry, StoredFile, StoredFolder } from './types.ts';
import { filesOf, trimDepth } from './entry-tree.ts';

/** Keys that become entry fields rather than pass-through metadata. */
const ENTRY_KEYS = new Set(['display', 'hash', 'hashKey', 'analysisKey']);

export function passThroughMeta(meta: FileMeta | undefined): FileMeta {
  const out: FileMeta = {};
  if (!meta) return out;
  for (const [k, v] of Object.entries(meta)) if (!ENTRY_KEYS.has(k)) out[k] = v;
  return out;
}

/**
 * How long a listing is served again when nothing changed through this process: changes made behind the server's
 * back (scp, a network share) show within this time. Changes made through the server show at once.
 */
export const LISTING_REUSE_MS = 1000;

/**
 * How long after its walk ended a listing is served again: LISTING_REUSE_MS, or four times what the walk took when
 * that is longer, so that clients polling a large library keep the server walking its disk a fifth of the time at
 * most (10,000 files: a walk of ≈ 0.6 s, reused for 2.4 s) while a small one is walked as often as before.
 */
export function listingReuseMs(walkMs: number): number {
  return Math.max(LISTING_REUSE_MS, 4 * walkMs);
}

/** Listings kept (by depth and filter); clients use a few (flat or recursive, all or one type). */
const MAX_LISTINGS = 8;

/** Entries of one folder looked at together while walking (stat, metadata, a hash to make): enough to keep the thread pool busy. */
const WALK_BATCH = 32;

export class LocalStorage {
  readonly metadata: MetadataStore;
  /** Changes to the tree made through this process (metadata writes count on their own). */
  private treeChanges = 0;
  /**
   * Listings by depth and filter: a listing walks the whole tree (a stat per file, a metadata read per folder), and
   * clients poll it. Shared by concurrent callers; the same array is handed out while it is valid, so the HTTP side
   * can keep its rendering of it.
   */
  private readonly listings = new Map<string, { generation: number; until: number; entries: Promise<StoredEntry[]> }>();
  /**
   * File entries by the metadata object they were made from, with the content they describe (size and mtime). Metadata
   * objects are replaced, never changed, when a file's metadata changes (metadata-store.ts), so an entry found here for
   * the same content, path and type is what making it again would give. Listings hand out the same objects while
   * nothing changed, and the HTTP side keeps each one's JSON (http/listing-json.ts): a library of 5,000 files walked
   * again made 5,000 entries, their wire form and 7 MB of JSON each time.
   */
  private readonly madeEntries = new WeakMap<FileMeta, { key: string; entry: StoredFile }>();
  /** Hashes being computed, by file and content. */
  private readonly hashing = new Map<string, Promise<string | undefined>>();
  /** Files an upload is moving into place (placing()), by absolute path: their hash and content key. */
  private readonly placed = new Map<string, { hash: string; key: string }>();

  constructor(readonly root: string, private readonly logger: Logger, private readonly types: FileTypes) {
    this.metadata = new MetadataStore(logger);
  }

  abs(parts: readonly string[]): string {
    return resolveInside(this.root, parts);
  }

  async statOf(parts: readonly string[]): Promise<Stats | undefined> {
    try {
      return await stat(this.abs(parts));
    } catch (err) {
      if (err instanceof DomainError) throw err;
      return undefined;
    }
  }

  async kindOf(parts: readonly string[]): Promise<'file' | 'folder' | undefined> {
    const st = await this.statOf(parts);
    if (!st) return undefined;
    return st.isDirectory() ? 'folder' : st.isFile() ? 'file' : undefined;
  }

  /**
   * The SHA-1 of a file, from metadata when it still matches the content, else computed and stored. Listings that
   * overlap (the one at start, a client's first) share the computation of a file's hash.
   */
  async hashOf(parts: readonly string[], st: Stats): Promise<string | undefined> {
    const folderAbs = this.abs(parts.slice(0, -1));
    const name = parts[parts.length - 1];
    const meta = await this.metadata.get(folderAbs, name);
    const key = contentKey(st);
    if (meta?.hash && meta.hashKey === key) return meta.hash;
    const placed = this.placed.get(this.abs(parts));
    if (placed?.key === key) return placed.hash;
    const id = `${this.abs(parts)}\0${key}`;
    let hashing = this.hashing.get(id);
    if (!hashing) {
      hashing = this.computeHash(parts, folderAbs, name, key);
      this.hashing.set(id, hashing);
      void hashing.finally(() => this.hashing.delete(id));
    }
    return hashing;
  }

  /**
   * An upload is about to rename `tempPath` (its bytes hashed as they came in) to `parts`; until the returned function
   * is called (its metadata recorded), a listing that finds that content there takes the upload's hash, instead of
   * reading the whole file to hash it again (36 MB under load: listings waited up to 0.5 s). A rename keeps size and
   * mtime, and so does the copy onto another file system (exact-copy.ts keeps the millisecond the key holds).
   */
  async placing(parts: readonly string[], hash: string, tempPath: string): Promise<() => void> {
    const abs = this.abs(parts);
    const mark = { hash, key: contentKey(await stat(tempPath)) };
    this.placed.set(abs, mark);
    return () => {
      if (this.placed.get(abs) === mark) this.placed.delete(abs);
    };
  }

  private async computeHash(parts: readonly string[], folderAbs: string, name: string, key: string): Promise<string | undefined> {
    try {
      const hash = await digestFile(this.abs(parts), 'sha1');
      // Made again if lost: the listing that asked need not wait for the write.
      await this.metadata.update(folderAbs, name, { hash, hashKey: key }, { background: true });
      return hash;
    } catch (err) {
      this.logger.debug({ err, path: joinPath(parts) }, 'hash failed');
      return undefined;
    }
  }

  async fileEntry(parts: readonly string[], st?: Stats): Promise<StoredFile> {
    const s = st ?? (await this.statOf(parts));
    const name = parts[parts.length - 1];
    const typePath = this.types.typePathOf(name);
    if (!s || !s.isFile() || !typePath) throw notFound('File not found');
    const meta = await this.metadata.get(this.abs(parts.slice(0, -1)), name);
    const path = joinPath(parts);
    const key = contentKey(s);
    const made = meta && this.madeEntries.get(meta);
    if (made && made.key === key && made.entry.path === path && made.entry.typePath.join('/') === typePath.join('/')) return made.entry;
    const entry: StoredFile = {
      kind: 'file', origin: 'local', name, display: meta?.display ?? name, path, typePath,
      size: s.size, date: Math.floor(s.mtimeMs / 1000), hash: await this.hashOf(parts, s), meta: passThroughMeta(meta),
    };
    // Replaced on disk behind our back (copied over by hand, another program): its figures describe the old content.
    // Stored without a key (carried over from elsewhere): nothing to compare, kept.
    if (entry.meta.analysis !== undefined && typeof meta?.analysisKey === 'string' && meta.analysisKey !== contentKey(s)) {
      delete entry.meta.analysis;
    }
    if (entry.meta.analysis === undefined) entry.analysisMissing = true;
    // A hash still to be made (it failed) is tried again by the next listing.
    if (meta && entry.hash !== undefined) this.madeEntries.set(meta, { key, entry });
    return entry;
  }

  /**
   * A folder with its whole subtree (sizes need the whole tree anyway). `depth` limits how many levels keep their
   * children: 0 = none, 1 = immediate children only, Infinity = everything.
   */
  async folderEntry(parts: readonly string[], depth: number, filter?: string): Promise<StoredFolder> {
    const st = await this.statOf(parts);
    return this.folderWithin(parts, depth, filter, st ? [folderId(st)] : []);
  }

  /**
   * `ancestors`: the folders (device and inode) this one is inside, itself included. A folder at the deepest level a
   * path may have is listed without what is in it.
   */
  private async folderWithin(parts: readonly string[], depth: number, filter: string | undefined, ancestors: readonly string[]): Promise<StoredFolder> {
    const children = parts.length < MAX_PATH_PARTS ? await this.walk(parts, filter, ancestors) : [];
    const size = children.reduce((n, c) => n + (c.size ?? 0), 0);
    const name = parts[parts.length - 1] ?? '';
    const meta = parts.length ? await this.metadata.get(this.abs(parts.slice(0, -1)), name) : undefined;
    return {
      kind: 'folder', origin: 'local', name, display: meta?.display ?? name, path: joinPath(parts), size,
      children: trimDepth(children, depth), meta: passThroughMeta(meta),
    };
  }

  /**
   * Every visible entry below a folder, sorted by name (hidden names and unknown types are skipped). A folder's entries
   * are looked at WALK_BATCH at a time: one after the other, a listing of 10,000 files waited out 10,000 stat round trips
   * through libuv's thread pool in turn (≈ 2.3 s, folders only; the pool has four threads).
   */
  private async walk(parts: readonly string[], filter: string | undefined, ancestors: readonly string[]): Promise<StoredEntry[]> {
    const abs = this.abs(parts);
    let names: string[];
    try {
      names = await readdir(abs);
    } catch {
      return [];
    }
    names = names.filter((name) => !name.startsWith('.')).sort();
    const out: (StoredEntry | undefined)[] = [];
    for (let i = 0; i < names.length; i += WALK_BATCH) {
      out.push(...(await Promise.all(names.slice(i, i + WALK_BATCH).map((name) => this.walkEntry(parts, abs, name, filter, ancestors)))));
    }
    return out.filter((e): e is StoredEntry => e !== undefined);
  }

  private async walkEntry(parts: readonly string[], abs: string, name: string, filter: string | undefined, ancestors: readonly string[]): Promise<StoredEntry | undefined> {
    let st: Stats;
    try {
      st = await stat(join(abs, name));
    } catch {
      return undefined;
    }
    const childParts = [...parts, name];
    if (st.isDirectory()) {
      // A link (symlink, bind mount) back to a folder this one is inside would be walked for ever, each turn listing
      // everything again: it is left out.
      const id = folderId(st);
      if (ancestors.includes(id)) return undefined;
      return this.folderWithin(childParts, Infinity, filter, [...ancestors, id]);
    }
    if (st.isFile() && this.types.typePathOf(name) && (!filter || this.types.matchesFilter(name, filter))) return this.fileEntry(childParts, st);
    return undefined;
  }

  /** Top-level entries (`depth` as in folderEntry); `fresh` walks the disk even when a listing is still valid. */
  list(depth: number, filter?: string, fresh = false): Promise<StoredEntry[]> {
    const key = `${depth}|${filter ?? ''}`;
    const now = performance.now();
    const cached = this.listings.get(key);
    if (!fresh && cached && cached.generation === this.generation && now < cached.until) return cached.entries;
    // The generation before the walk: a change while it runs makes this listing stale at once.
    const generation = this.generation;
    const slot: { generation: number; until: number; entries: Promise<StoredEntry[]> } = { generation, until: now + LISTING_REUSE_MS, entries: Promise.resolve([]) };
    slot.entries = this.folderEntry([], depth, filter).then((f) => {
      const end = performance.now();
      slot.until = end + listingReuseMs(end - now);
      return f.children;
    });
    const { entries } = slot;
    this.listings.delete(key);
    this.listings.set(key, slot);
    // One per depth and filter a client asked for, and `filter` is any text: the oldest go beyond a handful.
    for (const old of this.listings.keys()) {
      if (this.listings.size <= MAX_LISTINGS) break;
      this.listings.delete(old);
    }
    entries.catch(() => { if (this.listings.get(key) === slot) this.listings.delete(key); });
    return entries;
  }

  /** Counts every change to the tree or its metadata made through this process; listings of an older one are stale. */
  get generation(): number {
    return this.treeChanges + this.metadata.changes;
  }

  /** Records a change made to the tree outside these methods (an upload moved into place). */
  changed(): void {
    this.treeChanges++;
  }

  /**
   * The uploads folder was removed behind the server's back (a clean-up by hand) and made again (upload-intake.ts):
   * before, every upload failed as "interrupted" until a restart. What was known of its files goes with them.
   */
  rootMadeAgain(): void {
    this.logger.warn({ folder: this.root }, 'the uploads folder was gone; made it again');
    this.metadata.forget(this.root);
    this.changed();
  }

  async makeFolder(parts: readonly string[], display?: string): Promise<void> {
    let cur: string[] = [];
    for (const p of parts) {
      cur = [...cur, p];
      const st = await this.statOf(cur);
      if (st && !st.isDirectory()) throw conflict('Can\'t create folder, a file with that name exists');
    }
    await mkdir(this.abs(parts), { recursive: true });
    // Every level may be new (parents are made too): each one's entry in its parent goes on disk.
    for (let depth = parts.length - 1; depth >= 0; depth--) await syncFolder(this.abs(parts.slice(0, depth)));
    this.changed();
    if (display && parts.length && display !== parts[parts.length - 1]) {
      await this.metadata.update(this.abs(parts.slice(0, -1)), parts[parts.length - 1], { display });
    }
  }

  /** Copies or moves a file or folder with its metadata; the target must not exist and its parent must. */
  async transfer(src: readonly string[], dst: readonly string[], mode: 'copy' | 'move'): Promise<void> {
    const srcAbs = this.abs(src);
    const dstAbs = this.abs(dst);
    const parentSt = await this.statOf(dst.slice(0, -1));
    if (!parentSt?.isDirectory()) throw new DomainError(ErrorCodes.INTERNAL, 'destination folder does not exist');
    const [srcFolder, dstFolder] = [this.abs(src.slice(0, -1)), this.abs(dst.slice(0, -1))];
    const [srcName, dstName] = [src[src.length - 1], dst[dst.length - 1]];
    const meta = await this.metadata.get(srcFolder, srcName);
    // Listings walk the disk: one that found a file at its new place before its metadata read it all to hash it again
    // and queued an analysis; one during a copy saw half a file. The metadata goes first, a copy appears whole.
    await this.metadata.all(dstFolder);
    this.changed();
    if (mode === 'move') {
      await rename(srcAbs, dstAbs);
      this.metadata.forget(srcAbs);
      this.changed();
      if (meta) await this.metadata.set(dstFolder, dstName, meta);
      await this.metadata.set(srcFolder, srcName, undefined);
      // After the metadata: a listing meanwhile would find the file at its new place without it.
      await syncFolder(dstFolder);
      if (srcFolder !== dstFolder) await syncFolder(srcFolder);
      return;
    }
    if ((await stat(srcAbs)).isDirectory()) {
      // Made whole under a hidden name, then renamed into place: a listing meanwhile saw its files half-copied, which
      // a client could select and print, and a crash left them so under real names.
      const temp = unfinishedIn(dstFolder);
      try {
        // Without what is being written in it meanwhile (an analysis's metadata, an upload): not the change queue's.
        await copyTreeExactly(srcAbs, temp, isUnfinishedName);
        // The name was checked free before; a rename replaces only an empty folder, made meanwhile behind our back.
        await rename(temp, dstAbs);
      } catch (err) {
        await rm(temp, { recursive: true, force: true }).catch(() => {});
        throw err;
      }
      this.changed();
      if (meta) await this.metadata.set(dstFolder, dstName, meta);
      await syncFolder(dstFolder);
      return;
    }
    // Under a hidden name (a crash's leftover is removed at start: upload-intake.ts), then linked: never replaces a file.
    // Where the file system has no hard links (FAT on a USB stick) it is renamed; the name was checked free before.
    const temp = unfinishedIn(dstFolder);
    try {
      await copyFileExactly(srcAbs, temp);
      if (meta) await this.metadata.set(dstFolder, dstName, meta);
      try {
        await link(temp, dstAbs).catch((err: NodeJS.ErrnoException) => (err.code === 'EEXIST' ? Promise.reject(err) : rename(temp, dstAbs)));
      } catch (err) {
        if (meta) await this.metadata.set(dstFolder, dstName, undefined);
        throw err;
      }
      await syncFolder(dstFolder);
      this.changed();
    } finally {
      await unlink(temp).catch(() => {});
    }
  }

  async remove(parts: readonly string[]): Promise<void> {
    const abs = this.abs(parts);
    // A metadata write that was under way (a print's statistics, an analysis result) may land a temp file in the
    // folder while rm empties it: the folder is then "not empty" for a moment. Metadata writes never re-create a
    // folder, so trying again once the writes started so far have landed settles it. (A fixed wait was not enough on
    // a loaded machine, where one write with its fsync outlasted it.)
    this.changed();
    for (let attempt = 1; ; attempt++) {
      try {
        await rm(abs, { recursive: true, force: true });
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOTEMPTY' || attempt === 5) throw err;
        await this.metadata.flush();
      }
    }
    await syncFolder(this.abs(parts.slice(0, -1)));
    this.changed();
    this.metadata.forget(abs);
    await this.metadata.set(this.abs(parts.slice(0, -1)), parts[parts.length - 1], undefined);
  }

  /** Every file path (relative) below a folder, for in-use checks before folder operations. */
  async filesBelow(parts: readonly string[]): Promise<string[]> {
    return filesOf(await this.folderEntry(parts, Infinity));
  }

  async diskUsage(): Promise<{ free: number; total: number }> {
    try {
      const s = await statfs(this.root);
      return { free: s.bavail * s.bsize, total: s.blocks * s.bsize };
    } catch {
      return { free: 0, total: 0 };
    }
  }
}

const folderId = (st: Stats): string => `${st.dev}:${st.ino}`;
