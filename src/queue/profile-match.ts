// Whether a printer's profile suits what a file was sliced for (the queue's `profile` constraint), and why not.
import type { SlicedFor } from '../files/analysis/types.ts';
import type { QueuePrinterProfile } from './queue-printers.ts';

/** A bed may be this much smaller than the one sliced for (rounding in profiles) and still count as the same. */
const BED_TOLERANCE_MM = 0.5;
const NOZZLE_TOLERANCE_MM = 0.01;

/**
 * Null when the printer suits the file, else the first reason it does not. The bed must be at least the size sliced
 * for (a part placed for a 250 × 210 bed fits a 300 × 300 one), the nozzle the same, and the filament type the same
 * when both the file and the printer state one (a printer whose loaded filament nobody set is not refused for it).
 */
export function profileMismatch(file: SlicedFor, printer: QueuePrinterProfile): string | null {
  if (file.bedX !== null && printer.bedX + BED_TOLERANCE_MM < file.bedX) return `bed ${printer.bedX} mm wide, sliced for ${file.bedX} mm`;
  if (file.bedY !== null && printer.bedY + BED_TOLERANCE_MM < file.bedY) return `bed ${printer.bedY} mm deep, sliced for ${file.bedY} mm`;
  if (file.nozzleDiameter !== null && Math.abs(printer.nozzleDiameter - file.nozzleDiameter) > NOZZLE_TOLERANCE_MM) {
    return `nozzle ${printer.nozzleDiameter} mm, sliced for ${file.nozzleDiameter} mm`;
  }
  if (file.filamentType !== null && printer.filamentType && printer.filamentType.toLowerCase() !== file.filamentType.toLowerCase()) {
    return `filament ${printer.filamentType}, sliced for ${file.filamentType}`;
  }
  return null;
}
