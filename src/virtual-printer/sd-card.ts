// The simulated SD card: files in memory or in a folder, FAT-style 8.3 names, case-insensitive lookup.
import { readdir, readFile, writeFile, unlink, stat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';

export interface SdEntry {
  /** The 8.3 name the firmware lists (`BENCHY~1.GCO`). */
  dosName: string;
  /** The name the file was written with. */
  longName: string;
  size: number;
}

/** Where the card's bytes live. */
export interface SdStorage {
  list(): Promise<{ name: string; size: number }[]>;
  read(name: string): Promise<Buffer>;
  write(name: string, data: Buffer): Promise<void>;
  remove(name: string): Promise<void>;
}

export class MemorySdStorage implements SdStorage {
  private files = new Map<string, Buffer>();
  async list() {
    return [...this.files].map(([name, data]) => ({ name, size: data.length }));
  }
  async read(name: string) {
    const d = this.files.get(name);
    if (!d) throw new Error(`no such file ${name}`);
    return d;
  }
  async write(name: string, data: Buffer) {
    this.files.set(name, data);
  }
  async remove(name: string) {
    this.files.delete(name);
  }
}

/** A real folder, so files survive restarts and can be dropped in by hand. Names never contain a path separator. */
export class FolderSdStorage implements SdStorage {
  constructor(private readonly folder: string) {}
  async list() {
    await mkdir(this.folder, { recursive: true });
    const out: { name: string; size: number }[] = [];
    for (const name of await readdir(this.folder)) {
      const st = await stat(join(this.folder, name)).catch(() => null);
      if (st?.isFile()) out.push({ name, size: st.size });
    }
    return out;
  }
  async read(name: string) {
    return readFile(join(this.folder, name));
  }
  async write(name: string, data: Buffer) {
    await mkdir(this.folder, { recursive: true });
    await writeFile(join(this.folder, name), data);
  }
  async remove(name: string) {
    await unlink(join(this.folder, name)).catch(() => {});
  }
}

/** A FAT short name: upper case, 6 characters + `~n` when the long name does not fit 8.3. */
function shortName(long: string, taken: Set<string>): string {
  const dot = long.lastIndexOf('.');
  const stem = (dot > 0 ? long.slice(0, dot) : long).toUpperCase().replace(/[^A-Z0-9_\-~]/g, '');
  const ext = (dot > 0 ? long.slice(dot + 1) : '').toUpperCase().replace(/[^A-Z0-9]/g, '').slice(0, 3);
  const fits = stem.length > 0 && stem.length <= 8 && long.toUpperCase() === (ext ? `${stem}.${ext}` : stem);
  if (fits) return ext ? `${stem}.${ext}` : stem;
  for (let n = 1; ; n++) {
    const suffix = `~${n}`;
    const cand = `${(stem || 'FILE').slice(0, 8 - suffix.length)}${suffix}${ext ? '.' + ext : ''}`;
    if (!taken.has(cand)) return cand;
  }
}

/** Only a plain file name may reach the storage (the host could send `M28 ../x`). */
export function safeSdName(raw: string): string | null {
  const name = raw.trim().replace(/^\/+/, '');
  if (!name || name.includes('/') || name.includes('\\') || name === '.' || name === '..') return null;
  return name;
}

export class SdCard {
  ready = true;
  /** The card's lock switch: files open for reading, but M28 cannot open one for writing. */
  writeProtected = false;

  constructor(readonly storage: SdStorage) {}

  async entries(): Promise<SdEntry[]> {
    const files = (await this.storage.list()).sort((a, b) => a.name.localeCompare(b.name));
    const taken = new Set<string>();
    return files.map((f) => {
      const dosName = shortName(f.name, taken);
      taken.add(dosName);
      return { dosName, longName: f.name, size: f.size };
    });
  }

  /** Finds a file by its short or long name, case-insensitively, like FAT. */
  async find(name: string): Promise<SdEntry | undefined> {
    const want = name.replace(/^\/+/, '').toLowerCase();
    return (await this.entries()).find((e) => e.dosName.toLowerCase() === want || e.longName.toLowerCase() === want);
  }
}
