// File metadata kept beside the files: one `.metadata.json` per folder, keyed by file/folder name (display name,
// SHA-1 hash, analysis result, print history, userdata, any key a plugin adds). Written atomically; a missing or
// corrupt file is treated as empty (a corrupt one set aside first) and rebuilt as entries are touched again.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setAside, writeFileAtomic } from '../core/atomic-file.ts';
import { storageProblem } from '../core/errors.ts';
import { DEFAULT_JSON_BOUNDS, jsonBoundsViolation } from '../core/bounded-json.ts';
import type { Logger } from '../core/logger.ts';

export const METADATA_FILE = '.metadata.json';

/** One finished print of a file. */
export interface PrintRecord {
  /** Unix seconds (float) when the print ended. */
  timestamp: number;
  success: boolean;
  /** Seconds; only for completed prints. */
  printTime?: number;
  printerProfile?: string;
}

export interface FileMeta {
  display?: string;
  hash?: string;
  /** contentKey() of the content the hash belongs to. */
  hashKey?: string;
  analysis?: Record<string, unknown>;
  /** contentKey() of the content the analysis belongs to. */
  analysisKey?: string;
  history?: PrintRecord[];
  userdata?: unknown;
  [key: string]: unknown;
}

/** What a file's hash and analysis are matched to its content by: its size and whole milliseconds of its mtime. */
export const contentKey = (st: { size: number; mtimeMs: number }): string => `${st.size}:${Math.floor(st.mtimeMs)}`;

type FolderMeta = Record<string, FileMeta>;

/** A folder's next write, not begun yet: it writes `meta` as it is when it begins. */
interface QueuedWrite { meta: FolderMeta; done: Promise<void>; hurry(): void }

/** How long a background change waits for others to share its write. */
export const BACKGROUND_WRITE_DELAY_MS = 1000;

export class MetadataStore {
  private readonly cache = new Map<string, Promise<FolderMeta>>();
  private readonly inflight = new Set<Promise<void>>();
  /** Per folder: the write not begun yet, which will carry any change made now; and the latest write, begun or not. */
  private readonly nextWrite = new Map<string, QueuedWrite>();
  private readonly lastWrite = new Map<string, Promise<void>>();
  /** Metadata files written (tests and diagnostics: changes that arrive together share a write). */
  writes = 0;
  /** Counts changes (writes and forgets): listings built before the latest one are stale (local-storage.ts). */
  changes = 0;
  /** The last save failed for want of space (or a read-only disk): the next such failure is not logged again. */
  private storageFailing = false;

  constructor(private readonly logger: Logger) {}

  private load(folderAbs: string): Promise<FolderMeta> {
    let p = this.cache.get(folderAbs);
    if (!p) {
      const file = join(folderAbs, METADATA_FILE);
      p = readFile(file, 'utf8').then(
        async (text) => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch (err) {
            // Analyses are made again; print counts and user data are not, so the file is kept for a person to look at.
            this.logger.warn({ err, folder: folderAbs, file: await setAside(file) }, 'corrupt metadata, set aside; starting afresh');
            return {};
          }
          if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
          return this.withoutHostileDepth(folderAbs, parsed as FolderMeta);
        },
        (err: NodeJS.ErrnoException) => {
          if (err.code !== 'ENOENT') this.logger.warn({ err, folder: folderAbs }, 'unreadable metadata, starting afresh');
          return {};
        },
      );
      this.cache.set(folderAbs, p);
    }
    return p;
  }

  /**
   * A value nested past any bound a client's value passes (one stored before those bounds, or put there by hand) broke
   * every listing of the folder with a stack overflow: such keys are dropped, with a warning naming them.
   */
  private withoutHostileDepth(folderAbs: string, meta: FolderMeta): FolderMeta {
    for (const [name, entry] of Object.entries(meta)) {
      if (typeof entry !== 'object' || entry === null) continue;
      for (const [key, value] of Object.entries(entry)) {
        const problem = jsonBoundsViolation(value, { maxDepth: DEFAULT_JSON_BOUNDS.maxDepth, maxBytes: Number.MAX_SAFE_INTEGER });
        if (!problem) continue;
        delete (entry as Record<string, unknown>)[key];
        this.logger.warn({ folder: folderAbs, file: name, key }, `stored metadata ${problem}, dropped`);
      }
    }
    return meta;
  }

  /**
   * Persists a folder's metadata; resolves once a write that began after this call has landed. Changes that come while
   * a write of the folder is under way share the next one: each write is the whole folder, and a burst of changes (a
   * backlog of analyses finishing) wrote the file once per change: 500 files in a folder meant 500 writes growing to
   * ≈ 0.5 MB each, ≈ 120 MB written, and as much JSON made on the main thread. A `background` change (what can be
   * made again, such as an analysis) waits BACKGROUND_WRITE_DELAY_MS for others to join it; any other change, or
   * flush(), starts the write at once.
   */
  private save(folderAbs: string, meta: FolderMeta, background = false): Promise<void> {
    this.changes++;
    const queued = this.nextWrite.get(folderAbs);
    if (queued) {
      // The folder's latest object (after forget() a new one is loaded) is what the write takes.
      queued.meta = meta;
      if (!background) queued.hurry();
      return queued.done;
    }
    const previous = this.lastWrite.get(folderAbs) ?? Promise.resolve();
    let hurry = (): void => {};
    const ready = background ? new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, BACKGROUND_WRITE_DELAY_MS);
      hurry = () => { clearTimeout(timer); resolve(); };
    }) : undefined;
    const next: QueuedWrite = { meta, done: Promise.resolve(), hurry: () => hurry() };
    next.done = Promise.all([previous, ready]).then(() => {
      // From here on a change needs a write of its own: this one's JSON is made now, without it.
      if (this.nextWrite.get(folderAbs) === next) this.nextWrite.delete(folderAbs);
      return this.write(folderAbs, next.meta);
    });
    const p = next.done;
    this.nextWrite.set(folderAbs, next);
    this.lastWrite.set(folderAbs, p);
    this.inflight.add(p);
    void p.finally(() => {
      this.inflight.delete(p);
      if (this.lastWrite.get(folderAbs) === p) this.lastWrite.delete(folderAbs);
    });
    return p;
  }

  /** Resolves once every metadata write asked for so far has landed, the delayed ones started at once (service stop). */
  async flush(): Promise<void> {
    while (this.inflight.size) {
      for (const queued of this.nextWrite.values()) queued.hurry();
      await Promise.all([...this.inflight]);
    }
  }

  private async write(folderAbs: string, meta: FolderMeta): Promise<void> {
    try {
      this.writes++;
      await writeFileAtomic(join(folderAbs, METADATA_FILE), JSON.stringify(meta), { createFolder: false });
      if (this.storageFailing) {
        this.storageFailing = false;
        this.logger.info({ folder: folderAbs }, 'metadata saved again');
      }
    } catch (err) {
      if (storageProblem(err)) {
        // A full or read-only disk: print counts and user data are not rebuildable. Said once while it lasts.
        if (!this.storageFailing) this.logger.warn({ err, folder: folderAbs }, 'metadata cannot be saved (disk full or read-only)');
        this.storageFailing = true;
        return;
      }
      // The folder may be gone (deleted/moved meanwhile); analyses are made again, so this is not fatal.
      this.logger.debug({ err, folder: folderAbs }, 'metadata not saved');
    }
  }

  async get(folderAbs: string, name: string): Promise<FileMeta | undefined> {
    return (await this.load(folderAbs))[name];
  }

  async all(folderAbs: string): Promise<Readonly<FolderMeta>> {
    return this.load(folderAbs);
  }

  /**
   * Merges `patch` into the entry (a key set to undefined is removed) and persists the folder's metadata. With
   * `background` (what could be made again if lost, see save) it resolves once the change is in memory, without
   * waiting for the write.
   */
  async update(folderAbs: string, name: string, patch: Partial<FileMeta>, opts: { background?: boolean } = {}): Promise<FileMeta> {
    const meta = await this.load(folderAbs);
    const entry: FileMeta = { ...(meta[name] ?? {}) };
    for (const [k, v] of Object.entries(patch)) {
      if (v === undefined) delete entry[k];
      else entry[k] = v;
    }
    meta[name] = entry;
    const saved = this.save(folderAbs, meta, opts.background);
    if (!opts.background) await saved;
    return entry;
  }

  /** Read-modify-write of one entry without an await in between (no lost updates between concurrent callers). */
  async mutate(folderAbs: string, name: string, fn: (entry: FileMeta) => FileMeta): Promise<FileMeta> {
    const meta = await this.load(folderAbs);
    const entry = fn({ ...(meta[name] ?? {}) });
    meta[name] = entry;
    await this.save(folderAbs, meta);
    return entry;
  }

  async set(folderAbs: string, name: string, entry: FileMeta | undefined): Promise<void> {
    const meta = await this.load(folderAbs);
    if (entry === undefined) {
      if (!(name in meta)) return;
      delete meta[name];
    } else {
      meta[name] = entry;
    }
    await this.save(folderAbs, meta);
  }

  /** Forgets cached folders at or below a path (after a folder was deleted or moved on disk). */
  forget(folderAbs: string): void {
    this.changes++;
    for (const key of [...this.cache.keys()]) {
      if (key === folderAbs || key.startsWith(folderAbs + '/')) this.cache.delete(key);
    }
  }
}
