// Pure walks over stored entry trees: the files below a folder, how deep it goes, a listing cut to a depth.
import type { StoredEntry, StoredFolder } from './types.ts';

/** Every file path below a folder entry (with its children). */
export function filesOf(folder: StoredFolder): string[] {
  const out: string[] = [];
  const visit = (entries: StoredEntry[]) => {
    for (const e of entries) {
      if (e.kind === 'file') out.push(e.path);
      else visit(e.children);
    }
  };
  visit(folder.children);
  return out;
}

/** How many names below an entry its deepest content adds to a path (0 for a file or an empty folder). */
export function heightOf(e: StoredEntry): number {
  if (e.kind === 'file' || e.children.length === 0) return 0;
  return 1 + e.children.reduce((h, c) => Math.max(h, heightOf(c)), 0);
}

/** The entries with their folders' children kept `depth` levels down (0: none, Infinity: all). */
export function trimDepth(entries: StoredEntry[], depth: number): StoredEntry[] {
  if (depth <= 0) return entries.map((e) => (e.kind === 'folder' ? { ...e, children: [] } : e));
  if (depth === Infinity) return entries;
  return entries.map((e) => (e.kind === 'folder' ? { ...e, children: trimDepth(e.children, depth - 1) } : e));
}
