// Printer profiles: the built-in `_default` plus one YAML file per profile, the default and the current selection.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { removeFile, writeFileAtomic } from '../../core/atomic-file.ts';
import { deepMerge } from '../../core/deep-merge.ts';
import { SerialQueue } from '../../core/serial-queue.ts';
import { isPlain, type Plain } from '../../core/plain.ts';
import { conflict, invalid } from '../../core/errors.ts';
import type { EventBus } from '../../core/event-bus.ts';
import type { Logger } from '../../core/logger.ts';
import type { ConfigSlice } from '../../config/config-slice.ts';
import { DEFAULT_PROFILE_ID, builtinDefaultProfile, normalizeProfile, sanitizeProfileId, type PrinterProfile } from './printer-profile-shape.ts';
import { shown } from '../../core/text.ts';

// The shape is imported from here by most of the host; it lives in printer-profile-shape.ts.

const FILE_SUFFIX = '.profile';

/** Stored profiles are shared read-only (the printer service reads one on every request); no defensive copies. */
function deepFreeze<T>(o: T): T {
  if (typeof o === 'object' && o !== null && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

export interface SaveOptions {
  /** Make this the default profile. */
  makeDefault?: boolean;
  /** Replace an existing profile of that id (add refuses by default). */
  allowOverwrite?: boolean;
}

/**
 * Owns the profiles folder. Reads are synchronous from a cache filled at start (the engine asks for the current
 * profile on every jog); writes go to disk atomically before the cache changes.
 */
export class PrinterProfiles {
  private profiles = new Map<string, PrinterProfile>();
  private selected: string | null = null;
  private modifiedAt = Date.now();
  private unsubscribe: (() => void) | undefined;
  // Changes run one at a time, each reading what is there inside its turn: at once, eight adds of one id all went in,
  // and of two updates of one profile the second wrote over the first's change.
  private readonly changes = new SerialQueue();

  constructor(
    private readonly folder: string,
    private readonly config: ConfigSlice<'printerProfiles'>,
    private readonly events: EventBus,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    this.profiles.clear();
    this.profiles.set(DEFAULT_PROFILE_ID, deepFreeze(builtinDefaultProfile()));
    let names: string[] = [];
    try {
      names = await readdir(this.folder);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    for (const name of names) {
      if (!name.endsWith(FILE_SUFFIX) || name.startsWith('.')) continue;
      const id = name.slice(0, -FILE_SUFFIX.length);
      try {
        const raw = parse(await readFile(join(this.folder, name), 'utf8')) as unknown;
        // Files written by hand (or by an older version) may lack keys: fill them from the built-in default.
        const merged = deepMerge(builtinDefaultProfile(), isPlain(raw) ? raw : {}) as Plain;
        merged.id = id;
        this.profiles.set(id, deepFreeze(normalizeProfile(merged)));
      } catch (err) {
        this.logger.warn({ err, file: name }, 'ignoring unreadable printer profile');
      }
    }
    this.modifiedAt = Date.now();
    // The default may also change through the settings API.
    this.unsubscribe = this.config.onChange((next, prev) => {
      if (next.printerProfiles.default !== prev.printerProfiles.default) this.modifiedAt = Date.now();
    });
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** All profiles (frozen), `_default` always included. */
  list(): PrinterProfile[] {
    return [...this.profiles.values()];
  }

  get(id: string): PrinterProfile | undefined {
    return this.profiles.get(id);
  }

  exists(id: string): boolean {
    return this.profiles.has(id);
  }

  /** Id of the default profile (`printerProfiles.default`, falling back to `_default` when that profile is gone). */
  get defaultId(): string {
    const configured = this.config.get().printerProfiles.default;
    return configured && this.profiles.has(configured) ? configured : DEFAULT_PROFILE_ID;
  }

  getDefault(): PrinterProfile {
    return this.get(this.defaultId) ?? builtinDefaultProfile();
  }

  /** The printer service selects the profile it connects with and deselects it on disconnect. */
  select(id: string | null): void {
    const next = id !== null && this.profiles.has(id) ? id : null;
    if (next !== this.selected) this.modifiedAt = Date.now();
    this.selected = next;
  }

  /** Id of the profile in use by the connection, or null when not connected. */
  get selectedId(): string | null {
    return this.selected !== null && this.profiles.has(this.selected) ? this.selected : null;
  }

  /** The profile the API reports as `current`: the connected one, else the default. */
  getCurrentOrDefault(): PrinterProfile {
    return this.get(this.selectedId ?? this.defaultId) ?? builtinDefaultProfile();
  }

  /** Milliseconds timestamp of the last change (Last-Modified of the list). */
  get lastModified(): number {
    return this.modifiedAt;
  }

  /** Saves a complete profile (`id` or `name` required); fills nothing in: callers merge their base first. */
  save(profile: Plain, opts: SaveOptions = {}): Promise<PrinterProfile> {
    return this.changes.run(() => this.write(profile, opts));
  }

  private async write(profile: Plain, opts: SaveOptions): Promise<PrinterProfile> {
    const rawId = typeof profile.id === 'string' && profile.id ? profile.id : typeof profile.name === 'string' ? profile.name : '';
    const id = sanitizeProfileId(rawId);
    // A leading dot would hide the file from the next start's scan.
    if (!id || id.startsWith('.')) throw invalid('profile is invalid');
    const normalized = normalizeProfile({ ...profile, id });
    const existed = this.profiles.has(id) && (id !== DEFAULT_PROFILE_ID || await this.hasFile(id));
    if (existed && !opts.allowOverwrite) throw invalid('Profile already exists and overwriting was not allowed');
    const { id: _id, ...stored } = normalized;
    void _id;
    await writeFileAtomic(this.fileOf(id), stringify(stored));
    this.profiles.set(id, deepFreeze(normalized));
    this.modifiedAt = Date.now();
    if (opts.makeDefault) await this.makeDefault(id);
    this.events.emit(existed ? 'PrinterProfileModified' : 'PrinterProfileAdded', { identifier: id });
    return this.profiles.get(id)!;
  }

  /** A new profile: `patch` merged onto `basedOn` (or the default profile). */
  add(patch: Plain, opts: { basedOn?: string; makeDefault?: boolean } = {}): Promise<PrinterProfile> {
    return this.changes.run(() => {
      const base = (opts.basedOn ? this.get(opts.basedOn) : undefined) ?? this.getDefault();
      const { id: _i, name: _n, ...rest } = base;
      void _i; void _n;
      return this.write(deepMerge(rest, patch) as Plain, { makeDefault: opts.makeDefault, allowOverwrite: false });
    });
  }

  /** Deep-merges `patch` into an existing profile; the id cannot change. */
  update(id: string, patch: Plain, opts: { makeDefault?: boolean } = {}): Promise<PrinterProfile> {
    return this.changes.run(() => {
      const current = this.profiles.get(id);
      if (!current) throw invalid(`Unknown printer profile ${shown(id)}`);
      const merged = deepMerge(current, patch) as Plain;
      merged.id = id;
      return this.write(merged, { makeDefault: opts.makeDefault, allowOverwrite: true });
    });
  }

  /** Deletes a profile; unknown ids are a no-op. The selected and the default profile cannot be deleted. */
  remove(id: string): Promise<void> {
    return this.changes.run(() => this.delete(id));
  }

  private async delete(id: string): Promise<void> {
    if (id === this.selectedId) throw conflict('Cannot delete currently selected profile');
    if (id === this.defaultId) throw conflict('Cannot delete default profile');
    if (!this.profiles.has(id)) return;
    await removeFile(this.fileOf(id));
    // `_default` is built in: deleting its file restores the original.
    if (id === DEFAULT_PROFILE_ID) this.profiles.set(id, deepFreeze(builtinDefaultProfile()));
    else this.profiles.delete(id);
    this.modifiedAt = Date.now();
    this.events.emit('PrinterProfileDeleted', { identifier: id });
  }

  setDefault(id: string): Promise<void> {
    return this.changes.run(() => this.makeDefault(id));
  }

  private async makeDefault(id: string): Promise<void> {
    if (!this.profiles.has(id)) throw invalid(`Unknown printer profile ${shown(id)}`);
    if (this.config.get().printerProfiles.default === id) return;
    await this.config.patch({ printerProfiles: { default: id } });
    this.modifiedAt = Date.now();
  }

  private fileOf(id: string): string {
    return join(this.folder, id + FILE_SUFFIX);
  }

  private async hasFile(id: string): Promise<boolean> {
    return stat(this.fileOf(id)).then(() => true, () => false);
  }
}
