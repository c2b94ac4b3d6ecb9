// Domain shapes of stored files and folders (no wire vocabulary; src/http maps them to OctoPrint's entries).
import type { FileMeta } from './metadata-store.ts';

export type Origin = 'local' | 'sdcard';

export interface StoredFile {
  kind: 'file';
  origin: Origin;
  name: string;
  display: string;
  /** Path inside the location, '/'-separated, no leading slash. */
  path: string;
  typePath: string[];
  /** Bytes; undefined for SD files whose size the firmware did not report. */
  size?: number;
  /** Unix seconds (integer); undefined when unknown (SD). */
  date?: number;
  /** SHA-1 hex of the content (local only). */
  hash?: string;
  /** Stored metadata minus the keys that are fields above (analysis, history, userdata, plugin keys). */
  meta: FileMeta;
  /**
   * No analysis of this content is stored: none was ever made (copied in by hand), or the stored one was made of other
   * content (the file was replaced on disk) and is left out of `meta`.
   */
  analysisMissing?: true;
}

export interface StoredFolder {
  kind: 'folder';
  origin: 'local';
  name: string;
  display: string;
  path: string;
  /** Sum of the sizes of every file below it. */
  size: number;
  children: StoredEntry[];
  meta: FileMeta;
}

export type StoredEntry = StoredFile | StoredFolder;

export interface ListOptions {
  recursive?: boolean;
  /** Extension-tree type name (`machinecode`, `gcode`, `model`, ...). Folders are kept, their children filtered. */
  filter?: string;
  /** Read the disk even when a recent listing is still valid (`force`/`_refresh` of the files API). */
  fresh?: boolean;
}

/** What the job side tells the files side (wired in main.ts; no dependency on the printer from here). */
export interface FileUsage {
  /** The file is being printed or streamed (a job is printing or paused with it, or it is being sent to SD). */
  isInUse(origin: Origin, path: string): boolean;
  /** A job is active; with `gcodeAnalysis.runAt: idle` analyses wait until it ends. */
  isPrinting(): boolean;
  /** The file went away (deleted or moved): deselect it if it was selected. */
  released(origin: Origin, path: string): void;
  /** The file's content was replaced (re-upload): reload it if it was selected. */
  replaced(origin: Origin, path: string): void;
}

export const noUsage: FileUsage = {
  isInUse: () => false,
  isPrinting: () => false,
  released: () => {},
  replaced: () => {},
};
