// The two timelapse folders on disk: rendered movies (listing, names that may be served or deleted) and the frames of
// unrendered jobs (grouped by prefix, deleted by exact prefix, aged out after cleanTmpAfterDays).
import { readdir, stat, lstat, unlink } from 'node:fs/promises';
import { join } from 'node:path';

const MOVIE = /\.(mpg|mpeg|mp4|m4v|mkv)$/i;
const THUMB_SUFFIX = '.thumb.jpg';

/** A movie name that may be listed, served or deleted: a timelapse extension, not hidden, no path. */
export function isMovieName(name: string): boolean {
  return MOVIE.test(name) && isPlainName(name);
}

/** A movie's thumbnail name (`<movie>.thumb.jpg`). */
export function isThumbnailName(name: string): boolean {
  return name.endsWith(THUMB_SUFFIX) && isMovieName(name.slice(0, -THUMB_SUFFIX.length));
}

export function isPlainName(name: string): boolean {
  return name !== '' && !name.startsWith('.') && !name.includes('/') && !name.includes('\\') && !name.includes('\0');
}

export const thumbnailOf = (movie: string): string => movie + THUMB_SUFFIX;

/** `43.9KB`: one decimal, base 1024, no space. */
export function humanSize(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)}${units[i]}`;
}

/** Local time `YYYY-MM-DD HH:MM`. */
export function formatDate(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

export interface MovieEntry {
  name: string;
  size: string;
  bytes: number;
  date: string;
  timestamp: number;
  url: string;
  thumbnail?: string;
}

/** Movies in directory order (the UI sorts); `urlPrefix` is the reverse-proxy script root or ''. */
export async function listMovies(dir: string, urlPrefix: string): Promise<MovieEntry[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const present = new Set(names);
  const out: MovieEntry[] = [];
  for (const name of names) {
    if (!isMovieName(name)) continue;
    const st = await lstat(join(dir, name)).catch(() => undefined);
    if (!st?.isFile()) continue;
    const entry: MovieEntry = {
      name, size: humanSize(st.size), bytes: st.size, date: formatDate(st.mtimeMs), timestamp: st.mtimeMs / 1000,
      url: `${urlPrefix}/downloads/timelapse/${encodeURIComponent(name)}`,
    };
    if (present.has(thumbnailOf(name))) entry.thumbnail = `${urlPrefix}/downloads/timelapse/${encodeURIComponent(thumbnailOf(name))}`;
    out.push(entry);
  }
  return out;
}

export interface FrameGroup {
  name: string;
  count: number;
  bytes: number;
  size: string;
  date: string;
  /** The smallest max(ctime, mtime) of its frames, ms: one old frame ages out the group. */
  oldestTouch: number;
  oldest: number;
}

/** The prefix of a frame (`<prefix>-<n>.jpg`), or null for files that are not frames. */
export function framePrefix(name: string): string | null {
  if (!name.toLowerCase().endsWith('.jpg')) return null;
  const dash = name.lastIndexOf('-');
  return dash <= 0 ? null : name.slice(0, dash);
}

/** Frames grouped by prefix, sorted by name. */
export async function listFrameGroups(dir: string): Promise<FrameGroup[]> {
  const groups = new Map<string, FrameGroup>();
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const prefix = framePrefix(name);
    if (prefix === null) continue;
    const st = await stat(join(dir, name)).catch(() => undefined);
    if (!st?.isFile()) continue;
    const age = Math.max(st.ctimeMs, st.mtimeMs);
    const g = groups.get(prefix) ?? { name: prefix, count: 0, bytes: 0, size: '', date: '', oldestTouch: Infinity, oldest: Infinity };
    g.count++;
    g.bytes += st.size;
    g.oldest = Math.min(g.oldest, st.mtimeMs);
    g.oldestTouch = Math.min(g.oldestTouch, age);
    groups.set(prefix, g);
  }
  return [...groups.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((g) => ({ ...g, size: humanSize(g.bytes), date: formatDate(g.oldest) }));
}

/** Deletes `<prefix>-<digits>.jpg` only (1.9.3's glob `<prefix>*.jpg` also took other jobs sharing the start). */
export async function deleteFrames(dir: string, prefix: string): Promise<number> {
  let n = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.startsWith(`${prefix}-`) || !/^\d+\.jpg$/.test(name.slice(prefix.length + 1))) continue;
    await unlink(join(dir, name)).then(() => { n++; }, () => {});
  }
  return n;
}

/** Old-format `tmp_NNNNN.jpg` go at once; a prefix goes when any of its frames is older than `days`. */
export async function cleanOldFrames(dir: string, days: number, now: number, log: (prefix: string) => void): Promise<void> {
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (/^tmp_\d+\.jpg$/.test(name)) await unlink(join(dir, name)).catch(() => {});
  }
  const limit = now - days * 86_400_000;
  for (const g of await listFrameGroups(dir)) {
    if (g.oldestTouch >= limit) continue;
    await deleteFrames(dir, g.name);
    log(g.name);
  }
}

/** mtime of a folder in ms (0 when missing), for ETag / Last-Modified. */
export async function folderMtime(dir: string): Promise<number> {
  return (await stat(dir).catch(() => undefined))?.mtimeMs ?? 0;
}
