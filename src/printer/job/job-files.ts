// What the job runner knows about a file: its description for selection (local or SD), its print statistics, and the
// job document built from them (GET /api/job).
import { DomainError, ErrorCodes } from '../../core/errors.ts';
import type { FileService } from '../../files/file-service.ts';
import type { GcodeAnalysis } from '../../files/analysis/types.ts';
import type { Printer } from '../types.ts';
import type { JobOrigin, JobProgressSnapshot, JobSnapshot, SelectedFile } from './job-types.ts';
import { sameSdFile } from '../../files/sd-card.ts';

/** The selection record of a file (404 when it does not exist). */
export async function describeFile(deps: { printer: Printer; files: FileService }, origin: JobOrigin, path: string, user: string | null): Promise<SelectedFile> {
  if (origin === 'sdcard') {
    const name = path.replace(/^\/+/, '');
    const entry = deps.printer.sdFiles().find((f) => sameSdFile(f, name));
    if (!entry) throw new DomainError(ErrorCodes.NOT_FOUND, 'File not found on the SD card');
    const sdName = entry.name.replace(/^\/+/, '');
    return { origin, path: sdName, name: sdName, display: entry.display || sdName, size: entry.size, date: entry.date, user };
  }
  const f = await deps.files.file(path);
  return {
    origin, path: f.path, name: f.name, display: f.display, size: f.size ?? null, date: f.date ?? null, user,
    analysis: f.meta.analysis as GcodeAnalysis | undefined,
  };
}

/** Average and last duration of successful prints of a file on a printer profile. */
export async function fileStatistics(files: FileService, profile: string, path: string): Promise<{ average: number | null; last: number | null }> {
  try {
    const f = await files.file(path);
    const history = (f.meta.history ?? []).filter((h) => h.success && typeof h.printTime === 'number' && h.printerProfile === profile);
    if (!history.length) return { average: null, last: null };
    const sum = history.reduce((n, h) => n + (h.printTime ?? 0), 0);
    const last = history.reduce((a, b) => (b.timestamp >= a.timestamp ? b : a));
    return { average: sum / history.length, last: last.printTime ?? null };
  } catch {
    return { average: null, last: null };
  }
}

/** The average time of a file's successful prints on the printer's profile, for the estimate; none for SD files. */
export async function averagePrintTime(deps: { printer: Printer; files: FileService }, file: SelectedFile): Promise<number | null> {
  if (file.origin !== 'local') return null;
  return (await fileStatistics(deps.files, deps.printer.profile().id, file.path)).average;
}

/** The job document (GET /api/job, the push channel): the selected or printed file with its statistics, or nulls. */
export function jobDocument(file: SelectedFile | undefined, stats: { average: number | null; last: number | null }, user: string | null,
  progress: JobProgressSnapshot | null): JobSnapshot {
  if (!file) return { file: undefined, estimatedPrintTime: null, averagePrintTime: null, lastPrintTime: null, filament: null, user: null, progress };
  const analysis = file.analysis;
  return {
    file,
    // The statistical total of docs/reference/gcode-analysis.md §6.1/§6.4: earlier prints on this profile, else the analysis.
    estimatedPrintTime: stats.average ?? analysis?.estimatedPrintTime ?? null,
    averagePrintTime: stats.average,
    lastPrintTime: stats.last,
    filament: analysis?.filament ?? null,
    user,
    progress,
  };
}
