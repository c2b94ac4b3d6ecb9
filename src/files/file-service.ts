// Files service: the `local` location (uploads folder) as the rest of the host sees it — listing, upload intake,
// folders, copy/move/delete with in-use guards, print history per file, background analysis — and its events.
import { mkdir } from 'node:fs/promises';
import { DomainError, ErrorCodes, conflict, invalid, notFound } from '../core/errors.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import type { ConfigSlice } from '../config/config-slice.ts';
import { LocalStorage } from './local-storage.ts';
import { filesOf, heightOf } from './entry-tree.ts';
import { UploadSink, removeStaleUploads } from './upload-intake.ts';
import { MAX_PATH_PARTS, parseStoredPath, sanitizeName, sanitizePath, joinPath, tooDeep } from './safe-path.ts';
import { isGcode, type FileTypes } from './file-types.ts';
import { contentKey, type PrintRecord } from './metadata-store.ts';
import type { AnalysisOptions, GcodeAnalysis } from './analysis/types.ts';
import { AnalysisRunner, type Analyser, type AnalysisProgressReport } from './analysis-runner.ts';
import { Listeners } from '../core/listeners.ts';
import { SerialQueue } from '../core/serial-queue.ts';
import { FileHolds } from './file-holds.ts';
import { emitRemoval, emitTransfer } from './file-events.ts';
import { noUsage, type FileUsage, type ListOptions, type StoredEntry, type StoredFile, type StoredFolder } from './types.ts';

export interface FileServiceDeps {
  root: string;
  config: ConfigSlice<'gcodeAnalysis' | 'feature' | 'server'>;
  events: EventBus;
  logger: Logger;
  /** The analysis queue (src/files/analysis); without it files are stored unanalysed. */
  analyser?: Analyser;
  /** Options for the analyser from the current printer profile. */
  analysisOptions?: () => AnalysisOptions;
  /** The file types this server accepts (G-code, plus the installed slicers' model formats). */
  types: FileTypes;
  /** Who prints from the library (every printer of the farm): a file one of them prints is held against change by all. */
  usage?: FileUsage;
}

export interface UploadTarget {
  /** Folder field of the form (may be empty). */
  folder?: string;
  /** Requested file name (form `filename` or the part's file name); a folder part is honoured when `folder` is empty. */
  filename: string;
  userdata?: unknown;
  noOverwrite?: boolean;
  /** Caller may replace an existing file (FILES_DELETE). */
  mayOverwrite?: boolean;
}

export class FileService {
  readonly storage: LocalStorage;
  private readonly usage: FileUsage;
  private readonly holds = new FileHolds();
  // Changes to the tree run one at a time, each checking then acting: at once, parallel moves of one file answered 500
  // and two uploads of one name under noOverwrite both went in.
  private readonly changes = new SerialQueue();
  private readonly analysis: AnalysisRunner;
  private readonly progressListeners = new Listeners<[AnalysisProgressReport]>();
  /** When the listing last changed (ms); Last-Modified of listings. */
  lastModified = Date.now();
  private readonly types: FileTypes;

  constructor(private readonly deps: FileServiceDeps) {
    this.types = deps.types;
    this.usage = deps.usage ?? noUsage;
    this.storage = new LocalStorage(deps.root, deps.logger, deps.types);
    this.analysis = new AnalysisRunner({
      storage: this.storage, events: deps.events, logger: deps.logger, analyser: deps.analyser,
      options: deps.analysisOptions, runAt: () => deps.config.get().gcodeAnalysis.runAt,
      isPrinting: () => this.usage.isPrinting(),
      progress: (p) => this.progressListeners.emit(p),
    });
    const touch = () => { this.lastModified = Math.max(Date.now(), this.lastModified + 1000); };
    deps.events.on('file-service', 'UpdatedFiles', touch);
    deps.events.on('file-service', 'MetadataStatisticsUpdated', touch);
  }

  async start(): Promise<void> {
    await mkdir(this.deps.root, { recursive: true });
    await removeStaleUploads(this.deps.root);
  }

  /** Queues the analysis of files that arrived behind our back (see AnalysisRunner.queueBacklog); once the server answers. */
  analyseBacklog(): void {
    this.analysis.queueBacklog();
  }

  async stop(): Promise<void> {
    this.deps.events.removeOwner('file-service');
    this.analysis.stop();
    await this.storage.metadata.flush();
  }

  /** Progress of long analyses (push clients show it); returns the unsubscribe. */
  onAnalysisProgress(fn: (p: AnalysisProgressReport) => void): () => void {
    return this.progressListeners.add(fn);
  }

  /** Local files being analysed, with the fraction done. */
  analysing(): Array<{ origin: 'local'; path: string; progress: number }> {
    return this.analysis.analysing().map((a) => ({ origin: 'local', ...a }));
  }

  /** Called by the job runner when a job starts or ends (analysis waits for idle with runAt `idle`). */
  printingChanged(printing: boolean): void {
    this.analysis.printingChanged(printing);
  }

  get uploadsRoot(): string {
    return this.deps.root;
  }

  private get reallyUniversal(): boolean {
    return this.deps.config.get().feature.enforceReallyUniversalFilenames;
  }

  private emitChanged(): void {
    this.deps.events.emit('UpdatedFiles', { type: 'printables' });
  }

  // ---------------------------------------------------------------- reading

  async list(opts: ListOptions = {}): Promise<StoredEntry[]> {
    const entries = await this.storage.list(opts.recursive ? Infinity : 0, opts.filter, opts.fresh);
    this.analysis.queueUnanalysed(entries);
    return entries;
  }

  /** One file or folder (folder: immediate children). */
  async entry(path: string, opts: ListOptions = {}): Promise<StoredEntry> {
    const parts = parseStoredPath(path);
    const kind = await this.storage.kindOf(parts);
    if (kind === 'file') {
      const file = await this.storage.fileEntry(parts);
      this.analysis.queueUnanalysed([file]);
      return file;
    }
    if (kind === 'folder' && parts.length) return this.storage.folderEntry(parts, opts.recursive ? Infinity : 0, opts.filter);
    throw notFound('File not found');
  }

  async file(path: string): Promise<StoredFile> {
    const e = await this.entry(path);
    if (e.kind !== 'file') throw notFound('File not found');
    return e;
  }

  /** Absolute path of an existing file (downloads, job streaming). */
  async absolutePath(path: string): Promise<string> {
    const parts = parseStoredPath(path);
    if ((await this.storage.kindOf(parts)) !== 'file' || !this.types.typePathOf(parts[parts.length - 1] ?? '')) throw notFound('File not found');
    return this.storage.abs(parts);
  }

  async exists(path: string): Promise<boolean> {
    try {
      return (await this.storage.kindOf(parseStoredPath(path))) !== undefined;
    } catch {
      return false;
    }
  }

  diskUsage(): Promise<{ free: number; total: number }> {
    return this.storage.diskUsage();
  }

  /** The sanitised form of a folder + name, as stored (`/api/files/test sanitize`). */
  sanitize(folder: string, name: string): string {
    return joinPath([...sanitizePath(folder, this.reallyUniversal), sanitizeName(name, this.reallyUniversal)]);
  }

  // ---------------------------------------------------------------- upload

  /** A temp sink in the uploads folder for an incoming upload (the HTTP layer streams into it). */
  async newUploadSink(): Promise<UploadSink> {
    const sink = new UploadSink(this.deps.root, this.deps.config.get().server.uploads.maxSize);
    if (await sink.open()) this.storage.rootMadeAgain();
    return sink;
  }

  /** Where an upload would land: sanitised components and the display name. Throws 400 when nothing usable. */
  uploadTarget(folder: string | undefined, filename: string): { parts: string[]; display: string } {
    const bad = () => invalid('Can not upload file, invalid file name');
    const nameParts = filename.replace(/\\/g, '/').split('/');
    const rawName = nameParts.pop() ?? '';
    let folderParts: string[];
    try {
      folderParts = folder ? sanitizePath(folder, this.reallyUniversal) : sanitizePath(nameParts.join('/'), this.reallyUniversal);
    } catch {
      throw bad();
    }
    const name = sanitizeName(rawName, this.reallyUniversal);
    if (!name) throw bad();
    return { parts: [...folderParts, name], display: rawName.normalize('NFC') };
  }

  /** Checks that run before the bytes are kept (in OctoPrint's order); also used by SD uploads. */
  async checkUploadTarget(parts: string[], t: UploadTarget): Promise<void> {
    const path = joinPath(parts);
    if (this.usage.isInUse('local', path)) throw new DomainError(ErrorCodes.FILE_IN_USE, 'Trying to overwrite file that is currently being printed');
    const kind = await this.storage.kindOf(parts);
    if (kind === 'folder') throw conflict('A folder with that name already exists');
    if (kind === 'file') {
      if (t.noOverwrite) throw conflict('File already exists and noOverwrite was set');
      if (t.mayOverwrite === false) throw new DomainError(ErrorCodes.FORBIDDEN, 'File already exists, cannot overwrite due to a lack of permissions');
    }
    if (!this.types.typePathOf(parts[parts.length - 1])) throw new DomainError(ErrorCodes.UNSUPPORTED_MEDIA, 'Could not upload file, invalid type');
  }

  /** Moves a finished sink into place, records its metadata and announces it. The sink is discarded on any error. */
  async storeUpload(sink: UploadSink, t: UploadTarget): Promise<StoredFile> {
    try {
      const { parts, display } = this.uploadTarget(t.folder, t.filename);
      await this.checkUploadTarget(parts, t);
      const hash = await sink.finish();
      return await this.changes.run(() => this.placeUpload(sink, t, parts, display, hash));
    } catch (err) {
      await sink.discard();
      throw err;
    }
  }

  private async placeUpload(sink: UploadSink, t: UploadTarget, parts: string[], display: string, hash: string): Promise<StoredFile> {
    await this.checkUploadTarget(parts, t);
    await this.storage.makeFolder(parts.slice(0, -1));
    const replaced = (await this.storage.kindOf(parts)) === 'file';
    const [abs, folderAbs, name] = [this.storage.abs(parts), this.storage.abs(parts.slice(0, -1)), parts[parts.length - 1]];
    const placed = await this.storage.placing(parts, hash, sink.tmpPath);
    try {
      await sink.commit(abs);
      this.storage.changed();
      const [old, st] = await Promise.all([this.storage.metadata.get(folderAbs, name), this.storage.statOf(parts)]);
      await this.storage.metadata.set(folderAbs, name, {
        // Print history survives a re-upload; the analysis belongs to the old content.
        ...(old?.history ? { history: old.history } : {}),
        ...(display !== name ? { display } : {}),
        hash, hashKey: st ? contentKey(st) : undefined,
        ...(t.userdata !== undefined ? { userdata: t.userdata } : {}),
      });
    } finally {
      placed();
    }
    const entry = await this.storage.fileEntry(parts);
    this.deps.events.emit('FileAdded', { storage: 'local', path: entry.path, name, type: entry.typePath, operation: 'add' });
    this.emitChanged();
    if (replaced) this.usage.replaced('local', entry.path);
    this.analysis.queue(parts);
    return entry;
  }

  /** Emits the `Upload` event once select/print were decided (OctoPrint fires it last). */
  announceUpload(payload: Record<string, unknown>): void {
    this.deps.events.emit('Upload', payload);
  }

  // ---------------------------------------------------------------- folders, copy, move, delete

  createFolder(parent: string | undefined, foldername: string): Promise<StoredFolder> {
    return this.changes.run(() => this.makeFolder(parent, foldername));
  }

  private async makeFolder(parent: string | undefined, foldername: string): Promise<StoredFolder> {
    let parentParts: string[];
    try {
      parentParts = sanitizePath(parent ?? '', this.reallyUniversal);
    } catch {
      throw invalid('Could not create folder, invalid directory');
    }
    const name = sanitizeName(foldername.replace(/\//g, ''), this.reallyUniversal);
    if (!name) throw invalid('folder name is empty');
    if (this.types.typePathOf(name)) throw conflict('Can\'t create folder, please try another name');
    const parts = [...parentParts, name];
    const existed = (await this.storage.kindOf(parts)) === 'folder';
    await this.storage.makeFolder(parts, foldername !== name ? foldername : undefined);
    if (!existed) {
      this.deps.events.emit('FolderAdded', { storage: 'local', path: joinPath(parts), name });
      this.emitChanged();
    }
    return this.storage.folderEntry(parts, 0);
  }

  /** Marks a file in use while something streams it (an SD transfer); returns the release. */
  hold(path: string): () => void {
    return this.holds.hold(path);
  }

  /** Printed, paused or streamed to the SD card (files-api.md §6/§7); not a background analysis: clients (OctoRest, FDM
   * Monster) delete or move a file right after uploading it, while its analysis runs; it is cancelled. */
  private busy(path: string): boolean {
    return this.usage.isInUse('local', path) || this.holds.has(path);
  }

  private async inUseBelow(parts: string[], kind: 'file' | 'folder'): Promise<boolean> {
    if (kind === 'file') return this.busy(joinPath(parts));
    return (await this.storage.filesBelow(parts)).some((p) => this.busy(p));
  }

  /** Copies or moves a file/folder (OctoPrint's destination rules); returns the new entry. */
  copyOrMove(path: string, destination: string, mode: 'copy' | 'move'): Promise<StoredEntry> {
    return this.changes.run(() => this.transfer(path, destination, mode));
  }

  private async transfer(path: string, destination: string, mode: 'copy' | 'move'): Promise<StoredEntry> {
    const src = parseStoredPath(path);
    const kind = src.length ? await this.storage.kindOf(src) : undefined;
    if (!kind) throw notFound('Source path does not exist, invalid source');
    const failed = (suffix = '', cause?: unknown) => new DomainError(ErrorCodes.INTERNAL, `Could not ${mode} ${path} to ${destination}${suffix}`, { cause });
    let dst: string[];
    try {
      dst = sanitizePath(destination, this.reallyUniversal);
    } catch {
      throw invalid('Destination is invalid');
    }
    if (!dst.length) throw invalid('Destination is invalid');
    const dstKind = await this.storage.kindOf(dst);
    if (dstKind === 'folder' && joinPath(dst) !== joinPath(src)) dst = [...dst, src[src.length - 1]];
    else if (dstKind !== undefined) throw conflict('Exception thrown by storage, bad folder/file name?');
    if (await this.storage.kindOf(dst)) throw conflict('Exception thrown by storage, bad folder/file name?');
    // Into a folder that is not there: a client's mistake, answered as such (OctoPrint 1.9.3 answers 500 and logs a trace).
    if (dst.length > 1 && (await this.storage.kindOf(dst.slice(0, -1))) !== 'folder') throw conflict('No such folder');
    if (kind === 'folder' && joinPath(dst).startsWith(joinPath(src) + '/')) throw invalid('Source and destination are the same folder');
    if (kind === 'file' && !this.types.typePathOf(dst[dst.length - 1])) {
      throw new DomainError(ErrorCodes.UNSUPPORTED_MEDIA, `Could not ${mode} ${path} to ${destination}, invalid type`);
    }
    // One walk of a folder for its files (in use?) and its height (too deep at the destination?).
    const tree = kind === 'folder' ? await this.storage.folderEntry(src, Infinity) : undefined;
    const srcFiles = tree ? filesOf(tree) : [joinPath(src)];
    if (mode === 'move' && srcFiles.some((p) => this.busy(p))) throw new DomainError(ErrorCodes.FILE_IN_USE, 'Trying to move a file or folder that is currently in use');
    if (tree && dst.length + heightOf(tree) > MAX_PATH_PARTS) throw tooDeep();
    try {
      await this.storage.transfer(src, dst, mode);
    } catch (err) {
      if (err instanceof DomainError && err.code !== ErrorCodes.INTERNAL) throw err;
      this.deps.logger.warn({ err, path, destination }, `${mode} failed`);
      throw failed('', err);
    }
    // Whatever the job side held at the old place is released before anyone hears of the move.
    if (mode === 'move') for (const f of srcFiles) this.usage.released('local', f);
    emitTransfer(this.deps.events, this.types, kind, mode, src, dst);
    this.emitChanged();
    return kind === 'file' ? this.storage.fileEntry(dst) : this.storage.folderEntry(dst, 0);
  }

  remove(path: string): Promise<void> {
    return this.changes.run(() => this.removeNow(path));
  }

  private async removeNow(path: string): Promise<void> {
    const parts = parseStoredPath(path);
    const kind = parts.length ? await this.storage.kindOf(parts) : undefined;
    if (!kind || (kind === 'file' && !this.types.typePathOf(parts[parts.length - 1]))) throw notFound('File not found');
    if (await this.inUseBelow(parts, kind)) {
      throw new DomainError(ErrorCodes.FILE_IN_USE, kind === 'file'
        ? 'Trying to delete a file that is currently in use'
        : 'Trying to delete a folder that contains a file that is currently in use');
    }
    const files = kind === 'folder' ? await this.storage.filesBelow(parts) : [joinPath(parts)];
    for (const f of files) {
      this.usage.released('local', f);
      this.analysis.cancel(f);
    }
    await this.storage.remove(parts);
    emitRemoval(this.deps.events, this.types, kind, parts);
    this.emitChanged();
  }

  // ---------------------------------------------------------------- analysis and history

  /** Queues a (re-)analysis now, whatever `runAt` says (the user asked). */
  async analyse(path: string): Promise<void> {
    const parts = parseStoredPath(path);
    if ((await this.storage.kindOf(parts)) !== 'file') throw notFound('File not found');
    if (!isGcode(parts[parts.length - 1]) || !this.analysis.available) throw invalid('No analysis possible');
    this.analysis.queue(parts, true);
  }

  /** Resolves with the stored analysis, if any (job information, estimates). */
  async analysisOf(path: string): Promise<GcodeAnalysis | undefined> {
    try {
      return (await this.file(path)).meta.analysis as GcodeAnalysis | undefined;
    } catch {
      return undefined;
    }
  }

  /** Appends a finished print to the file's history (prints/statistics in listings). */
  async recordPrint(path: string, record: PrintRecord): Promise<void> {
    let parts: string[];
    try {
      parts = parseStoredPath(path);
    } catch {
      return;
    }
    if ((await this.storage.kindOf(parts)) !== 'file') return;
    const folderAbs = this.storage.abs(parts.slice(0, -1));
    const name = parts[parts.length - 1];
    await this.storage.metadata.mutate(folderAbs, name, (e) => ({ ...e, history: [...(e.history ?? []), record] }));
    this.deps.events.emit('MetadataStatisticsUpdated', { storage: 'local', path: joinPath(parts) });
  }

}
