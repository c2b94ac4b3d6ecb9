// Slicer adapter contract: what the slicing service needs from each slicer it can drive (one adapter per slicer CLI).

/** The parts of a printer profile a slicer needs to place and size the print. */
export interface SlicingPrinter {
  volume: { width: number; depth: number; height: number; origin?: string; formFactor?: string };
  extruder: { count: number; nozzleDiameter: number };
  heatedBed?: boolean;
}

/** A slicer's settings: flat key → value, as the slicer's own config format has them. */
export type ProfileData = Record<string, string>;

export interface SliceRequest {
  modelPath: string;
  outputPath: string;
  /** Complete settings (defaults merged with the profile's overrides and per-request overrides). */
  settings: ProfileData;
  printer?: SlicingPrinter;
  /** Centre of the object on the bed in mm. */
  position?: { x: number; y: number };
  signal: AbortSignal;
  /** Fraction 0..1, never decreasing. */
  onProgress(fraction: number): void;
}

export interface SlicerAdapter {
  readonly key: string;
  readonly displayName: string;
  /** Runs on this machine (always true for CLI adapters). */
  readonly sameDevice: boolean;
  /** Model file extensions it slices, lower case without dot. */
  readonly sourceExtensions: readonly string[];
  /** Extension of what it produces. */
  readonly destinationExtension: string;
  /** Whether the slicer binary is installed and answers; cached by the service. */
  probe(): Promise<boolean>;
  /** The slicer's full default settings. */
  defaults(): Promise<ProfileData>;
  /** Parses the slicer's native profile file (e.g. PrusaSlicer .ini) into settings; throws INVALID_REQUEST if it can't. */
  parseNative(text: string): ProfileData;
  slice(req: SliceRequest): Promise<void>;
}
