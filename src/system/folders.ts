// The configurable folders (uploads, timelapse, timelapse_tmp, logs, watched): where each one is, and checking (and
// creating) a folder a settings change names before it is saved.
import { mkdir, access, constants } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { homedir } from 'node:os';
import type { Config } from '../config/schema.ts';
import type { Paths } from '../config/paths.ts';
import { invalid } from '../core/errors.ts';

/** API name, config key, and where the folder is when the setting is unset. */
const FOLDERS: Array<[api: string, configKey: keyof Config['folder'], fallback: (p: Paths) => string]> = [
  ['uploads', 'uploads', (p) => p.uploads],
  ['timelapse', 'timelapse', (p) => p.timelapse],
  ['timelapseTmp', 'timelapse_tmp', (p) => join(p.timelapse, 'tmp')],
  ['logs', 'logs', (p) => p.logs],
  ['watched', 'watched', (p) => p.watched],
];

const expandHome = (p: string) => (p === '~' || p.startsWith('~/') ? join(homedir(), p.slice(1)) : p);

/** Every folder by its API name, as an absolute path (a relative setting is taken from the base folder). */
export function folderPaths(config: Config, paths: Paths): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [api, key, fallback] of FOLDERS) {
    const configured = config.folder[key];
    out[api] = configured ? resolve(paths.base, expandHome(configured)) : fallback(paths);
  }
  return out;
}

/**
 * Checks the folders of a config patch (`folder` section, config keys): each must exist or be creatable, and be
 * writable. One equal to its default is stored as unset (null), so the default keeps following the base folder.
 */
export async function normaliseFolders(folder: Record<string, unknown>, paths: Paths): Promise<void> {
  for (const [, key, fallback] of FOLDERS) {
    const value = folder[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || value.trim() === '') throw invalid('At least one of the configured folders is invalid');
    const abs = resolve(paths.base, expandHome(value));
    if (abs === fallback(paths)) {
      folder[key] = null;
      continue;
    }
    try {
      await mkdir(abs, { recursive: true });
      await access(abs, constants.W_OK);
    } catch {
      throw invalid('At least one of the configured folders is invalid');
    }
  }
}
