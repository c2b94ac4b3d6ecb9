// How an upload is analysed for a printer: its profile's feedrate, filament and limits, and what its firmware reported.
import type { AnalysisOptions } from '../../files/analysis/types.ts';
import type { Config } from '../../config/schema.ts';
import type { FirmwareLimits } from '../readings/firmware-limits.ts';
import type { PrinterProfile } from './printer-profile-shape.ts';

export function printerAnalysisOptions(profile: PrinterProfile, firmware: FirmwareLimits,
  config: Pick<Config, 'gcodeAnalysis' | 'feature'>): AnalysisOptions {
  const diameter = profile.extruder.filamentDiameter;
  return {
    defaultFeedrate: profile.axes.x.speed,
    bedZ: config.gcodeAnalysis.bedZ,
    g90InfluencesExtruder: config.feature.g90InfluencesExtruder,
    ...(diameter !== undefined ? { filamentDiameter: [diameter] } : {}),
    ...(profile.machineLimits ? { limits: profile.machineLimits } : {}),
    firmwareLimits: firmware.report(),
  };
}
