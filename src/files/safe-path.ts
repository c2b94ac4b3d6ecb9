// Path safety for the uploads folder: name sanitising (OctoPrint's rules), validation of paths that come from users,
// and the last check that a resolved path is still inside the root. Nothing a client sends may escape the root.
import { resolve, sep } from 'node:path';
import { invalid, notFound, type DomainError } from '../core/errors.ts';
import { withoutTrailing } from '../core/text.ts';

// Characters illegal on at least one common file system, plus every control character (NUL included).
// eslint-disable-next-line no-control-regex
const ILLEGAL = /[\\/:*?"<>|\u0000-\u001f\u007f]/g;

/**
 * Sanitises one path component: illegal characters removed, leading dots stripped (no hidden files, no `..`).
 * With `reallyUniversal` only ASCII letters, digits and `-_.()` survive, and spaces become `_`.
 * Returns '' when nothing usable is left.
 */
export function sanitizeName(name: string, reallyUniversal = false): string {
  let out = name.normalize('NFC').replace(ILLEGAL, '');
  if (reallyUniversal) {
    out = out.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/\s+/g, '_').replace(/[^A-Za-z0-9\-_.()]/g, '');
  }
  out = out.replace(/^\.+/, '').trim();
  return out.replace(/^\.+/, '');
}

/**
 * Splits a path given by a client (URL or form field) into components that are each already in sanitised form.
 * Anything else (`..`, `.`, empty components inside, NUL, back-slashes, names that would sanitise differently) is
 * "not found": a path that could not have been produced by this server does not name anything.
 */
export function parseStoredPath(path: string): string[] {
  const trimmed = withoutTrailing(path.replace(/^\/+/, ''), '/');
  if (trimmed === '') return [];
  const parts = trimmed.split('/');
  for (const p of parts) {
    if (p === '' || p === '.' || p === '..' || sanitizeName(p) !== p) throw notFound('File not found');
  }
  return parts;
}

/**
 * Turns a requested upload/destination path into sanitised components. Leading slashes are ignored (paths are
 * always relative to the uploads folder); `.`/`..` components are refused rather than silently dropped.
 */
export function sanitizePath(path: string, reallyUniversal = false): string[] {
  const trimmed = withoutTrailing(path.replace(/\\/g, '/').replace(/^\/+/, ''), '/');
  if (trimmed === '') return [];
  const out: string[] = [];
  for (const raw of trimmed.split('/')) {
    if (raw === '' ) continue;
    if (raw === '.' || raw === '..') throw invalid('Path must not contain "." or ".." components');
    const s = sanitizeName(raw, reallyUniversal);
    if (!s) throw invalid('Path contains a component that is empty after sanitising');
    out.push(s);
  }
  return out;
}

/** What ext4, XFS, btrfs and most others allow in one name (bytes, not characters). */
export const MAX_NAME_BYTES = 255;

/**
 * The most names a stored path has (63 folders and a file). Listings, their renderings and the JSON answers walk the
 * tree recursively; a tree 2,000 folders deep (a path still under Linux's 4,096 bytes) overflowed the stack, so every
 * file listing answered 500 from then on.
 */
export const MAX_PATH_PARTS = 64;

export const tooDeep = (): DomainError => invalid(`Folders nest too deeply (at most ${MAX_PATH_PARTS} names in a path)`);

/**
 * Absolute on-disk path of components under root; throws if the result would leave the root, and INVALID_REQUEST for a
 * name the file system could not hold (it would fail later as ENAMETOOLONG) or a path nested too deeply.
 */
export function resolveInside(root: string, parts: readonly string[]): string {
  if (parts.length > MAX_PATH_PARTS) throw tooDeep();
  for (const p of parts) {
    if (Buffer.byteLength(p) > MAX_NAME_BYTES) throw invalid(`File or folder name too long (at most ${MAX_NAME_BYTES} bytes): ${p.slice(0, 40)}…`);
  }
  const base = resolve(root);
  const full = resolve(base, ...parts);
  if (full !== base && !full.startsWith(base + sep)) throw notFound('File not found');
  return full;
}

export const joinPath = (parts: readonly string[]): string => parts.join('/');

/** Splits 'a/b/c.gcode' into ['a','b'] and 'c.gcode'. */
export function splitParent(parts: readonly string[]): { parent: string[]; name: string } {
  return { parent: parts.slice(0, -1), name: parts[parts.length - 1] ?? '' };
}
