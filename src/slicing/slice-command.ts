// The files API's `slice` command: model in the uploads folder → G-code beside it, sliced in the background, then stored
// through the file service (metadata, analysis, events) and optionally selected or printed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileService } from '../files/file-service.ts';
import type { JobControl } from '../printer/job/job-types.ts';
import type { PrinterProfiles } from '../printer/profiles/printer-profiles.ts';
import type { Logger } from '../core/logger.ts';
import { DomainError, ErrorCodes, conflict, invalid, notFound } from '../core/errors.ts';
import type { SlicingService } from './slicing-service.ts';
import { truthy } from '../core/values.ts';
import { setOwn } from '../core/plain.ts';
import { fileChunks } from '../core/file-chunks.ts';

export interface SliceCommandDeps {
  slicing: SlicingService;
  files: FileService;
  profiles: PrinterProfiles;
  jobs?: JobControl;
  logger: Logger;
}

function splitPath(path: string): { folder: string; name: string } {
  const i = path.lastIndexOf('/');
  return i === -1 ? { folder: '', name: path } : { folder: path.slice(0, i), name: path.slice(i + 1) };
}

/** Builds the hook the files routes call for `{"command": "slice", ...}` on a local file. */
export function createSliceCommand(deps: SliceCommandDeps) {
  return async (req: { origin: 'local'; path: string; params: Record<string, unknown>; user?: string }) => {
    const { slicing, files, profiles, jobs, logger } = deps;
    const p = req.params;
    await slicing.ready();
    const slicer = typeof p.slicer === 'string' && p.slicer ? p.slicer : slicing.defaultSlicer();
    if (!slicer) throw new DomainError(ErrorCodes.UNSUPPORTED_MEDIA, 'Cannot slice file, no slicer available');
    const adapter = slicing.adapter(slicer);
    if (!slicing.isConfigured(slicer)) throw new DomainError(ErrorCodes.UNSUPPORTED_MEDIA, `Slicer ${slicer} is not configured`);

    const source = splitPath(req.path);
    const ext = source.name.includes('.') ? source.name.slice(source.name.lastIndexOf('.') + 1).toLowerCase() : '';
    if (!adapter.sourceExtensions.includes(ext)) throw new DomainError(ErrorCodes.UNSUPPORTED_MEDIA, 'Cannot slice this type of file');

    const destParam = typeof p.destination === 'string' && p.destination ? p.destination : typeof p.gcode === 'string' && p.gcode ? p.gcode : undefined;
    const destName = destParam ?? `${source.name.slice(0, source.name.length - ext.length - 1)}.${adapter.destinationExtension}`;
    const destFolder = typeof p.path === 'string' ? p.path : source.folder;
    const target = files.uploadTarget(destFolder, destName);
    const targetPath = target.parts.join('/');

    const profile = typeof p.profile === 'string' && p.profile ? p.profile : undefined;
    if (profile) await slicing.getProfile(slicer, profile); // 404 before accepting the job
    const printerProfileId = typeof p.printerProfile === 'string' && p.printerProfile ? p.printerProfile : undefined;
    const printerProfile = printerProfileId ? profiles.get(printerProfileId) : profiles.getCurrentOrDefault();
    if (!printerProfile) throw notFound(`Unknown printer profile: ${printerProfileId}`);

    let position: { x: number; y: number } | undefined;
    if (p.position !== undefined) {
      const pos = p.position as { x?: unknown; y?: unknown };
      if (typeof pos !== 'object' || pos === null || typeof pos.x !== 'number' || typeof pos.y !== 'number') throw invalid('position needs numbers x and y');
      position = { x: pos.x, y: pos.y };
    }
    const overrides: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(p)) if (k.startsWith('profile.')) setOwn(overrides, k.slice('profile.'.length), v);

    const select = truthy(p.select);
    const print = truthy(p.print);
    if ((select || print) && jobs && !jobs.isOperational()) throw conflict('Printer is not operational, cannot select or print the sliced file');
    if (jobs?.selected()?.origin === 'local' && jobs.selected()?.path === targetPath && jobs.isOperational() && !jobs.isReady()) {
      throw new DomainError(ErrorCodes.FILE_IN_USE, 'Trying to slice into file that is currently being printed');
    }

    const modelPath = await files.absolutePath(req.path);
    const workDir = await mkdtemp(join(tmpdir(), 'gantry-slice-'));
    const out = join(workDir, `out.${adapter.destinationExtension}`);
    const job = slicing.slice({
      slicer, profile, overrides, position,
      source: { location: 'local', path: req.path, file: source.name },
      dest: { location: 'local', path: targetPath, file: target.parts[target.parts.length - 1] },
      printer: { volume: printerProfile.volume, extruder: printerProfile.extruder, heatedBed: printerProfile.heatedBed },
    }, modelPath, out);

    // The client gets 202 at once; the rest happens in the background and is reported through events.
    void (async () => {
      try {
        await job.done;
        const sink = await files.newUploadSink();
        try {
          for await (const chunk of fileChunks(out)) await sink.write(chunk); // written before the next read reuses it
        } catch (err) {
          await sink.discard();
          throw err;
        }
        await files.storeUpload(sink, { folder: destFolder, filename: destName, mayOverwrite: true });
        if ((select || print) && jobs) await jobs.select('local', targetPath, { print, user: req.user });
      } catch (err) {
        logger.warn({ err, source: req.path, target: targetPath }, 'slicing did not produce a file');
      } finally {
        await rm(workDir, { recursive: true, force: true });
      }
    })();

    return { name: target.parts[target.parts.length - 1], path: targetPath, display: target.display };
  };
}
