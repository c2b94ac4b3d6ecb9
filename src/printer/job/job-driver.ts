// Opens a job's driver: the firmware's own SD print (sd-job.ts) or the host streaming the stored file (job-stream.ts
// through the printer's link), with the job's settings read as it starts.
import { stat } from 'node:fs/promises';
import type { FileService } from '../../files/file-service.ts';
import type { JobSerialSettings } from './job-types.ts';
import { SdJob } from './sd-job.ts';
import { fileLineSource } from './file-line-source.ts';
import { watchM73 } from './progress-estimator.ts';
import type { JobStream, JobStreamListener, Printer } from '../types.ts';
import type { JobLineFilter } from './job-stream.ts';
import type { ActiveJob } from './active-job.ts';

/** What a driver needs to be opened. */
export interface DriverDeps {
  printer: Printer;
  files: FileService;
  config?: { get(): { serial: JobSerialSettings } };
  lineFilter?: (path: string, offset: number) => JobLineFilter | null | Promise<JobLineFilter | null>;
}

/**
 * The job's driver: the firmware's own SD print, or the host streaming the stored file from byte `offset` (its size
 * is read now, and a cancel asks for the position when serial.logPositionOnCancel is on). The SD one starts later.
 */
export async function openDriver(deps: DriverDeps, job: ActiveJob, listener: JobStreamListener, scripts: { prologue: string[]; epilogue: string[] },
  offset: number): Promise<JobStream | SdJob> {
  const { prologue, epilogue } = scripts;
  if (job.file.origin === 'sdcard') {
    const serial = deps.config?.get().serial;
    return new SdJob(deps.printer, job.file.path, listener, {
      pollSeconds: serial?.timeout.sdStatus ?? 1, logPositionOnPause: serial?.logPositionOnPause ?? true,
      positionLogWaitMs: (serial?.timeout.positionLogWait ?? 10) * 1000,
      prologue, epilogue,
    });
  }
  const abs = await deps.files.absolutePath(job.file.path);
  job.file.size = (await stat(abs)).size;
  job.positionOnCancel = deps.config?.get().serial.logPositionOnCancel ?? false;
  const onCancel = job.positionOnCancel ? ['M400', 'M114'] : [];
  const lineFilter = (await deps.lineFilter?.(job.file.path, offset)) ?? null;
  if (lineFilter?.skipped) job.skipped = lineFilter.skipped;
  const stream = deps.printer.streamJob(watchM73(fileLineSource(abs, offset), job.estimator), listener, { prologue, epilogue, onCancel, lineFilter });
  job.filepos = offset;
  return stream;
}
