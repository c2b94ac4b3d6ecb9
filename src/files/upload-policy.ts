// What an upload form means (files API `POST /api/files/{location}`): a folder to create or a stored upload, its
// userdata, the SD transfer, select/print after upload as the caller's rights allow, and the `Upload` event.
import type { Logger } from '../core/logger.ts';
import { DomainError, ErrorCodes, invalid } from '../core/errors.ts';
import { truthy } from '../core/values.ts';
import { STORED_JSON_BOUNDS, assertBoundedJson } from '../core/bounded-json.ts';
import type { FileService } from './file-service.ts';
import type { SdCardFiles } from './sd-card.ts';
import type { StoredFile, StoredFolder } from './types.ts';
import type { UploadSink } from './upload-intake.ts';

export interface UploadForm {
  /** The file part, already on disk in a temporary file; absent for folder creation. */
  sink?: UploadSink;
  /** The file part's own filename. */
  partFilename?: string;
  /** The form's text fields (path, filename, foldername, select, print, userdata, noOverwrite). */
  fields: Map<string, string>;
}

export interface Uploader {
  user: string | undefined;
  mayOverwrite: boolean;
  maySelect: boolean;
  mayPrint: boolean;
}

/** The part of the job runner an upload may use (files sit below printer/, so they name only what they call). */
export interface UploadJobs {
  isReady(): boolean;
  select(origin: 'local', path: string, opts: { print: boolean; user: string | undefined }): Promise<void>;
}

export interface UploadDeps {
  files: FileService;
  sdFiles?: SdCardFiles;
  jobs?: UploadJobs;
  logger: Logger;
  /**
   * Asked before an upload that asks to print is stored (power control's turnOnWhenApiUploadPrint: the supply on,
   * the printer connected), so the print can start. A failure is logged: the file is still stored, and printed
   * only if the printer is ready anyway.
   */
  beforeUploadPrint?: () => Promise<void>;
}

export type UploadOutcome =
  | { kind: 'folder'; folder: StoredFolder }
  | { kind: 'file'; stored: StoredFile; sdName?: string; done: boolean; effectiveSelect: boolean; effectivePrint: boolean };

/** Carries out an upload form; the temporary file is discarded on every refusal. */
export async function acceptUpload(deps: UploadDeps, location: 'local' | 'sdcard', form: UploadForm, by: Uploader): Promise<UploadOutcome> {
  const { files } = deps;
  const { fields, sink } = form;
  let userdata: unknown;
  const userdataRaw = fields.get('userdata');
  if (userdataRaw !== undefined) {
    try {
      userdata = JSON.parse(userdataRaw);
    } catch {
      await sink?.discard();
      throw invalid('userdata contains invalid JSON');
    }
    // Kept in the folder's metadata and sent in every listing and push event: bounded like every stored value.
    try {
      assertBoundedJson(userdata, STORED_JSON_BOUNDS, 'userdata');
    } catch (err) {
      await sink?.discard();
      throw err;
    }
  }

  if (!sink) {
    const foldername = fields.get('foldername');
    if (foldername === undefined) throw invalid('No file to upload and no folder to create');
    if (location !== 'local') throw invalid('target is invalid');
    return { kind: 'folder', folder: await files.createFolder(fields.get('path'), foldername) };
  }

  try {
    if (location === 'sdcard') {
      if (!deps.sdFiles) throw new DomainError(ErrorCodes.CONFLICT, 'Can not upload to SD card, printer is either not operational or already busy');
      deps.sdFiles.checkUploadable();
    }
  } catch (err) {
    await sink.discard();
    throw err;
  }
  if (truthy(fields.get('print')) && by.mayPrint && deps.beforeUploadPrint) {
    await deps.beforeUploadPrint().catch((err: unknown) => deps.logger.warn({ err }, 'power on for an upload to print failed'));
  }
  const stored = await files.storeUpload(sink, {
    folder: fields.get('path') || undefined,
    filename: fields.get('filename') || form.partFilename || '',
    userdata,
    noOverwrite: truthy(fields.get('noOverwrite')),
    mayOverwrite: by.mayOverwrite,
  });

  const askedSelect = truthy(fields.get('select'));
  const askedPrint = truthy(fields.get('print'));
  const wantSelect = askedSelect && by.maySelect;
  const wantPrint = askedPrint && by.mayPrint;
  let effectiveSelect = false;
  let effectivePrint = false;
  let sdName: string | undefined;

  if (location === 'sdcard' && deps.sdFiles) {
    sdName = await deps.sdFiles.upload(stored.path, { select: wantSelect || wantPrint, print: wantPrint, user: by.user });
    effectiveSelect = wantSelect || wantPrint;
    effectivePrint = wantPrint;
  } else if ((wantSelect || wantPrint) && deps.jobs?.isReady()) {
    try {
      await deps.jobs.select('local', stored.path, { print: wantPrint, user: by.user });
      effectiveSelect = true;
      effectivePrint = wantPrint;
    } catch (err) {
      deps.logger.info({ err }, 'select/print after upload dropped');
    }
  }

  files.announceUpload({
    name: stored.name, path: stored.path, target: location, select: askedSelect, print: askedPrint,
    effective_select: effectiveSelect, effective_print: effectivePrint, ...(userdata !== undefined ? { userdata } : {}),
  });
  return { kind: 'file', stored, sdName, done: sdName === undefined, effectiveSelect, effectivePrint };
}
