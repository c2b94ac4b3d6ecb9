// Cancelling one object of a print (Cancelobject compatible, docs/reference/plugins.md §2): the object list of the
// selected file (from its analysis), the plugin's list entries, pushes and events, and the line filter the job
// streamer runs a print's lines through (skip-filter.ts), or `M486 P<index>` when the firmware cancels itself.
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import type { Config } from '../config/schema.ts';
import { ObjectSkipFilter } from './skip-filter.ts';
import type { FileObject } from './object-outlines.ts';

/**
 * The job streamer's filter as it takes it (printer/job/job-stream.ts's JobLineFilter, structurally: objects/ may not
 * import printer/): a function of each file line, and the same filter for a link thread to run.
 */
export interface LinkLineFilter {
  plan(): { before: string[]; after: string[]; cancelled: number[] };
  observe(line: string, end: number): void;
  route(cancel: ((id: number) => void) | null): void;
}
export type JobLineFilter = ((line: string, end: number) => readonly string[]) & { readonly inLink?: LinkLineFilter };

export type CancelObjectSettings = Config['plugins']['cancelobject'];

/** One entry of the plugin's list, exactly its keys (§2.2; OctoPod requires id, object, cancelled, active, ignore). */
export interface ObjectEntry {
  object: string; id: number; active: boolean; cancelled: boolean; ignore: boolean;
  max_x: number; min_x: number; max_y: number; min_y: number;
}

export interface CancelObjectDeps {
  /** Its slice of the settings (`config.slice('plugins')`), read live. */
  config: { get(): { plugins: { cancelobject: CancelObjectSettings } } };
  /** The objects the analysis found in a local file (null: not analysed, or none). */
  objectsOf: (path: string) => Promise<FileObject[] | null>;
  /** Sends lines to the printer ahead of the job's (M486 P). */
  commands: (lines: string[]) => void;
  /** Where the print is at the firmware (bytes of the file sent), null when not printing. */
  filepos?: () => number | null;
  /** Cancels the running print (the last remaining object was cancelled). */
  cancelPrint: () => Promise<void>;
  events: EventBus;
  push: (data: Record<string, unknown>) => void;
  logger: Logger;
}

const OWNER = 'cancelobject';
const list = (s: string) => s.split(',').map((x) => x.trim()).filter((x) => x !== '');

interface Live {
  path: string;
  objects: Map<number, { name: string; polygon: [number, number][]; min: [number, number] | null; max: [number, number] | null }>;
  cancelled: Set<number>;
  filter: ObjectSkipFilter | null;
  /** Set while a link thread runs the print's filter: cancels go there (see lineFilter). */
  route: ((id: number) => void) | null;
  printing: boolean;
  active: number;
  /**
   * Where the streamer met each object change: [byte offset, id]. The streamer runs ahead of the firmware (a link
   * thread holds lines), so the object being printed is looked up at the position the firmware has reached.
   */
  changes: Array<[number, number]>;
  /** Ids sent to the firmware as M486 P (firmware mode). */
  firmware: Set<number>;
}

export class CancelObjectService {
  private live: Live | null = null;
  /** The names cancelled in the print that ended last (asked for its history entry, which may come after the event). */
  private lastCancelled: string[] = [];
  private loading: Promise<void> = Promise.resolve();

  constructor(private readonly deps: CancelObjectDeps) {}

  async start(): Promise<void> {
    const ev = this.deps.events;
    ev.on(OWNER, 'FileSelected', (p) => {
      if (p.origin === 'local' && typeof p.path === 'string') this.loading = this.load(p.path as string);
      else this.live = null;
    });
    ev.on(OWNER, 'MetadataAnalysisFinished', (p) => {
      if (this.live && p.path === this.live.path && !this.live.printing) this.loading = this.load(this.live.path);
    });
    ev.on(OWNER, 'FileDeselected', () => this.clear());
    for (const name of ['PrintDone', 'PrintFailed', 'PrintCancelled'] as const) ev.on(OWNER, name, () => this.ended());
  }

  async stop(): Promise<void> {
    this.deps.events.removeOwner(OWNER);
  }

  private async load(path: string): Promise<void> {
    const found = await this.deps.objectsOf(path).catch(() => null);
    const prev = this.live?.path === path ? this.live : null;
    const objects = new Map<number, NonNullable<Live['objects']> extends Map<number, infer V> ? V : never>();
    for (const o of found ?? []) objects.set(o.id, { name: o.name, polygon: o.polygon, min: o.min, max: o.max });
    // The same file again (selected anew, analysed again): the state a running print's filter holds stays.
    if (prev !== null) prev.objects = objects;
    else this.live = { path, objects, cancelled: new Set(), filter: null, route: null, printing: false, active: -1, firmware: new Set(), changes: [] };
    this.pushList();
  }

  /** Waits for the selected file's list (tests, the route right after a selection). */
  ready(): Promise<void> { return this.loading; }

  private clear(): void {
    if (this.live === null) return;
    this.live = null;
    this.deps.push({ navBarActive: 'None' });
  }

  private ended(): void {
    const live = this.live;
    if (live === null) return;
    if (live.printing) this.lastCancelled = this.names(live.cancelled);
    // The list stays for the selected file, fresh for its next print.
    live.printing = false;
    live.filter = null;
    live.route = null;
    live.cancelled = new Set();
    live.firmware = new Set();
    live.active = -1;
    this.deps.push({ navBarActive: 'None' });
  }

  private ignored(name: string): boolean {
    return list(this.deps.config.get().plugins.cancelobject.ignored).includes(name);
  }

  /** The plugin's list (§2.2): min/max from the outline; 0/10000 while unknown, as the plugin starts them. */
  list(): ObjectEntry[] {
    const live = this.live;
    if (live === null) return [];
    const names = new Map<number, string>();
    for (const [id, o] of live.objects) names.set(id, o.name);
    // Objects the streamer met that the analysis did not list (a file not analysed yet).
    live.filter?.labels.names.forEach((name, id) => { if (!names.has(id)) names.set(id, name); });
    return [...names.entries()].sort((a, b) => a[0] - b[0]).map(([id, name]) => {
      const o = live.objects.get(id);
      return {
        object: name, id, active: false, cancelled: live.cancelled.has(id), ignore: this.ignored(name),
        max_x: o?.max?.[0] ?? 0, min_x: o?.min?.[0] ?? 10000, max_y: o?.max?.[1] ?? 0, min_y: o?.min?.[1] ?? 10000,
      };
    });
  }

  /** The objects with their outlines, for Gantry's UI. */
  outlines(): Array<ObjectEntry & { polygon: [number, number][] }> {
    const live = this.live;
    return this.list().map((e) => ({ ...e, polygon: live?.objects.get(e.id)?.polygon ?? [] }));
  }

  /** The object being printed: at the firmware's position when known, else where the streamer is. */
  get activeId(): number {
    const live = this.live;
    if (live === null || !live.printing) return -1;
    const at = this.deps.filepos?.() ?? null;
    if (at === null) return live.active;
    let id = -1;
    // Binary search: the last change at or before `at`.
    let lo = 0, hi = live.changes.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (live.changes[mid][0] <= at) { id = live.changes[mid][1]; lo = mid + 1; } else hi = mid - 1;
    }
    return id;
  }

  /** `objlist`: the list, also pushed and sent as an event. */
  objlist(): ObjectEntry[] {
    return this.pushList();
  }

  /** `GET`: re-pushes the objects, the active id and its name. */
  refresh(): void {
    this.pushList();
    const active = this.activeId;
    this.deps.push({ ActiveID: active });
    this.deps.push({ navBarActive: active >= 0 ? (this.list().find((e) => e.id === active)?.object ?? 'None') : 'None' });
  }

  /** `resetpos`: the outlines come from the analysis, so there is nothing to reset but the list is sent again. */
  resetpos(): void {
    this.pushList();
  }

  private pushList(): ObjectEntry[] {
    const entries = this.list();
    this.deps.push({ objects: entries });
    this.deps.events.emit('plugin_cancelobject_object_list', { object_list: entries });
    return entries;
  }

  /**
   * `cancel`: an unknown id is only logged (as the plugin does). The object being printed is skipped from the
   * streamer's next line; when no object that can be cancelled is left, the print is cancelled.
   */
  async cancel(id: number): Promise<void> {
    const live = this.live;
    const entry = this.list().find((e) => e.id === id);
    if (live === null || entry === undefined) {
      this.deps.logger.info({ id }, 'cancel of an unknown object');
      return;
    }
    if (entry.ignore || live.cancelled.has(id)) return;
    live.cancelled.add(id);
    const index = live.filter?.labels.m486Index(id);
    if (this.deps.config.get().plugins.cancelobject.gantry.firmwareM486 && live.printing && index !== undefined) {
      live.firmware.add(id);
      this.deps.commands([`M486 P${index}`]);
    } else if (live.route !== null) live.route(id);
    else live.filter?.cancel(id);
    const after = this.list();
    this.deps.events.emit('plugin_cancelobject_object_cancelled', { object_cancelled: after.find((e) => e.id === id) });
    this.deps.push({ objects: after });
    if (live.printing && after.every((e) => e.ignore || e.cancelled)) await this.deps.cancelPrint();
  }

  /** Names of the objects cancelled in the running print, or in the one that just ended (its history entry). */
  cancelledNames(): string[] {
    const live = this.live;
    return live !== null && live.printing ? this.names(live.cancelled) : this.lastCancelled;
  }

  private names(ids: Set<number>): string[] {
    const entries = this.list();
    return [...ids].sort((a, b) => a - b).map((id) => entries.find((e) => e.id === id)?.object ?? String(id));
  }

  /**
   * The streamer's filter for a print of `path` from byte `offset`. Null when the file labels no objects or the print
   * resumes part way (the labels before the offset are not read, so the ids would not match).
   */
  lineFilter(path: string, offset: number): JobLineFilter | null {
    const live = this.live;
    if (live === null || live.path !== path || offset !== 0 || live.objects.size === 0) return null;
    const s = this.deps.config.get().plugins.cancelobject;
    const firmware = s.gantry.firmwareM486;
    const opts = { before: list(s.beforegcode), after: list(s.aftergcode) };
    const filter = new ObjectSkipFilter(opts);
    live.filter = filter;
    live.route = null;
    live.printing = true;
    this.lastCancelled = [];
    live.active = -1;
    live.changes = [];
    const pending = [...live.cancelled];
    let started = false;
    // Where a link thread filters (the firmware skips nothing then): the same labels followed here, the skip there.
    let current = -1;
    const inLink: LinkLineFilter | undefined = firmware ? undefined : {
      plan: () => ({ ...opts, cancelled: [...live.cancelled] }),
      observe: (line, end) => {
        const ev = filter.labels.feed(line);
        if (ev === null || ev.kind === 'define') return;
        current = ev.kind === 'start' ? ev.id : -1;
        if (current !== live.active && live.filter === filter) {
          live.changes.push([end, current]);
          this.activeChanged(live, current);
        }
      },
      route: (cancel) => { if (live.filter === filter) live.route = cancel; },
    };
    const fn = (line: string, end: number): readonly string[] => {
      if (!started) {
        // Cancelled before the print started: known to the filter from the first line (firmware mode: once the
        // header named the M486 indexes, see below).
        started = true;
        if (!firmware) for (const id of pending) filter.cancel(id);
      }
      const out = filter.filter(line);
      const cur = filter.currentObject;
      if (cur !== live.active && live.filter === filter) {
        live.changes.push([end, cur]);
        this.activeChanged(live, cur);
      }
      if (firmware && filter.labels.m486Index(cur) !== undefined && pending.length > 0) this.flushFirmware(live, filter, pending);
      return out;
    };
    return Object.assign(fn, { inLink });
  }

  /** Firmware mode: objects cancelled before their M486 index was known are sent as M486 P now. */
  private flushFirmware(live: Live, filter: ObjectSkipFilter, pending: number[]): void {
    for (let i = pending.length - 1; i >= 0; i--) {
      const index = filter.labels.m486Index(pending[i]);
      if (index === undefined) continue;
      live.firmware.add(pending[i]);
      this.deps.commands([`M486 P${index}`]);
      pending.splice(i, 1);
    }
  }

  private activeChanged(live: Live, cur: number): void {
    live.active = cur;
    if (cur < 0) return;
    const entry = this.list().find((e) => e.id === cur);
    this.deps.push({ ActiveID: cur });
    this.deps.push({ navBarActive: entry?.object ?? 'None' });
    this.deps.events.emit('plugin_cancelobject_current_object', { current_object: entry ?? null });
  }
}
