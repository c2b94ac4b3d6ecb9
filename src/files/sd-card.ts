// The `sdcard` location: the printer's SD card listed, uploaded to and deleted through the printer link. Uploads are
// stored locally first and then streamed to the card in the background (TransferStarted/Done/Failed).
import { DomainError, ErrorCodes, conflict, notFound } from '../core/errors.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import type { FileService } from './file-service.ts';
import { machineCodeTypePath } from './file-types.ts';
import type { StoredFile } from './types.ts';

export interface SdEntry { name: string; display: string; size: number | null; date: number | null }

/** What the SD location needs from the printer (the Printer service satisfies it). */
export interface SdPrinterPort {
  isOperational(): boolean;
  isBusy(): boolean;
  sdReady(): boolean;
  sdFiles(): SdEntry[];
  sdRefresh(): void;
  /** The firmware writes long file names (LFN_WRITE, and the setting allows it). */
  sdLongNames?(): boolean;
  commands(lines: string[]): void;
}

/** Streams a local file to the card as `remote` (job runner: M28/M29 through the link); resolves when written. */
export type SdTransfer = (localAbs: string, remote: string) => Promise<void>;

export interface SdAfterTransfer {
  select: boolean;
  print: boolean;
  user?: string;
}

interface Deps {
  printer: SdPrinterPort;
  files: FileService;
  events: EventBus;
  logger: Logger;
  transfer?: SdTransfer;
  /** Select/print a file on the card once its transfer finished (job runner). */
  afterTransfer?: (remote: string, opts: SdAfterTransfer) => Promise<void>;
  /** Whether an SD file is the one being printed. */
  isInUse?: (remote: string) => boolean;
  /** A job runs (also one the firmware runs from its card, which the link does not count as busy). */
  jobActive?: () => boolean;
}

const stripSlash = (n: string): string => n.replace(/^\/+/, '');

/** A card entry is found by the name it is listed under or by its long name, case-insensitively (as FAT does). */
export function sameSdFile(f: { name: string; display: string }, wanted: string): boolean {
  const want = stripSlash(wanted).toLowerCase();
  return stripSlash(f.name).toLowerCase() === want || (f.display !== '' && stripSlash(f.display).toLowerCase() === want);
}

/** An 8.3 name not on the card yet (`BENCHY~1.GCO`): safe on firmware without long-file-name writing. */
export function dosName(name: string, taken: Set<string>): string {
  const stem = (name.replace(/\.[^.]*$/, '').toUpperCase().replace(/[^A-Z0-9]/g, '') || 'FILE').slice(0, 6);
  for (let n = 1; n < 1000; n++) {
    const suffix = `~${n}`;
    const candidate = `${stem.slice(0, 8 - suffix.length)}${suffix}.GCO`;
    if (!taken.has(candidate.toLowerCase())) return candidate;
  }
  throw conflict('No free SD card file name');
}

export class SdCardFiles {
  private transferring: string | undefined;

  constructor(private readonly deps: Deps) {}

  private entries(): StoredFile[] {
    if (!this.deps.printer.isOperational()) return [];
    const out: StoredFile[] = [];
    for (const f of this.deps.printer.sdFiles()) {
      const name = stripSlash(f.name);
      const typePath = machineCodeTypePath(name);
      if (!typePath) continue;
      out.push({
        kind: 'file', origin: 'sdcard', name, display: stripSlash(f.display || f.name), path: name, typePath,
        ...(f.size !== null ? { size: f.size } : {}), ...(f.date !== null ? { date: f.date } : {}), meta: {},
      });
    }
    return out;
  }

  async list(force = false): Promise<StoredFile[]> {
    if (force && this.deps.printer.isOperational() && !this.deps.printer.isBusy()) this.deps.printer.sdRefresh();
    return this.entries();
  }

  async entry(path: string): Promise<StoredFile> {
    const name = stripSlash(path);
    const e = this.entries().find((f) => f.name === name) ?? this.entries().find((f) => sameSdFile(f, name));
    if (!e) throw notFound('File not found');
    return e;
  }

  get transferInProgress(): string | undefined {
    return this.transferring;
  }

  /** 409s of OctoPrint's SD upload rules. */
  checkUploadable(): void {
    const p = this.deps.printer;
    if (!p.isOperational() || p.isBusy() || this.deps.jobActive?.() || this.transferring || !this.deps.transfer) {
      throw new DomainError(ErrorCodes.PRINTER_BUSY, 'Can not upload to SD card, printer is either not operational or already busy');
    }
    if (!p.sdReady()) throw conflict('Can not upload to SD card, not yet initialized');
  }

  /** Starts the transfer of an already stored local file; returns the SD name at once. */
  async upload(localPath: string, after: SdAfterTransfer): Promise<string> {
    this.checkUploadable();
    const taken = new Set(this.deps.printer.sdFiles().map((f) => stripSlash(f.name).toLowerCase()));
    const base = localPath.split('/').pop() ?? 'file.gcode';
    // A firmware that writes long names gets the file's own name; others a fresh 8.3 one (docs/reference/serial-protocol.md §13.4).
    const remote = this.deps.printer.sdLongNames?.() ? base : dosName(base, taken);
    const abs = await this.deps.files.absolutePath(localPath);
    const { events, logger } = this.deps;
    const started = performance.now(); // a span: the wall clock may jump meanwhile
    this.transferring = remote;
    // The local copy may not be moved or deleted while it is being read.
    const release = this.deps.files.hold(localPath);
    events.emit('TransferStarted', { path: localPath, local: localPath, remote });
    void this.deps.transfer!(abs, remote).then(async () => {
      release();
      this.transferring = undefined;
      events.emit('TransferDone', { path: localPath, local: localPath, remote, time: (performance.now() - started) / 1000 });
      this.deps.printer.sdRefresh();
      events.emit('UpdatedFiles', { type: 'printables' });
      if ((after.select || after.print) && this.deps.afterTransfer) {
        // The card's listing (M20) answers after the transfer; selecting needs the file in it.
        await this.waitListed(remote);
        await this.deps.afterTransfer(remote, after);
      }
    }, (err: unknown) => {
      release();
      this.transferring = undefined;
      logger.warn({ err, remote }, 'SD transfer failed');
      events.emit('TransferFailed', { path: localPath, local: localPath, remote, time: (performance.now() - started) / 1000 });
    }).catch((err: unknown) => logger.warn({ err }, 'select after SD transfer failed'));
    return remote;
  }

  private async waitListed(remote: string, timeoutMs = 10_000): Promise<void> {
    const end = performance.now() + timeoutMs;
    while (performance.now() < end) {
      if (this.deps.printer.sdFiles().some((f) => sameSdFile(f, remote))) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async remove(path: string): Promise<void> {
    const e = await this.entry(path);
    if (this.deps.isInUse?.(e.name)) throw new DomainError(ErrorCodes.FILE_IN_USE, 'Trying to delete a file that is currently in use');
    if (!this.deps.printer.isOperational()) throw notFound('File not found');
    // OctoPrint sends the name lower-cased; Marlin's FAT lookup is case-insensitive.
    this.deps.printer.commands([`M30 /${e.name.toLowerCase()}`]);
    this.deps.printer.sdRefresh();
    this.deps.events.emit('FileRemoved', { storage: 'sdcard', path: e.name, name: e.name, type: e.typePath });
    this.deps.events.emit('UpdatedFiles', { type: 'printables' });
  }
}
