// server.files.*: Moonraker's file manager over Gantry's files service. The `gcodes` root is Gantry's uploads folder
// (docs/reference/moonraker.md §4); paths are `<root>/<path>`, metadata comes from Gantry's analysis, thumbnails are
// the slicer previews in the file, offered under `.thumbs/<name>-<W>x<H>.png` beside it.
import type { FileService } from '../files/file-service.ts';
import type { StoredEntry, StoredFile, StoredFolder } from '../files/types.ts';
import { readThumbnails, type Thumbnail } from '../files/analysis/thumbnails.ts';
import { RpcError, badParam } from './rpc-errors.ts';
import { slicerSettings } from './slicer-settings.ts';

export const GCODES = 'gcodes';
export const ROOTS = [GCODES];

/** Without leading and trailing slashes (a loop, not a regex: one over `/+$` is quadratic on many slashes). */
export function trimSlashes(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && s.charCodeAt(a) === 47) a++;
  while (b > a && s.charCodeAt(b - 1) === 47) b--;
  return s.slice(a, b);
}

export interface FileItem { path: string; root: string; modified: number; size: number; permissions: string }

/** `gcodes/a/b.gcode` → `a/b.gcode`; other roots are unknown (404). */
export function inGcodes(path: unknown, { allowRoot = false } = {}): string {
  if (typeof path !== 'string') throw badParam('path must be a string');
  const clean = trimSlashes(path);
  const slash = clean.indexOf('/');
  const root = slash < 0 ? clean : clean.slice(0, slash);
  const rest = slash < 0 ? '' : clean.slice(slash + 1);
  if (root !== GCODES) throw new RpcError(404, `Invalid root path (${root})`);
  if (!rest && !allowRoot) throw badParam('A path below the root is needed');
  if (rest.split('/').some((p) => p === '..' || p === '.')) throw badParam('Invalid path');
  return rest;
}

const isGcode = (f: StoredFile): boolean => f.typePath[0] === 'machinecode';
const modified = (e: StoredEntry): number => (e.kind === 'file' ? e.date ?? 0 : 0);

export function itemOf(e: StoredEntry): FileItem {
  return { path: e.path, root: GCODES, modified: modified(e), size: e.size ?? 0, permissions: 'rw' };
}

function* allFiles(entries: StoredEntry[]): Generator<StoredFile> {
  for (const e of entries) {
    if (e.kind === 'file') yield e;
    else yield* allFiles(e.children);
  }
}

const THUMB_CACHE = 64;

export class FileMethods {
  private readonly thumbs = new Map<string, Thumbnail[]>();
  private readonly settings = new Map<string, Record<string, unknown>>();

  constructor(private readonly files: FileService) {}

  async list(root: unknown): Promise<Array<Omit<FileItem, 'root'>>> {
    if (root !== undefined && root !== GCODES) throw new RpcError(404, `Invalid root path (${String(root)})`);
    const entries = await this.files.list({ recursive: true });
    return [...allFiles(entries)].filter(isGcode).map((f) => ({ path: f.path, modified: f.date ?? 0, size: f.size ?? 0, permissions: 'rw' }));
  }

  roots(): Array<{ name: string; path: string; permissions: string }> {
    return [{ name: GCODES, path: GCODES, permissions: 'rw' }];
  }

  async directory(path: unknown, extended: boolean): Promise<Record<string, unknown>> {
    const rel = inGcodes(path ?? GCODES, { allowRoot: true });
    let children: StoredEntry[];
    if (rel === '') children = await this.files.list();
    else {
      const e = await this.files.entry(rel);
      if (e.kind !== 'folder') throw new RpcError(400, `Path is not a directory: ${String(path)}`);
      children = (e as StoredFolder).children;
    }
    const dirs = children.filter((c) => c.kind === 'folder').map((d) => ({ dirname: d.name, modified: 0, size: d.size, permissions: 'rw' }));
    const files: Array<Record<string, unknown>> = [];
    for (const f of children) {
      if (f.kind !== 'file') continue;
      const base = { filename: f.name, modified: f.date ?? 0, size: f.size ?? 0, permissions: 'rw' };
      files.push(extended && isGcode(f) ? { ...(await this.metadataOf(f)), ...base } : base);
    }
    const usage = await this.files.diskUsage();
    return { dirs, files, disk_usage: { total: usage.total, used: usage.total - usage.free, free: usage.free }, root_info: { name: GCODES, permissions: 'rw' } };
  }

  async metadata(filename: unknown): Promise<Record<string, unknown>> {
    if (typeof filename !== 'string' || !filename) throw badParam('filename is needed');
    const f = await this.files.file(filename.replace(/^\/+/, ''));
    if (!isGcode(f)) throw new RpcError(404, `Metadata not available for ${filename}`);
    return this.metadataOf(f);
  }

  /** Moonraker's metadata fields from Gantry's analysis (docs/reference/moonraker.md §4). */
  async metadataOf(f: StoredFile): Promise<Record<string, unknown>> {
    const a = f.meta.analysis as undefined | {
      estimatedPrintTime?: number; filament?: Record<string, { length: number }>; printingArea?: { maxZ: number | null };
      gantry?: { slicer?: { name: string | null; estimatedPrintTime: number | null; filamentLength: number[] | null } };
    };
    const out: Record<string, unknown> = { filename: f.path, size: f.size ?? 0, modified: f.date ?? 0, print_start_time: null, job_id: null };
    const slicer = a?.gantry?.slicer;
    if (slicer?.name) {
      const [name, ...version] = slicer.name.split(' ');
      out.slicer = name;
      if (version.length) out.slicer_version = version.join(' ');
    }
    const estimate = slicer?.estimatedPrintTime ?? a?.estimatedPrintTime;
    if (typeof estimate === 'number') out.estimated_time = Math.round(estimate);
    const filament = slicer?.filamentLength ? slicer.filamentLength.reduce((s, x) => s + x, 0)
      : a?.filament ? Object.values(a.filament).reduce((s, x) => s + (x.length ?? 0), 0) : undefined;
    if (typeof filament === 'number' && filament > 0) out.filament_total = Math.round(filament * 100) / 100;
    if (typeof a?.printingArea?.maxZ === 'number') out.object_height = a.printingArea.maxZ;
    Object.assign(out, await this.settingsOf(f));
    if (f.meta.thumbnail !== undefined) {
      const stem = f.name.replace(/\.[^.]*$/, '');
      out.thumbnails = (await this.thumbnailsOf(f)).map((t) => ({ width: t.width, height: t.height, size: t.png.length,
        relative_path: `.thumbs/${stem}-${t.width}x${t.height}.png` }));
    }
    return out;
  }

  private async settingsOf(f: StoredFile): Promise<Record<string, unknown>> {
    const key = `${f.path}@${f.size}:${f.date}`;
    let s = this.settings.get(key);
    if (!s) {
      s = await slicerSettings(await this.files.absolutePath(f.path), f.size ?? 0).catch(() => ({}));
      if (this.settings.size >= THUMB_CACHE) this.settings.delete(this.settings.keys().next().value!);
      this.settings.set(key, s);
    }
    return s;
  }

  private async thumbnailsOf(f: StoredFile): Promise<Thumbnail[]> {
    const key = `${f.path}@${f.size}:${f.date}`;
    let list = this.thumbs.get(key);
    if (!list) {
      list = await readThumbnails(await this.files.absolutePath(f.path));
      if (this.thumbs.size >= THUMB_CACHE) this.thumbs.delete(this.thumbs.keys().next().value!);
      this.thumbs.set(key, list);
    }
    return list;
  }

  /** The PNG for `<dir>/.thumbs/<stem>-<W>x<H>.png`, or undefined. */
  async thumbnail(rel: string): Promise<Buffer | undefined> {
    const m = /^(?:(.*)\/)?\.thumbs\/([^/]+)-(\d+)x(\d+)\.png$/.exec(rel);
    if (!m) return undefined;
    const [, dir, stem, w, h] = m;
    const siblings = dir ? await this.files.entry(dir).then((e) => (e.kind === 'folder' ? e.children : [])) : await this.files.list();
    for (const e of siblings) {
      if (e.kind !== 'file' || e.name.replace(/\.[^.]*$/, '') !== stem || e.meta.thumbnail === undefined) continue;
      const t = (await this.thumbnailsOf(e)).find((x) => x.width === Number(w) && x.height === Number(h));
      if (t) return t.png;
    }
    return undefined;
  }

  async postDirectory(path: unknown): Promise<Record<string, unknown>> {
    const rel = inGcodes(path);
    const slash = rel.lastIndexOf('/');
    const folder = await this.files.createFolder(slash < 0 ? undefined : rel.slice(0, slash), rel.slice(slash + 1));
    return { item: itemOf(folder), action: 'create_dir' };
  }

  async deleteDirectory(path: unknown, force: boolean): Promise<Record<string, unknown>> {
    const rel = inGcodes(path);
    const e = await this.files.entry(rel);
    if (e.kind !== 'folder') throw badParam(`Not a directory: ${String(path)}`);
    if (!force && e.children.length > 0) throw badParam(`Directory not empty (${String(path)})`);
    await this.files.remove(rel);
    return { item: { path: rel, root: GCODES, modified: 0, size: 0, permissions: '' }, action: 'delete_dir' };
  }

  async deleteFile(path: unknown): Promise<Record<string, unknown>> {
    const rel = inGcodes(path);
    const e = await this.files.entry(rel);
    if (e.kind !== 'file') throw badParam(`Not a file: ${String(path)}`);
    await this.files.remove(rel);
    return { item: { path: rel, root: GCODES, modified: 0, size: 0, permissions: '' }, action: 'delete_file' };
  }

  async transfer(source: unknown, dest: unknown, mode: 'copy' | 'move'): Promise<Record<string, unknown>> {
    const from = inGcodes(source);
    const to = inGcodes(dest);
    const before = await this.files.entry(from);
    const after = await this.files.copyOrMove(from, to, mode);
    const dir = before.kind === 'folder';
    if (mode === 'move') return { item: itemOf(after), source_item: { path: from, root: GCODES }, action: dir ? 'move_dir' : 'move_file' };
    return { item: itemOf(after), action: dir ? 'create_dir' : 'create_file' };
  }
}
