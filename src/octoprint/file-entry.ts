// OctoPrint's file entry vocabulary: stored files/folders as wire entries (refs, gcodeAnalysis, prints, statistics,
// pass-through keys). URLs are built on `base`, the request's external base URL (src/http/urls.ts externalBase), taken
// once per answer rather than once per entry.
import type { StoredEntry, StoredFile, StoredFolder } from '../files/types.ts';
import type { PrintRecord } from '../files/metadata-store.ts';
import { setOwn } from '../core/plain.ts';
import { thumbnailRef } from '../files/analysis/thumbnails.ts';
import { Type } from '../config/typebox.ts';
import type { Static } from 'typebox';
import { AnyJson, OpenObject } from './schema-kit.ts';

// Response schemas. An entry is open: stored metadata keys (userdata, plugin keys) pass through as they are, and the
// analysis is whatever the analyser found. Folder children are entries of the same shape, written as they are.
const Refs = Type.Object({ resource: Type.String(), download: Type.Optional(Type.String()) });
const PerProfile = Type.Object({}, { additionalProperties: Type.Number() });

export const FileEntrySchema = OpenObject({
  name: Type.String(),
  display: Type.Optional(Type.String()),
  path: Type.String(),
  type: Type.Optional(Type.String()),
  typePath: Type.Optional(Type.Array(Type.String())),
  origin: Type.String(),
  refs: Refs,
  size: Type.Optional(Type.Number()),
  date: Type.Optional(Type.Number()),
  hash: Type.Optional(Type.String()),
  gcodeAnalysis: Type.Optional(AnyJson),
  thumbnail: Type.Optional(Type.String()),
  prints: Type.Optional(Type.Object({
    success: Type.Number(), failure: Type.Number(),
    last: Type.Object({ success: Type.Boolean(), date: Type.Number(), printTime: Type.Optional(Type.Number()) }),
  })),
  statistics: Type.Optional(Type.Object({ averagePrintTime: PerProfile, lastPrintTime: PerProfile })),
  children: Type.Optional(Type.Array(AnyJson)),
});

/** A listing: the entries, and the local storage's free and total bytes (absent for the SD card). */
export const FileListSchema = Type.Object({
  files: Type.Array(FileEntrySchema),
  free: Type.Optional(Type.Number()),
  total: Type.Optional(Type.Number()),
});

export const AbridgedEntrySchema = Type.Object({ name: Type.String(), path: Type.String(), origin: Type.String(), refs: Refs });
export const SlicedEntrySchema = Type.Object({
  name: Type.String(), path: Type.String(), display: Type.String(), origin: Type.String(), refs: Refs,
});

/** POST /api/files/{location}: the stored file (and its SD copy), or the folder made. */
export const UploadReplySchema = Type.Object({
  files: Type.Optional(Type.Object({ local: AbridgedEntrySchema, sdcard: Type.Optional(AbridgedEntrySchema) })),
  folder: Type.Optional(AbridgedEntrySchema),
  done: Type.Boolean(),
  effectiveSelect: Type.Optional(Type.Boolean()),
  effectivePrint: Type.Optional(Type.Boolean()),
});

/** An entry on the wire: the listed fields, and any stored metadata key. */
export type WireEntry = Static<typeof FileEntrySchema> & Record<string, unknown>;

/** Percent-encodes each segment of a slash-separated path. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

export const resourceUrl = (base: string, origin: string, path: string): string => `${base}/api/files/${origin}/${encodePath(path)}`;
export const downloadUrl = (base: string, path: string): string => `${base}/downloads/files/local/${encodePath(path)}`;

/** `prints` (success/failure counts, last) and `statistics` (per printer profile) from the print history. */
export function printSummary(history: PrintRecord[] | undefined): Pick<WireEntry, 'prints' | 'statistics'> {
  if (!history || history.length === 0) return {};
  let success = 0;
  let failure = 0;
  let last = history[0];
  // Keyed by printer profile id, which a user chooses ("__proto__" is a valid one): Maps, not objects.
  const sums = new Map<string, { total: number; n: number }>();
  const lastTimes = new Map<string, { at: number; time: number }>();
  for (const h of history) {
    if (h.success) success++;
    else failure++;
    if (h.timestamp >= last.timestamp) last = h;
    if (h.success && typeof h.printTime === 'number' && h.printerProfile) {
      const s = sums.get(h.printerProfile) ?? { total: 0, n: 0 };
      sums.set(h.printerProfile, s);
      s.total += h.printTime;
      s.n++;
      const l = lastTimes.get(h.printerProfile);
      if (!l || h.timestamp >= l.at) lastTimes.set(h.printerProfile, { at: h.timestamp, time: h.printTime });
    }
  }
  const lastOut: { success: boolean; date: number; printTime?: number } = { success: last.success, date: last.timestamp };
  if (last.success && typeof last.printTime === 'number') lastOut.printTime = last.printTime;
  const averagePrintTime: Record<string, number> = {};
  const lastPrintTime: Record<string, number> = {};
  for (const [k, s] of sums) setOwn(averagePrintTime, k, s.total / s.n);
  for (const [k, l] of lastTimes) setOwn(lastPrintTime, k, l.time);
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

/** A folder's wire fields but its children, which come last (http/listing-json.ts writes them after these). */
export function folderFields(base: string, f: StoredFolder): WireEntry {
  const { analysis: _a, history: _h, children: _c, ...rest } = f.meta;
  return {
    ...rest,
    name: f.name, display: f.display, path: f.path, type: 'folder', typePath: ['folder'], origin: 'local',
    refs: { resource: resourceUrl(base, 'local', f.path) },
    size: f.size,
  };
}

export function toWire(base: string, e: StoredEntry): WireEntry {
  if (e.kind === 'file') return fileEntry(base, e);
  const wire = folderFields(base, e);
  wire.children = e.children.map((c) => toWire(base, c));
  return wire;
}

/** The abridged entry of upload/copy/move answers: name, path, origin, refs only. */
export function abridged(base: string, origin: 'local' | 'sdcard', name: string, path: string, isFile = true): Static<typeof AbridgedEntrySchema> {
  const refs: { resource: string; download?: string } = { resource: resourceUrl(base, origin, path) };
  if (origin === 'local' && isFile) refs.download = downloadUrl(base, path);
  return { name, path, origin, refs };
}

