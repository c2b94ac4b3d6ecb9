// Reading an OctoPrint base directory without ever writing it: the source (a folder, or a backup zip unpacked into a
// throw-away folder), its folders resolved through config.yaml, and YAML/JSON files parsed with errors that name the
// file, the line and the key.
import { readFile, stat, statfs, mkdtemp, rm, readdir, utimes } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import yauzl from 'yauzl';
import { join, resolve, isAbsolute } from 'node:path';
import { parseDocument, LineCounter, isNode, type Document } from 'yaml';
import { DomainError, invalid } from '../core/errors.ts';
import { isPlain, type Plain } from '../core/plain.ts';
import { digestFile } from '../core/file-chunks.ts';
import { extractArchive, safeMemberPath } from '../system/archive-extract.ts';

/** A problem with the OctoPrint data itself (half-written, hand-edited): names the file and, where known, the key. */
export class ImportInputError extends DomainError {
  constructor(readonly file: string, readonly key: string | undefined, message: string, readonly line?: number) {
    super('INVALID_REQUEST', `${file}${line ? `:${line}` : ''}: ${key ? `${key}: ` : ''}${message}`);
    this.name = 'ImportInputError';
  }
}

/** A parsed YAML file that can say where a key is. */
export class YamlFile {
  private constructor(readonly file: string, readonly value: unknown, private readonly doc: Document, private readonly lines: LineCounter) {}

  static parse(file: string, text: string): YamlFile {
    const lines = new LineCounter();
    const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: false });
    if (doc.errors.length > 0) {
      const e = doc.errors[0];
      throw new ImportInputError(file, undefined, `invalid YAML (half-written or hand-edited?): ${e.message.split('\n')[0]}`, lines.linePos(e.pos[0]).line);
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      // The yaml library refuses an alias bomb (aliases of aliases, expanding exponentially) with a ReferenceError.
      throw new ImportInputError(file, undefined, `refused: ${(err as Error).message.split('\n')[0]} (more than 100 alias expansions; an "alias bomb"?)`);
    }
    const big = oversizedValue(value);
    if (big) throw new ImportInputError(file, big.key, big.what, lineOfPath(doc, lines, big.path));
    return new YamlFile(file, value, doc, lines);
  }

  /** Line of the closest existing node on a key path, for messages. */
  lineOf(path: readonly (string | number)[]): number | undefined {
    return lineOfPath(this.doc, this.lines, path);
  }

  error(path: readonly (string | number)[], message: string): ImportInputError {
    return new ImportInputError(this.file, path.join('.') || undefined, message, this.lineOf(path));
  }
}

/**
 * The most one string value of an imported YAML file may hold: what the settings API accepts in a whole request
 * (server.maxSize), so an import takes nothing the API would refuse. A 50 MB string was imported as it was (2 GB RSS).
 */
export const MAX_IMPORTED_STRING_BYTES = 100 * 1024;
/** The most an imported YAML or JSON file may hold before it is parsed (a metadata file of a big folder is the largest). */
export const MAX_IMPORTED_FILE_BYTES = 32 * 1024 * 1024;

/** The first string (or key) longer than MAX_IMPORTED_STRING_BYTES, with its key path; walked without recursion. */
function oversizedValue(value: unknown): { key: string; path: Array<string | number>; what: string } | undefined {
  const stack: Array<[unknown, Array<string | number>]> = [[value, []]];
  const tooBig = (t: string) => Buffer.byteLength(t) > MAX_IMPORTED_STRING_BYTES;
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    const key = () => path.map(String).join('.').slice(0, 200) || '(top level)';
    if (typeof v === 'string' && tooBig(v)) return { key: key(), path, what: `value longer than ${MAX_IMPORTED_STRING_BYTES} bytes (${Buffer.byteLength(v)})` };
    if (v === null || typeof v !== 'object') continue;
    if (path.length > 64) return { key: key(), path, what: 'nested deeper than 64 levels' };
    for (const [k, x] of Array.isArray(v) ? v.entries() : Object.entries(v)) {
      if (typeof k === 'string' && tooBig(k)) return { key: key(), path, what: `a key longer than ${MAX_IMPORTED_STRING_BYTES} bytes` };
      stack.push([x, [...path, k]]);
    }
  }
  return undefined;
}

function lineOfPath(doc: Document, lines: LineCounter, path: readonly (string | number)[]): number | undefined {
  for (let i = path.length; i >= 0; i--) {
    const node = doc.getIn(path.slice(0, i), true);
    if (isNode(node) && node.range) return lines.linePos(node.range[0]).line;
  }
  return undefined;
}

/** The OctoPrint installation being read, with every folder resolved the way OctoPrint resolves it. */
export interface OctoPrintSource {
  /** What the user named (folder or zip), for messages. */
  origin: string;
  base: string;
  config: YamlFile | undefined;
  folders: { uploads: string; timelapse: string; timelapseTmp: string; printerProfiles: string; scripts: string;
    slicingProfiles: string; data: string; users: string; groups: string };
  /** The SHA-1 (hex) of a file of the source; on a dry run of a zip, read from the archive (the file is a placeholder). */
  digest(abs: string): Promise<string>;
  /** Removes what was unpacked (zip sources). */
  dispose(): Promise<void>;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

export async function readText(path: string, label: string): Promise<string | undefined> {
  try {
    const size = (await stat(path)).size;
    if (size > MAX_IMPORTED_FILE_BYTES) throw new ImportInputError(label, undefined, `larger than ${MAX_IMPORTED_FILE_BYTES} bytes (${size}); not read`);
    return await readFile(path, 'utf8');
  } catch (err) {
    if (err instanceof ImportInputError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new ImportInputError(label, undefined, `cannot read: ${(err as Error).message}`);
  }
}

export async function readYaml(path: string, label: string): Promise<YamlFile | undefined> {
  const text = await readText(path, label);
  return text === undefined ? undefined : YamlFile.parse(label, text);
}

/**
 * A backup zip's bounds. Entries: a base dir of 20,000 uploads and movies is far beyond any seen; the count in the
 * zip's index is refused before anything is read (a 100,000-entry zip took 171 s and 340 MB). Expansion: what the
 * file system the zip is unpacked on has free (less a reserve, so the host keeps working), and no member beyond
 * twice the default upload limit: a 600 MB zip bomb filled the target file system before it failed.
 */
export const ZIP_MAX_ENTRIES = 50_000;
export const ZIP_MAX_ENTRY_BYTES = 2 * 1024 ** 3;
export const ZIP_FREE_RESERVE_BYTES = 256 * 1024 ** 2;

/** Members a dry run does not unpack: the files of uploads and timelapse (their folders' metadata files it reads). */
const placeholderMember = (name: string): boolean =>
  /^(?:basedir\/)?(?:uploads|timelapse)\//.test(name) && !name.endsWith('/') && !name.endsWith(`/${METADATA}`);
const METADATA = '.metadata.json';

/**
 * Opens a base directory or a Backup-plugin zip. A zip is unpacked (safely, bounded) into a folder inside `scratch`;
 * with `dryRun`, the uploads and movies in it are not: sparse placeholders of their size stand in, and their hashes
 * are read from the zip.
 */
export async function openSource(from: string, scratch: string, opts: { dryRun?: boolean } = {}): Promise<OctoPrintSource> {
  const abs = resolve(from);
  const st = await stat(abs).catch(() => undefined);
  if (!st) throw invalid(`${from}: no such file or folder`);
  if (st.isFile()) {
    if (!abs.toLowerCase().endsWith('.zip')) throw invalid(`${from}: expected an OctoPrint base folder or a backup .zip`);
    const dir = await mkdtemp(join(scratch, '.gantry-import-zip-'));
    try {
      const fs = await statfs(dir);
      const free = Math.max(0, fs.bavail * fs.bsize - ZIP_FREE_RESERVE_BYTES);
      try {
        await extractArchive(abs, 'zip', dir, { maxEntries: ZIP_MAX_ENTRIES, maxTotalBytes: free, maxEntryBytes: ZIP_MAX_ENTRY_BYTES,
          ...(opts.dryRun ? { placeholder: placeholderMember } : {}) });
      } catch (err) {
        if (err instanceof DomainError) {
          const room = err.message.startsWith('Archive expands to more') ? ` (the free space of ${scratch}, less ${ZIP_FREE_RESERVE_BYTES >> 20} MiB)` : '';
          throw invalid(`${from}: ${err.message}${room}; nothing imported`);
        }
        throw err;
      }
      await restoreZipDates(abs, dir);
      // Backup-plugin layout: metadata.json + basedir/…
      const base = (await exists(join(dir, 'basedir'))) ? join(dir, 'basedir') : dir;
      if (!(await exists(join(base, 'config.yaml'))) && !(await exists(join(base, 'users.yaml')))) {
        throw invalid(`${from}: not an OctoPrint backup (no basedir/config.yaml or users.yaml inside)`);
      }
      const digest = opts.dryRun ? zipDigest(abs, dir) : (path: string) => digestFile(path, 'sha1');
      return await describe(from, base, true, () => rm(dir, { recursive: true, force: true }), digest);
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }
  if (!st.isDirectory()) throw invalid(`${from}: expected an OctoPrint base folder or a backup .zip`);
  const names = await readdir(abs);
  if (!names.includes('config.yaml') && !names.includes('users.yaml')) {
    throw invalid(`${from}: not an OctoPrint base folder (no config.yaml or users.yaml)`);
  }
  return describe(from, abs, false, async () => {}, (path) => digestFile(path, 'sha1'));
}

/** SHA-1 of a member, read from the zip (for the placeholders of a dry run), by its path below `root`. */
function zipDigest(zipFile: string, root: string): (abs: string) => Promise<string> {
  return (abs) => new Promise((resolvePromise, reject) => {
    yauzl.open(zipFile, { lazyEntries: true, autoClose: true, validateEntrySizes: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('unreadable zip'));
      let found = false;
      zip.on('error', reject);
      zip.on('end', () => { if (!found) reject(new Error(`${abs.slice(root.length + 1)} not in ${zipFile}`)); });
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName.endsWith('/') || safeMemberPath(root, entry.fileName) !== abs) return zip.readEntry();
        found = true;
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error('no stream'));
          const h = createHash('sha1');
          stream.on('data', (c: Buffer) => h.update(c));
          stream.on('error', reject);
          stream.on('end', () => { resolvePromise(h.digest('hex')); zip.close(); });
        });
      });
      zip.readEntry();
    });
  });
}

/** The unpacked files get the dates the zip recorded: they become the upload dates Gantry lists. */
function restoreZipDates(zipFile: string, root: string): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    yauzl.open(zipFile, { lazyEntries: true, autoClose: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('unreadable zip'));
      zip.on('error', reject);
      zip.on('end', () => resolvePromise());
      zip.on('entry', (entry: yauzl.Entry) => {
        const date = entry.getLastModDate();
        const target = entry.fileName.endsWith('/') ? undefined : safeMemberPath(root, entry.fileName);
        (target ? utimes(target, date, date) : Promise.resolve()).then(() => zip.readEntry(), reject);
      });
      zip.readEntry();
    });
  });
}

async function describe(origin: string, base: string, fromZip: boolean, dispose: () => Promise<void>,
  digest: (abs: string) => Promise<string>): Promise<OctoPrintSource> {
  const config = await readYaml(join(base, 'config.yaml'), fromZip ? `${origin}!basedir/config.yaml` : join(base, 'config.yaml'));
  if (config && config.value !== null && config.value !== undefined && !isPlain(config.value)) {
    throw config.error([], 'the top level must be a mapping of sections');
  }
  const root = (config?.value ?? {}) as Plain;
  const folder = isPlain(root.folder) ? root.folder : {};
  const ac = isPlain(root.accessControl) ? root.accessControl : {};
  // A backup stores relocated folders under their standard names (timelapse_tmp as timelapse/tmp).
  const pick = (key: string, name: string): string => {
    const configured = folder[key];
    if (fromZip || typeof configured !== 'string' || !configured) return join(base, name);
    return isAbsolute(configured) ? configured : resolve(base, configured);
  };
  const file = (key: string, name: string): string => {
    const configured = ac[key];
    if (fromZip || typeof configured !== 'string' || !configured) return join(base, name);
    return isAbsolute(configured) ? configured : resolve(base, configured);
  };
  const timelapse = pick('timelapse', 'timelapse');
  return {
    origin, base, config,
    folders: {
      uploads: pick('uploads', 'uploads'),
      timelapse,
      timelapseTmp: fromZip ? join(timelapse, 'tmp') : pick('timelapse_tmp', join('timelapse', 'tmp')),
      printerProfiles: pick('printerProfiles', 'printerProfiles'),
      scripts: pick('scripts', 'scripts'),
      slicingProfiles: pick('slicingProfiles', 'slicingProfiles'),
      data: pick('data', 'data'),
      users: file('userfile', 'users.yaml'),
      groups: file('groupfile', 'groups.yaml'),
    },
    digest,
    dispose,
  };
}

/** A label for a file inside the source: its real path, or `backup.zip!basedir/…` for zip sources. */
export function labelOf(src: OctoPrintSource, abs: string): string {
  if (src.origin.toLowerCase().endsWith('.zip') && abs.startsWith(src.base)) return `${src.origin}!basedir${abs.slice(src.base.length)}`;
  return abs;
}

