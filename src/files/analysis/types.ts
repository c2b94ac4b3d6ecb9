// Public data shapes of the G-code analyser: its options (printer profile side) and its result (OctoPrint's gcodeAnalysis plus Gantry extras).
import type { FileObject } from '../../objects/object-outlines.ts';

/** Kinematic limits of the machine, all in mm and seconds. Any field may be left out; see limits.ts for the order of precedence. */
export interface MachineLimits {
  /** Max feedrate per axis, mm/s (M203). */
  maxFeedrate: { x: number; y: number; z: number; e: number };
  /** Max acceleration per axis, mm/s² (M201). */
  maxAcceleration: { x: number; y: number; z: number; e: number };
  /** Default acceleration for printing moves, mm/s² (M204 P / S). */
  printAcceleration: number;
  /** Acceleration for E-only moves (retract/prime), mm/s² (M204 R). */
  retractAcceleration: number;
  /** Acceleration for non-extruding moves, mm/s² (M204 T / S). */
  travelAcceleration: number;
  /** Classic jerk per axis, mm/s (M205 X/Y/Z/E). Used when junctionDeviation is 0. */
  jerk: { x: number; y: number; z: number; e: number };
  /** Junction deviation in mm (M205 J). > 0 selects junction-deviation cornering instead of classic jerk. */
  junctionDeviation: number;
  /** Marlin 1.0-style classic jerk (what Cura's estimator models): one limit for the XY velocity vector change. */
  combinedXyJerk: boolean;
  /**
   * Klipper's square_corner_velocity in mm/s (SET_VELOCITY_LIMIT, or 5 for a Klipper-flavoured file); > 0 selects
   * Klipper's cornering: junction deviation derived from it, plus its centripetal limit for short moves.
   */
  squareCornerVelocity: number;
  /** Minimum feedrate for printing / travel moves, mm/s (M205 S / T). */
  minimumFeedrate: number;
  minimumTravelFeedrate: number;
}

export interface AnalysisOptions {
  /**
   * Filament diameter per tool in mm (printer profile); it wins over a slicer comment because it describes the
   * filament actually loaded. Default: the slicer's comment, else 1.75.
   */
  filamentDiameter?: number[];
  /**
   * The connected firmware's report of its own limits: its M201/M203/M204/M205 lines as printed at boot or for M503
   * (`M203 X300.00 Y300.00 Z5.00 E25.00`). Read like the same commands in a file, below the profile's and the file's.
   */
  firmwareLimits?: string[];
  /** Limits the user stated in the printer profile, used where the file states none. */
  limits?: Partial<{
    [K in keyof MachineLimits]: MachineLimits[K] extends number | boolean ? MachineLimits[K] : Partial<MachineLimits[K]>;
  }>;
  /** Feedrate before the file sets one, mm/min (OctoPrint's profile X/Y speed). Default 6000. */
  defaultFeedrate?: number;
  /** Height of the bed surface; both areas' minZ start here (OctoPrint's gcodeAnalysis.bedZ). Default 0. */
  bedZ?: number;
  /** When true, G90/G91 also switch E between absolute and relative (OctoPrint's g90InfluencesExtruder). */
  g90InfluencesExtruder?: boolean;
  /** Highest tool number accepted by T<n> (OctoPrint's maxExtruders). Default 10. */
  maxTools?: number;
}

export interface Area {
  minX: number | null; maxX: number | null;
  minY: number | null; maxY: number | null;
  minZ: number | null; maxZ: number | null;
}

export interface Dimensions { width: number; depth: number; height: number }

/** What the slicer wrote about its own result, kept apart so it never masquerades as ours. */
export interface SlicerReport {
  /** e.g. "PrusaSlicer 2.7.1+win64", "Cura_SteamEngine 4.8.0", "Simplify3D 4.1.2", "BambuStudio 01.08.04.51". */
  name: string | null;
  /** The slicer's own print-time estimate in seconds, if the file carries one. */
  estimatedPrintTime: number | null;
  /**
   * BambuStudio/Orca's "model printing time": the estimate without the allowance it adds for the printer's start
   * sequence (heating, levelling), which no move-based model can reproduce. Null for other slicers.
   */
  estimatedModelTime: number | null;
  /** The slicer's filament length in mm, per tool, if the file carries it. */
  filamentLength: number[] | null;
  /** Filament diameter read from the file (mm, per tool), if any. */
  filamentDiameter: number[] | null;
  /**
   * The printer the file was sliced for, from PrusaSlicer's (and its forks') config block at the end of the file:
   * `; bed_shape = 0x0,250x0,250x210,0x210`, `; nozzle_diameter = 0.4`, `; filament_type = PETG`. Absent or null
   * when the file says nothing of it. The farm's queue matches it against each printer's profile.
   */
  slicedFor?: SlicedFor | null;
}

/** What a file was sliced for; a field the file does not state is null. */
export interface SlicedFor {
  /** Bed size in mm (the bounding box of the bed shape). */
  bedX: number | null;
  bedY: number | null;
  /** Nozzle diameter in mm of the first tool. */
  nozzleDiameter: number | null;
  /** Filament type of the first tool (`PLA`, `PETG`, …). */
  filamentType: string | null;
}

/** Bumped whenever the analyser's figures change, so stored analyses can be refreshed. */
export const ANALYSER_VERSION = 3;

export type LimitsSource = 'file' | 'profile' | 'firmware' | 'default';

/** Gantry's additions; OctoPrint clients ignore unknown keys under gcodeAnalysis. */
export interface GantryAnalysisExtras {
  /** ANALYSER_VERSION that produced this result; stored results from an older analyser are worth redoing. */
  analyserVersion: number;
  slicer: SlicerReport;
  /**
   * What `filament` counts. 'whole-file': everything the printer pushes, start G-code purges included (OctoPrint's
   * semantics, and what PrusaSlicer, BambuStudio and Simplify3D count in their own figure). 'from-first-layer':
   * Cura's accounting — its "Filament used" leaves out the machine's start G-code (purge lines), so for a Cura file
   * `filament` counts from the first `;LAYER:` marker and the figure matches the one the user saw in Cura.
   */
  filamentAccounting: 'whole-file' | 'from-first-layer';
  /** Everything the printer pushes per tool, start G-code included (equal to `filament` for 'whole-file'). */
  filamentTotal: Record<string, { length: number; volume: number }>;
  /** Duration-only estimate (Σ distance / feedrate + dwells), i.e. what OctoPrint would report; kept for comparison. */
  naivePrintTime: number;
  /**
   * Where the kinematic limits came from, the most specific that stated any: 'file' (M20x / config block), 'profile'
   * (the printer profile's machineLimits), 'firmware' (the connected firmware's own report), 'default' (Marlin's).
   */
  limitsSource: LimitsSource;
  /** Cornering model used: classic jerk or junction deviation. */
  cornering: 'jerk' | 'jerk-xy' | 'junction-deviation' | 'square-corner-velocity';
  /** The file contains M73 progress lines (so the job runner can use them while printing). */
  hasM73: boolean;
  /**
   * Planned elapsed seconds at file positions, about every 1 % of the file: [byte offset, seconds] pairs, the last
   * being [file size, estimated time]. While printing, remaining ≈ total − time at the current file position.
   */
  timeline: [number, number][];
  /** Tools selected by the file (T<n>), in order of first use. */
  toolsUsed: number[];
  /** The objects the file labels (cancel-object), with their outlines; absent when it labels none. */
  objects?: FileObject[];
  /** Lines seen / moves planned, for diagnostics. */
  lines: number;
  moves: number;
}

/** OctoPrint's gcodeAnalysis shape plus `gantry` extras. */
export interface GcodeAnalysis {
  /** Seconds; absent when nothing was extruded (as in OctoPrint). */
  estimatedPrintTime?: number;
  /** Per tool ("tool0", ...): length in mm, volume in cm³. Empty when nothing was extruded. */
  filament: Record<string, { length: number; volume: number }>;
  dimensions: Dimensions;
  printingArea: Area;
  travelArea: Area;
  travelDimensions: Dimensions;
  /** Present and true when the file extrudes nothing (OctoPrint's `_empty`). */
  _empty?: true;
  gantry: GantryAnalysisExtras;
}

/** Progress callback: fraction of the file's bytes analysed, 0..1. */
export type AnalysisProgress = (fraction: number) => void;
