// Slicing service: the slicer registry, profiles (defaults + overrides) and slicing jobs with progress, events and cancel.
import type { ConfigSlice } from '../config/config-slice.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import { SerialQueue } from '../core/serial-queue.ts';
import { DomainError, invalid, notFound } from '../core/errors.ts';
import type { ProfileStore} from './profile-store.ts';
import { checkProfileKey, type StoredProfile } from './profile-store.ts';
import type { ProfileData, SlicerAdapter, SlicingPrinter } from './types.ts';
import { Listeners } from '../core/listeners.ts';
import { shown } from '../core/text.ts';

export interface SlicerInfo {
  key: string;
  displayName: string;
  sameDevice: boolean;
  configured: boolean;
  default: boolean;
  sourceExtensions: readonly string[];
  destinationExtension: string;
  profiles: ProfileInfo[];
}

export interface ProfileInfo {
  key: string;
  displayName: string;
  description: string;
  default: boolean;
}

export interface FullProfile extends ProfileInfo {
  /** Defaults merged with the stored overrides. */
  data: ProfileData;
}

export interface SliceJob {
  slicer: string;
  source: { location: string; path: string; file: string };
  dest: { location: string; path: string; file: string };
  profile?: string;
  /** Per-request overrides (`profile.<key>` parameters). */
  overrides?: Record<string, unknown>;
  printer?: SlicingPrinter;
  position?: { x: number; y: number };
}

export type SlicingProgressListener = (p: {
  slicer: string; source_location: string; source_path: string; dest_location: string; dest_path: string; progress: number;
}) => void;

/** Values from JSON (numbers, booleans) as the slicer's string settings. */
export function toSettings(input: Record<string, unknown> | undefined): ProfileData {
  const out: ProfileData = {};
  for (const [k, v] of Object.entries(input ?? {})) {
    if (!/^[a-z0-9_]+$/.test(k)) throw invalid(`Invalid slicer setting name: ${shown(k)}`);
    if (v === null || v === undefined) continue;
    if (typeof v === 'boolean') out[k] = v ? '1' : '0';
    else if (typeof v === 'number' || typeof v === 'string') out[k] = String(v);
    else if (Array.isArray(v) && v.every((x) => typeof x === 'number' || typeof x === 'string')) out[k] = v.join(',');
    else throw invalid(`Invalid value for slicer setting ${shown(k)}`);
    // Settings end up as `key = value` lines: a line break would smuggle in further settings.
    if (/[\r\n]/.test(out[k])) throw invalid(`Invalid value for slicer setting ${shown(k)}: line breaks are not allowed`);
  }
  return out;
}

export class SlicingService {
  private readonly adapters = new Map<string, SlicerAdapter>();
  private readonly configured = new Map<string, boolean>();
  private readonly progressListeners: Listeners<Parameters<SlicingProgressListener>>;
  private readonly running = new Map<string, AbortController>();
  /** Slicing jobs, one at a time (slicers use every core they get). */
  private readonly jobs = new SerialQueue();
  // Profile changes run one at a time, each reading the stored profile inside its turn: parallel PATCHes of one profile
  // each merged onto the same stored copy, and the last written lost the others' settings.
  private readonly profileChanges = new SerialQueue();

  constructor(
    adapters: SlicerAdapter[],
    private readonly store: ProfileStore,
    private readonly config: ConfigSlice<'slicing'>,
    private readonly events: EventBus,
    private readonly logger: Logger,
  ) {
    this.progressListeners = new Listeners((err) => logger.warn({ err }, 'slicing progress listener failed'));
    for (const a of adapters) this.adapters.set(a.key, a);
  }

  private probing: Promise<void> | undefined;

  /** Probing only looks for each slicer's binary, so start-up can wait for it. */
  async start(): Promise<void> {
    await this.ready();
  }

  /** Resolves once the slicers have been probed. */
  ready(): Promise<void> {
    this.probing ??= this.refresh();
    return this.probing;
  }

  async stop(): Promise<void> {
    for (const c of this.running.values()) c.abort();
  }

  /** Re-probes every slicer (after its binary path changed). */
  async refresh(): Promise<void> {
    for (const a of this.adapters.values()) {
      const ok = await a.probe();
      this.configured.set(a.key, ok);
      if (!ok) this.logger.info({ slicer: a.key }, 'slicer not installed or not answering; listed as not configured');
    }
  }

  onProgress(fn: SlicingProgressListener): () => void {
    return this.progressListeners.add(fn);
  }

  isConfigured(key: string): boolean {
    return this.configured.get(key) === true;
  }

  /** The adapter for a known slicer (configured or not); NOT_FOUND otherwise. */
  adapter(key: string): SlicerAdapter {
    const a = this.adapters.get(key);
    if (!a) throw notFound(`Unknown slicer: ${key}`);
    return a;
  }

  private configuredAdapter(key: string): SlicerAdapter {
    const a = this.adapter(key);
    if (!this.isConfigured(key)) throw notFound(`Slicer ${key} is not configured`);
    return a;
  }

  defaultSlicer(): string | undefined {
    const wanted = this.config.get().slicing.defaultSlicer;
    if (wanted && this.adapters.has(wanted)) return wanted;
    for (const a of this.adapters.values()) if (this.isConfigured(a.key)) return a.key;
    return undefined;
  }

  /** Slicer for a model file extension, if one is configured. */
  slicerForExtension(ext: string): string | undefined {
    const e = ext.toLowerCase();
    const def = this.defaultSlicer();
    if (def && this.adapter(def).sourceExtensions.includes(e) && this.isConfigured(def)) return def;
    for (const a of this.adapters.values()) if (this.isConfigured(a.key) && a.sourceExtensions.includes(e)) return a.key;
    return undefined;
  }

  /** Every model extension some configured slicer accepts (uploads accept these). */
  modelExtensions(): string[] {
    const out = new Set<string>();
    for (const a of this.adapters.values()) if (this.isConfigured(a.key)) for (const e of a.sourceExtensions) out.add(e);
    return [...out];
  }

  private defaultProfileKey(slicer: string): string | undefined {
    return this.config.get().slicing.defaultProfiles[slicer];
  }

  private info(slicer: string, p: StoredProfile): ProfileInfo {
    return { key: p.key, displayName: p.displayName, description: p.description, default: this.defaultProfileKey(slicer) === p.key };
  }

  async listSlicers(): Promise<SlicerInfo[]> {
    await this.ready();
    const def = this.defaultSlicer();
    const out: SlicerInfo[] = [];
    for (const a of this.adapters.values()) {
      const profiles = (await this.store.list(a.key)).map((p) => this.info(a.key, p));
      out.push({
        key: a.key, displayName: a.displayName, sameDevice: a.sameDevice, configured: this.isConfigured(a.key),
        default: a.key === def, sourceExtensions: a.sourceExtensions, destinationExtension: a.destinationExtension, profiles,
      });
    }
    return out;
  }

  async listProfiles(slicer: string): Promise<ProfileInfo[]> {
    await this.ready();
    this.configuredAdapter(slicer);
    return (await this.store.list(slicer)).map((p) => this.info(slicer, p));
  }

  async getProfile(slicer: string, key: string): Promise<FullProfile> {
    await this.ready();
    const a = this.configuredAdapter(slicer);
    checkProfileKey(key);
    const p = await this.store.get(slicer, key);
    if (!p) throw notFound(`Unknown profile: ${key}`);
    return { ...this.info(slicer, p), data: { ...(await a.defaults()), ...p.data } };
  }

  /** Creates or overwrites a profile; stores only the settings that differ from the slicer's defaults. */
  saveProfile(slicer: string, key: string, body: { displayName?: string; description?: string; data?: Record<string, unknown>; default?: boolean }):
    Promise<ProfileInfo> {
    return this.profileChanges.run(async () => {
      await this.ready();
      const a = this.adapter(slicer);
      checkProfileKey(key);
      const existed = (await this.store.get(slicer, key)) !== undefined;
      const data = await this.overridesOnly(a, toSettings(body.data));
      const p: StoredProfile = { key, displayName: body.displayName ?? key, description: body.description ?? '', data };
      await this.store.save(slicer, p);
      if (body.default) await this.setDefaultProfile(slicer, key);
      this.events.emit(existed ? 'SlicingProfileModified' : 'SlicingProfileAdded', { slicer, profile: key });
      return this.info(slicer, p);
    });
  }

  /** Applies an update request: data overrides merge into the stored ones. */
  updateProfile(slicer: string, key: string, body: { displayName?: string; description?: string; data?: Record<string, unknown>; default?: boolean }):
    Promise<ProfileInfo> {
    return this.profileChanges.run(async () => {
      await this.ready();
      const a = this.adapter(slicer);
      checkProfileKey(key);
      const p = await this.store.get(slicer, key);
      if (!p) throw notFound(`Unknown profile: ${key}`);
      const next: StoredProfile = {
        key,
        displayName: body.displayName ?? p.displayName,
        description: body.description ?? p.description,
        data: body.data ? await this.overridesOnly(a, { ...p.data, ...toSettings(body.data) }) : p.data,
      };
      await this.store.save(slicer, next);
      if (body.default) await this.setDefaultProfile(slicer, key);
      this.events.emit('SlicingProfileModified', { slicer, profile: key });
      return this.info(slicer, next);
    });
  }

  deleteProfile(slicer: string, key: string): Promise<void> {
    return this.profileChanges.run(async () => {
      this.adapter(slicer);
      checkProfileKey(key);
      if (await this.store.remove(slicer, key)) {
        if (this.defaultProfileKey(slicer) === key) {
          await this.config.unset(['slicing', 'defaultProfiles', slicer]);
        }
        this.events.emit('SlicingProfileDeleted', { slicer, profile: key });
      }
    });
  }

  async importNative(slicer: string, key: string, text: string, meta: { displayName?: string; description?: string; default?: boolean }): Promise<ProfileInfo> {
    const a = this.adapter(slicer);
    return this.saveProfile(slicer, key, { ...meta, data: a.parseNative(text) });
  }

  private async setDefaultProfile(slicer: string, key: string): Promise<void> {
    await this.config.patch({ slicing: { defaultProfiles: { [slicer]: key } } });
  }

  private async overridesOnly(a: SlicerAdapter, data: ProfileData): Promise<ProfileData> {
    if (!this.isConfigured(a.key)) return data;
    const defaults = await a.defaults();
    const out: ProfileData = {};
    for (const [k, v] of Object.entries(data)) if (defaults[k] !== v) out[k] = v;
    return out;
  }

  /**
   * Slices one model. Resolves when the G-code is written; events and progress listeners follow the job.
   * Jobs run one at a time (slicers use every core they get).
   */
  slice(job: SliceJob, modelPath: string, outputPath: string): { done: Promise<void>; cancel(): void } {
    const a = this.configuredAdapter(job.slicer);
    const controller = new AbortController();
    const id = `${job.dest.location}:${job.dest.path}`;
    const payload = {
      slicer: job.slicer, stl: job.source.file, stl_location: job.source.location, gcode: job.dest.file, gcode_location: job.dest.location,
    };
    const run = async () => {
      let settings: ProfileData = await a.defaults();
      const profileKey = job.profile ?? this.defaultProfileKey(job.slicer);
      if (profileKey) {
        const p = await this.store.get(job.slicer, profileKey);
        if (!p) throw notFound(`Unknown profile: ${profileKey}`);
        settings = { ...settings, ...p.data };
      }
      settings = { ...settings, ...toSettings(job.overrides) };
      this.running.set(id, controller);
      const started = performance.now();
      this.events.emit('SlicingStarted', { ...payload, progressAvailable: true });
      try {
        await a.slice({
          modelPath, outputPath, settings, printer: job.printer, position: job.position, signal: controller.signal,
          onProgress: (f) => this.progress(job, f * 100),
        });
        this.events.emit('SlicingDone', { ...payload, time: (performance.now() - started) / 1000 });
      } catch (err) {
        if (controller.signal.aborted) {
          this.events.emit('SlicingCancelled', payload);
          throw new DomainError('CONFLICT', 'Slicing was cancelled', { cause: err });
        }
        const reason = err instanceof Error ? err.message : String(err);
        this.events.emit('SlicingFailed', { ...payload, reason });
        throw err;
      } finally {
        this.running.delete(id);
      }
    };
    const done = this.jobs.run(run);
    return { done, cancel: () => controller.abort() };
  }

  /** Cancels the job writing to this destination, if one runs. */
  cancel(destLocation: string, destPath: string): boolean {
    const c = this.running.get(`${destLocation}:${destPath}`);
    c?.abort();
    return c !== undefined;
  }

  private progress(job: SliceJob, percent: number): void {
    const p = {
      slicer: job.slicer, source_location: job.source.location, source_path: job.source.path,
      dest_location: job.dest.location, dest_path: job.dest.path, progress: percent,
    };
    this.progressListeners.emit(p);
  }
}
