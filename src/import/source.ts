// Reading an OctoPrint base directory without ever writing it: the source (a folder, or a backup zip unpacked into a
// throw-away folder), its folders resolved through config.yaml, and YAML/JSON files parsed with errors that name the
// file, the line and the key.
import { readFile, stat, mkdtemp, rm, readdir, utimes } from 'node:fs/promises';
import yauzl from 'yauzl';
import { join, resolve, isAbsolute } from 'node:path';
import { parseDocument, LineCounter, isNode, type Document } from 'yaml';
import { DomainError, invalid } from '../core/errors.ts';
import { isPlain, type Plain } from '../core/plain.ts';
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
    return new YamlFile(file, doc.toJS({ maxAliasCount: 100 }) as unknown, doc, lines);
  }

  /** Line of the closest existing node on a key path, for messages. */
  lineOf(path: readonly (string | number)[]): number | undefined {
    for (let i = path.length; i >= 0; i--) {
      const node = this.doc.getIn(path.slice(0, i), true);
      if (isNode(node) && node.range) return this.lines.linePos(node.range[0]).line;
    }
    return undefined;
  }

  error(path: readonly (string | number)[], message: string): ImportInputError {
    return new ImportInputError(this.file, path.join('.') || undefined, message, this.lineOf(path));
  }
}

/** The OctoPrint installation being read, with every folder resolved the way OctoPrint resolves it. */
export interface OctoPrintSource {
  /** What the user named (folder or zip), for messages. */
  origin: string;
  base: string;
  config: YamlFile | undefined;
  folders: { uploads: string; timelapse: string; timelapseTmp: string; printerProfiles: string; scripts: string;
    slicingProfiles: string; data: string; users: string; groups: string };
  /** Removes what was unpacked (zip sources). */
  dispose(): Promise<void>;
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(() => true, () => false);
}

export async function readText(path: string, label: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new ImportInputError(label, undefined, `cannot read: ${(err as Error).message}`);
  }
}

export async function readYaml(path: string, label: string): Promise<YamlFile | undefined> {
  const text = await readText(path, label);
  return text === undefined ? undefined : YamlFile.parse(label, text);
}

/** Opens a base directory or a Backup-plugin zip. A zip is unpacked (safely) into a folder inside `scratch`. */
export async function openSource(from: string, scratch: string): Promise<OctoPrintSource> {
  const abs = resolve(from);
  const st = await stat(abs).catch(() => undefined);
  if (!st) throw invalid(`${from}: no such file or folder`);
  if (st.isFile()) {
    if (!abs.toLowerCase().endsWith('.zip')) throw invalid(`${from}: expected an OctoPrint base folder or a backup .zip`);
    const dir = await mkdtemp(join(scratch, '.gantry-import-zip-'));
    try {
      await extractArchive(abs, 'zip', dir, { maxEntries: 1_000_000, maxTotalBytes: 1024 ** 4 });
      await restoreZipDates(abs, dir);
      // Backup-plugin layout: metadata.json + basedir/…
      const base = (await exists(join(dir, 'basedir'))) ? join(dir, 'basedir') : dir;
      if (!(await exists(join(base, 'config.yaml'))) && !(await exists(join(base, 'users.yaml')))) {
        throw invalid(`${from}: not an OctoPrint backup (no basedir/config.yaml or users.yaml inside)`);
      }
      return await describe(from, base, true, () => rm(dir, { recursive: true, force: true }));
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
  return describe(from, abs, false, async () => {});
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

async function describe(origin: string, base: string, fromZip: boolean, dispose: () => Promise<void>): Promise<OctoPrintSource> {
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
    dispose,
  };
}

/** A label for a file inside the source: its real path, or `backup.zip!basedir/…` for zip sources. */
export function labelOf(src: OctoPrintSource, abs: string): string {
  if (src.origin.toLowerCase().endsWith('.zip') && abs.startsWith(src.base)) return `${src.origin}!basedir${abs.slice(src.base.length)}`;
  return abs;
}

