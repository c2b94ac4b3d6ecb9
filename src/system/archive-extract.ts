// Safe archive extraction (zip, tar, tar.gz): treats every archive as hostile — no paths outside the target, no links or
// devices, capped entry count and total size. Extracts into a directory the caller throws away on failure.
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type yauzl from 'yauzl';
import type * as Tar from 'tar';
import { DomainError, invalid } from '../core/errors.ts';

export interface ExtractLimits {
  maxEntries: number;
  maxTotalBytes: number;
  /** Largest one member may expand to (default: maxTotalBytes). */
  maxEntryBytes?: number;
  /**
   * Zip only: members extracted as sparse files of their declared size, nothing read or written (a dry run that
   * must see the tree without filling the disk). Their content is read from the archive on demand instead.
   */
  placeholder?: (name: string) => boolean;
}

export type ArchiveKind = 'zip' | 'tar' | 'tgz';

/** Archive kind from a file name; undefined for anything else. */
export function archiveKind(filename: string): ArchiveKind | undefined {
  const n = filename.toLowerCase();
  if (n.endsWith('.zip')) return 'zip';
  if (n.endsWith('.tar.gz') || n.endsWith('.tgz')) return 'tgz';
  if (n.endsWith('.tar')) return 'tar';
  return undefined;
}

/** Checks one member name and returns its path below `root`; throws on anything that could land elsewhere. */
export function safeMemberPath(root: string, name: string): string {
  // eslint-disable-next-line no-control-regex
  if (name === '' || name.includes('\\') || name.startsWith('/') || /^[a-zA-Z]:/.test(name) || /[\u0000]/.test(name)) {
    throw invalid(`Unsafe path in archive: ${name}`);
  }
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.some((p) => p === '..')) throw invalid(`Unsafe path in archive: ${name}`);
  const target = resolve(root, ...parts);
  if (target !== root && !target.startsWith(root + sep)) throw invalid(`Unsafe path in archive: ${name}`);
  return target;
}

class Budget {
  entries = 0;
  bytes = 0;
  readonly placeholder: ExtractLimits['placeholder'];
  constructor(private readonly limits: ExtractLimits) {
    this.placeholder = limits.placeholder;
  }
  /** Refuses early when the declared size alone would exceed the budget. */
  check(n: number): void {
    if (this.bytes + n > this.limits.maxTotalBytes) throw invalid(`Archive expands to more than ${this.limits.maxTotalBytes} bytes`);
  }
  /** Refuses one member declared (or found) larger than a member may be. */
  member(name: string, n: number): void {
    const max = this.limits.maxEntryBytes ?? this.limits.maxTotalBytes;
    if (n > max) throw invalid(`Archive member ${name} expands to more than ${max} bytes`);
  }
  entry(): void {
    this.declareEntries(++this.entries);
  }
  /** Refuses an archive whose index declares more entries than allowed, before any is read. */
  declareEntries(n: number): void {
    if (n > this.limits.maxEntries) throw invalid(`Archive has more than ${this.limits.maxEntries} entries`);
  }
  add(n: number): void {
    this.bytes += n;
    if (this.bytes > this.limits.maxTotalBytes) throw invalid(`Archive expands to more than ${this.limits.maxTotalBytes} bytes`);
  }
}

// The zip and tar libraries (≈ 120 KB of code) load with the first archive, not with every server start.
export async function extractArchive(file: string, kind: ArchiveKind, dest: string, limits: ExtractLimits): Promise<void> {
  const root = resolve(dest);
  await mkdir(root, { recursive: true });
  if (kind === 'zip') await extractZip((await import('yauzl')).default, file, root, new Budget(limits));
  else await extractTar(await import('tar'), file, root, limits);
}

const S_IFMT = 0o170000, S_IFREG = 0o100000, S_IFDIR = 0o040000;

/**
 * Two passes, like the tar path: the central directory is read whole and the archive refused before anything is
 * written (entry count, names, links, encryption, declared sizes), then the members are extracted. Extracting as it
 * read, a zip of 2,100 empty files wrote 2,000 of them before it was refused (5.5 s).
 */
async function extractZip(zipLib: typeof yauzl, file: string, root: string, budget: Budget): Promise<void> {
  const zip = await new Promise<yauzl.ZipFile>((resolvePromise, reject) => {
    zipLib.open(file, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: true }, (err, z) =>
      (err || !z ? reject(invalid(`Not a valid zip archive: ${err?.message ?? 'unreadable'}`)) : resolvePromise(z)));
  });
  try {
    // The count the end-of-central-directory record declares; pass 1 counts the entries themselves as well.
    budget.declareEntries(zip.entryCount);
    const members = await zipMembers(zip, root, budget);
    for (const { entry, target, isDir } of members) {
      if (isDir) {
        await mkdir(target, { recursive: true });
        continue;
      }
      await mkdir(dirname(target), { recursive: true });
      if (budget.placeholder?.(entry.fileName)) {
        // A sparse file of the declared size: the tree's shape and sizes, no blocks used.
        const fh = await open(target, 'wx', 0o644);
        await fh.truncate(entry.uncompressedSize).finally(() => fh.close());
        continue;
      }
      const stream = await new Promise<NodeJS.ReadableStream>((res, rej) =>
        zip.openReadStream(entry, (e, st) => (e || !st ? rej(e ?? new Error('no stream')) : res(st))));
      await pipeline(stream, counter(budget, entry.fileName), createWriteStream(target, { flags: 'wx', mode: 0o644 }));
    }
  } catch (err) {
    throw err instanceof DomainError ? err : invalid(`Not a valid zip archive: ${(err as Error).message}`);
  } finally {
    zip.close();
  }
}

interface ZipMember { entry: yauzl.Entry; target: string; isDir: boolean }

/** Pass 1: every central-directory entry checked, nothing written; the declared sizes are summed against the budget. */
function zipMembers(zip: yauzl.ZipFile, root: string, budget: Budget): Promise<ZipMember[]> {
  return new Promise((resolvePromise, reject) => {
    const members: ZipMember[] = [];
    let declared = 0;
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      reject(err);
    };
    zip.on('error', fail);
    zip.on('end', () => { if (!failed) resolvePromise(members); });
    zip.on('entry', (entry: yauzl.Entry) => {
      try {
        budget.entry();
        const target = safeMemberPath(root, entry.fileName);
        // Unix mode lives in the upper 16 bits; 0 means "made on a system without modes" (a plain file or folder).
        const type = (entry.externalFileAttributes >>> 16) & S_IFMT;
        const isDir = entry.fileName.endsWith('/');
        if (type !== 0 && type !== (isDir ? S_IFDIR : S_IFREG)) throw invalid(`Links and special files are not allowed: ${entry.fileName}`);
        if (entry.isEncrypted()) throw invalid(`Encrypted entries are not supported: ${entry.fileName}`);
        if (!isDir) {
          budget.member(entry.fileName, entry.uncompressedSize);
          // Placeholders take no space; what is read instead is streamed, never written.
          if (!budget.placeholder?.(entry.fileName)) declared += entry.uncompressedSize;
          budget.check(declared);
        }
        members.push({ entry, target, isDir });
        zip.readEntry();
      } catch (err) {
        fail(err);
      }
    });
    zip.readEntry();
  });
}

/** Counts bytes as they are written so a lying size header cannot exceed the budget. */
function counter(budget: Budget, name: string): Transform {
  let mine = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      try {
        mine += chunk.length;
        budget.member(name, mine);
        budget.add(chunk.length);
        cb(null, chunk);
      } catch (err) {
        cb(err as Error);
      }
    },
  });
}

async function extractTar(tar: typeof Tar, file: string, root: string, limits: ExtractLimits): Promise<void> {
  // Pass 1: read every header and refuse the archive before a single byte is written. Stops reading at the first
  // problem, so a gzip bomb costs no more than its first too-large header.
  const budget = new Budget(limits);
  await new Promise<void>((resolvePromise, reject) => {
    const source = createReadStream(file);
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      source.destroy();
      reject(err instanceof DomainError ? err : invalid(`Not a valid tar archive: ${(err as Error).message}`));
    };
    const parser = new tar.Parser({
      strict: true,
      onReadEntry: (entry) => {
        try {
          budget.entry();
          safeMemberPath(root, entry.path);
          if (entry.type !== 'File' && entry.type !== 'OldFile' && entry.type !== 'Directory') {
            throw invalid(`Links and special files are not allowed: ${entry.path}`);
          }
          budget.member(entry.path, entry.size ?? 0);
          budget.add(entry.size ?? 0);
        } catch (err) {
          fail(err);
        }
        entry.resume();
      },
    });
    parser.on('error', fail);
    parser.on('end', () => {
      if (settled) return;
      if (budget.entries === 0) return fail(invalid('Not a valid tar archive: no entries'));
      settled = true;
      resolvePromise();
    });
    source.on('error', fail);
    source.pipe(parser);
  });

  // Pass 2: extract, with tar's own guards on as well and anything unexpected filtered out.
  const written = new Budget(limits);
  await tar.extract({
    file,
    cwd: root,
    strict: true,
    preservePaths: false,
    preserveOwner: false,
    noMtime: true,
    maxDepth: 32,
    filter: (path, entry) => {
      const e = entry as { type?: string; size?: number };
      if (e.type !== 'File' && e.type !== 'OldFile' && e.type !== 'Directory') return false;
      try {
        safeMemberPath(root, path);
        written.add(e.size ?? 0);
        return true;
      } catch {
        return false;
      }
    },
  });
}
