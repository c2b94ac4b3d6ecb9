// Slicing profiles on disk: one YAML file per profile in <slicingProfiles>/<slicer>/<key>.profile, holding only overrides.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { removeFile, writeFileAtomic } from '../core/atomic-file.ts';
import { invalid } from '../core/errors.ts';
import type { ProfileData } from './types.ts';
import { shown } from '../core/text.ts';

export interface StoredProfile {
  key: string;
  displayName: string;
  description: string;
  /** Only the settings that differ from the slicer's defaults. */
  data: ProfileData;
}

export const PROFILE_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

export function checkProfileKey(key: string): void {
  // Keys become file names: no separators, no dot-dot, nothing hidden.
  if (!PROFILE_KEY_PATTERN.test(key) || key.includes('..')) throw invalid(`Invalid profile key: ${shown(key)}`);
}

export class ProfileStore {
  constructor(private readonly root: string) {}

  private file(slicer: string, key: string): string {
    checkProfileKey(key);
    return join(this.root, slicer, `${key}.profile`);
  }

  async list(slicer: string): Promise<StoredProfile[]> {
    let names: string[];
    try {
      names = await readdir(join(this.root, slicer));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const out: StoredProfile[] = [];
    for (const n of names.sort()) {
      if (!n.endsWith('.profile') || n.startsWith('.')) continue;
      const p = await this.get(slicer, n.slice(0, -'.profile'.length)).catch(() => undefined);
      if (p) out.push(p);
    }
    return out;
  }

  async get(slicer: string, key: string): Promise<StoredProfile | undefined> {
    let text: string;
    try {
      text = await readFile(this.file(slicer, key), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    const doc = (parse(text) ?? {}) as Partial<StoredProfile>;
    const data: ProfileData = {};
    for (const [k, v] of Object.entries(doc.data ?? {})) data[k] = String(v);
    return { key, displayName: String(doc.displayName ?? key), description: String(doc.description ?? ''), data };
  }

  async save(slicer: string, profile: StoredProfile): Promise<void> {
    const { key, ...rest } = profile;
    await writeFileAtomic(this.file(slicer, key), stringify(rest));
  }

  /** True if a file was removed. */
  remove(slicer: string, key: string): Promise<boolean> {
    return removeFile(this.file(slicer, key));
  }
}
