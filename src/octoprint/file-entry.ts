// OctoPrint's file entry vocabulary: stored files/folders as wire entries (refs, gcodeAnalysis, prints, statistics,
// pass-through keys). URLs are built on `base`, the request's external base URL (src/http/urls.ts externalBase), taken
// once per answer rather than once per entry.
import type { StoredEntry, StoredFile, StoredFolder } from '../files/types.ts';
import type { PrintRecord } from '../files/metadata-store.ts';
import { thumbnailRef } from '../files/analysis/thumbnails.ts';

export type WireEntry = Record<string, unknown>;

/** Percent-encodes each segment of a slash-separated path. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

export const resourceUrl = (base: string, origin: string, path: string): string => `${base}/api/files/${origin}/${encodePath(path)}`;
export const downloadUrl = (base: string, path: string): string => `${base}/downloads/files/local/${encodePath(path)}`;

/** `prints` (success/failure counts, last) and `statistics` (per printer profile) from the print history. */
export function printSummary(history: PrintRecord[] | undefined): { prints?: WireEntry; statistics?: WireEntry } {
  if (!history || history.length === 0) return {};
  let success = 0;
  let failure = 0;
  let last = history[0];
  const sums: Record<string, { total: number; n: number }> = {};
  const lastTimes: Record<string, { at: number; time: number }> = {};
  for (const h of history) {
    if (h.success) success++;
    else failure++;
    if (h.timestamp >= last.timestamp) last = h;
    if (h.success && typeof h.printTime === 'number' && h.printerProfile) {
      const s = (sums[h.printerProfile] ??= { total: 0, n: 0 });
      s.total += h.printTime;
      s.n++;
      const l = lastTimes[h.printerProfile];
      if (!l || h.timestamp >= l.at) lastTimes[h.printerProfile] = { at: h.timestamp, time: h.printTime };
    }
  }
  const lastOut: WireEntry = { success: last.success, date: last.timestamp };
  if (last.success && typeof last.printTime === 'number') lastOut.printTime = last.printTime;
  const averagePrintTime: Record<string, number> = {};
  const lastPrintTime: Record<string, number> = {};
  for (const [k, s] of Object.entries(sums)) averagePrintTime[k] = s.total / s.n;
  for (const [k, l] of Object.entries(lastTimes)) lastPrintTime[k] = l.time;
  return { prints: { success, failure, last: lastOut }, statistics: { averagePrintTime, lastPrintTime } };
}

function fileEntry(base: string, f: StoredFile): WireEntry {
  if (f.origin === 'sdcard') {
    const e: WireEntry = { name: f.name, path: f.path, display: f.display, type: f.typePath[0], typePath: f.typePath, origin: 'sdcard',
      refs: { resource: resourceUrl(base, 'sdcard', f.path) } };
    if (f.size !== undefined) e.size = f.size;
    if (f.date !== undefined) e.date = f.date;
    return e;
  }
  const { analysis, history, ...rest } = f.meta;
  const e: WireEntry = {
    ...rest,
    name: f.name, display: f.display, path: f.path, type: f.typePath[0], typePath: f.typePath, origin: 'local',
    refs: { resource: resourceUrl(base, 'local', f.path), download: downloadUrl(base, f.path) },
    size: f.size, date: f.date,
  };
  if (f.hash) e.hash = f.hash;
  if (analysis) e.gcodeAnalysis = analysis;
  // Stored when the analysis found a preview; made afresh so it follows the file when it is moved or renamed.
  if (typeof rest.thumbnail === 'string') e.thumbnail = thumbnailRef(f.path, f.date);
  Object.assign(e, printSummary(history as PrintRecord[] | undefined));
  return e;
}

function folderEntry(base: string, f: StoredFolder): WireEntry {
  const { analysis: _a, history: _h, ...rest } = f.meta;
  return {
    ...rest,
    name: f.name, display: f.display, path: f.path, type: 'folder', typePath: ['folder'], origin: 'local',
    refs: { resource: resourceUrl(base, 'local', f.path) },
    size: f.size,
    children: f.children.map((c) => toWire(base, c)),
  };
}

export function toWire(base: string, e: StoredEntry): WireEntry {
  return e.kind === 'file' ? fileEntry(base, e) : folderEntry(base, e);
}

/** The abridged entry of upload/copy/move answers: name, path, origin, refs only. */
export function abridged(base: string, origin: 'local' | 'sdcard', name: string, path: string, isFile = true): WireEntry {
  const refs: Record<string, string> = { resource: resourceUrl(base, origin, path) };
  if (origin === 'local' && isFile) refs.download = downloadUrl(base, path);
  return { name, path, origin, refs };
}
