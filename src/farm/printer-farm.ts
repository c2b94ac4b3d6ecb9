// The printers of one server by name: the file library's view of who prints (a file any printer holds is held for all),
// and the printer whose profile analyses uploads (the default one).
import type { AnalysisOptions } from '../files/analysis/types.ts';
import type { FileUsage, Origin } from '../files/types.ts';
import type { PrinterUnit } from './printer-unit.ts';

/** The printer of a one-printer install, on the main port. */
export const DEFAULT_PRINTER = 'default';

/** A printer joined the farm or left it. */
export type FarmChangeListener = (change: 'added' | 'removed', unit: PrinterUnit) => void;

export class PrinterFarm implements FileUsage {
  private readonly units = new Map<string, PrinterUnit>();
  private readonly listeners = new Set<FarmChangeListener>();

  add(unit: PrinterUnit): void {
    if (this.units.has(unit.name)) throw new Error(`printer ${unit.name} is already in the farm`);
    this.units.set(unit.name, unit);
    for (const l of [...this.listeners]) l('added', unit);
  }

  /** Takes a printer out (the caller stops it). */
  remove(name: string): PrinterUnit | undefined {
    const unit = this.units.get(name);
    this.units.delete(name);
    if (unit) for (const l of [...this.listeners]) l('removed', unit);
    return unit;
  }

  /** Printers joining and leaving (the queue's view of the farm follows them); returns the unsubscribe. */
  onChange(listener: FarmChangeListener): () => void {
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  }

  get(name: string): PrinterUnit | undefined {
    return this.units.get(name);
  }

  list(): PrinterUnit[] {
    return [...this.units.values()];
  }

  /** Uploads are analysed for the default printer (or the first one, in a farm without it); none: the analyser's defaults. */
  analysisOptions(): AnalysisOptions {
    const unit = this.units.get(DEFAULT_PRINTER) ?? this.units.values().next().value;
    return unit ? unit.analysisOptions() : {};
  }

  isInUse(origin: Origin, path: string): boolean {
    // An SD card belongs to one printer: only the library (`local`) is shared.
    for (const u of this.units.values()) if (u.isInUse(origin, path)) return true;
    return false;
  }

  isPrinting(): boolean {
    for (const u of this.units.values()) if (u.isPrinting()) return true;
    return false;
  }

  released(origin: Origin, path: string): void {
    for (const u of this.units.values()) u.released(origin, path);
  }

  replaced(origin: Origin, path: string): void {
    for (const u of this.units.values()) u.replaced(origin, path);
  }
}
