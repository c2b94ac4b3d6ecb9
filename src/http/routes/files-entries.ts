// Maps stored files/folders to OctoPrint's file entries (refs, gcodeAnalysis, prints, statistics, pass-through keys).
import type { FastifyRequest } from 'fastify';
import type { StoredEntry, StoredFile, StoredFolder } from '../../files/types.ts';
import type { PrintRecord } from '../../files/metadata-store.ts';
import { absoluteUrl, encodePath } from '../urls.ts';
import { thumbnailRef } from '../../files/analysis/thumbnails.ts';

export type WireEntry = Record<string, unknown>;

export const resourceUrl = (req: FastifyRequest, origin: string, path: string): string =>
  absoluteUrl(req, `/api/files/${origin}/${encodePath(path)}`);
export const downloadUrl = (req: FastifyRequest, path: string): string =>
  absoluteUrl(req, `/downloads/files/local/${encodePath(path)}`);

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

function fileEntry(req: FastifyRequest, f: StoredFile): WireEntry {
  if (f.origin === 'sdcard') {
    const e: WireEntry = { name: f.name, path: f.path, display: f.display, type: f.typePath[0], typePath: f.typePath, origin: 'sdcard',
      refs: { resource: resourceUrl(req, 'sdcard', f.path) } };
    if (f.size !== undefined) e.size = f.size;
    if (f.date !== undefined) e.date = f.date;
    return e;
  }
  const { analysis, history, ...rest } = f.meta;
  const e: WireEntry = {
    ...rest,
    name: f.name, display: f.display, path: f.path, type: f.typePath[0], typePath: f.typePath, origin: 'local',
    refs: { resource: resourceUrl(req, 'local', f.path), download: downloadUrl(req, f.path) },
    size: f.size, date: f.date,
  };
  if (f.hash) e.hash = f.hash;
  if (analysis) e.gcodeAnalysis = analysis;
  // Stored when the analysis found a preview; made afresh so it follows the file when it is moved or renamed.
  if (typeof rest.thumbnail === 'string') e.thumbnail = thumbnailRef(f.path, f.date);
  Object.assign(e, printSummary(history as PrintRecord[] | undefined));
  return e;
}

function folderEntry(req: FastifyRequest, f: StoredFolder): WireEntry {
  const { analysis: _a, history: _h, ...rest } = f.meta;
  return {
    ...rest,
    name: f.name, display: f.display, path: f.path, type: 'folder', typePath: ['folder'], origin: 'local',
    refs: { resource: resourceUrl(req, 'local', f.path) },
    size: f.size,
    children: f.children.map((c) => toWire(req, c)),
  };
}

export function toWire(req: FastifyRequest, e: StoredEntry): WireEntry {
  return e.kind === 'file' ? fileEntry(req, e) : folderEntry(req, e);
}

/** The abridged entry of upload/copy/move answers: name, path, origin, refs only. */
export function abridged(req: FastifyRequest, origin: 'local' | 'sdcard', name: string, path: string, isFile = true): WireEntry {
  const refs: Record<string, string> = { resource: resourceUrl(req, origin, path) };
  if (origin === 'local' && isFile) refs.download = downloadUrl(req, path);
  return { name, path, origin, refs };
}
