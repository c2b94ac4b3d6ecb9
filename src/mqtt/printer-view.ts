// What MQTT publishes of one printer and its files, adapted from the printer service, its profiles and the file library.
import type { PrinterService } from '../printer/printer-service.ts';
import type { PrinterProfile } from '../printer/profiles/printer-profile-shape.ts';
import type { FileMetadataSource, MqttPrinterSource } from './types.ts';

/** The printer's state and listeners, and the heaters of the profile in use (Home Assistant's sensors). */
export function mqttPrinterView(printer: PrinterService, profiles: { getCurrentOrDefault(): PrinterProfile }): MqttPrinterSource {
  return {
    state: () => printer.state(), currentZ: () => printer.currentZ(), offsets: () => printer.offsets(), resends: () => printer.resends(),
    subscribe: (l) => printer.subscribe(l), watchReplies: (w) => printer.watchReplies(w),
    heaters: () => {
      const p = profiles.getCurrentOrDefault();
      return { extruders: p.extruder.count, bed: p.heatedBed, chamber: p.heatedChamber };
    },
  };
}

/** What the file library answers about one stored file (FileService has it). */
interface StoredFileLookup {
  file(path: string): Promise<{ meta: Record<string, unknown>; display: string; hash?: unknown }>;
}

/** The printed file's metadata (`publish.metadataActive`): local files only, without the analysis cache's keys. */
export function mqttFileMetadata(files: StoredFileLookup): FileMetadataSource {
  return async (origin, path) => {
    if (origin !== 'local') return null;
    const f = await files.file(path);
    const { hashKey: _h, analysisKey: _a, ...meta } = f.meta;
    return { ...meta, display: f.display, hash: f.hash };
  };
}
