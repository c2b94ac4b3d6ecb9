// Cancelling one object of a print (Cancelobject compatible, docs/reference/plugins.md §2): the object list of the
// selected file (from its analysis), the plugin's list entries, pushes and events, and the line filter the job
// streamer runs a print's lines through (skip-filter.ts), or `M486 P<index>` when the firmware cancels itself.
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import type { Config } from '../config/schema.ts';
import { ObjectSkipFilter, type SkipFilterState } from './skip-filter.ts';
import type { FileObject } from './object-outlines.ts';
import { ObjectLabels } from './object-labels.ts';

/**
 * The job streamer's filter as it takes it (printer/job/job-stream.ts's JobLineFilter, structurally: objects/ may not
 * import printer/): a function of each file line, and the same filter for a link thread to run.
 */
export interface LinkLineFilter {
  plan(): { before: string[]; after: string[]; cancelled: number[]; state?: SkipFilterState };
  observe(line: string, end: number): void;
  route(cancel: ((id: number) => void) | null): void;
}
export type JobLineFilter = ((line: string, end: number) => readonly string[]) & {
  readonly inLink?: LinkLineFilter;
  /** The byte spans of the file that cancelled objects leave out (progress and time left count them out). */
  readonly skipped?: () => readonly (readonly [number, number])[];
};

/** Batches of a file's lines from its start, each with the byte offset after every line (file-line-source.ts). */
export type FileLines = (path: string) => AsyncIterable<{ lines: string[]; ends: number[] }>;

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
  /**
   * Reads the file's lines: a print resumed part way has its filter fed the lines before the offset (so it knows
   * the ids and which object it is in), and a cancel looks up the byte spans of the object. Absent: a resumed print
   * gets no filter, and progress counts the skipped lines as done.
   */
  fileLines?: FileLines;
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
  /**
   * The byte spans the cancelled objects leave out of this print (from where each was cancelled, or the resume
   * offset, to the end of the file), a new array at each change; `spans` the objects' spans in the file, read once.
   */
  skipped: Array<[number, number]>;
  spans: Promise<Map<number, Array<[number, number]>>> | null;
  /** Where the print started (the resume offset). */
  offset: number;
}

export class CancelObjectService {
  private live: Live | null = null;
  /** The names cancelled in the print that ended last (asked for its history entry, which may come after the event). */
  private lastCancelled: string[] = [];
  private lastCancelledIds: number[] = [];
  /** Recovery: the objects an interrupted print had cancelled, for its resume (see restore). */
  private restoring: { path: string; ids: number[]; scripted: boolean } | null = null;
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
    else this.live = { path, objects, cancelled: new Set(), filter: null, route: null, printing: false, active: -1, firmware: new Set(), changes: [], skipped: [], spans: null, offset: 0 };
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
    if (live.printing) {
      this.lastCancelled = this.names(live.cancelled);
      this.lastCancelledIds = [...live.cancelled].sort((a, b) => a - b);
    }
    // The list stays for the selected file, fresh for its next print.
    live.printing = false;
    live.filter = null;
    live.route = null;
    live.cancelled = new Set();
    live.firmware = new Set();
    live.active = -1;
    live.skipped = [];
    live.spans = null;
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
    if (live.printing) this.countOut(live, id, Math.max(live.offset, this.deps.filepos?.() ?? live.offset));
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

  /** Ids of the objects cancelled in the running print, or in the one that ended last (the recovery journal). */
  cancelledIds(): number[] {
    const live = this.live;
    return live !== null && live.printing ? [...live.cancelled].sort((a, b) => a - b) : this.lastCancelledIds;
  }

  /**
   * Recovery: the interrupted print of `path` had these objects cancelled; its resume (the next filter asked for that
   * file) skips them again. `scripted`: the recovery script put the printer where the file is at the resume offset
   * (else, after a reconnect without a reset, the printer is where the lines sent before the cut left it).
   */
  restore(path: string, ids: number[], o: { scripted: boolean }): void {
    this.restoring = ids.length > 0 ? { path, ids: [...ids], scripted: o.scripted } : null;
  }

  private names(ids: Set<number>): string[] {
    const entries = this.list();
    return [...ids].sort((a, b) => a - b).map((id) => entries.find((e) => e.id === id)?.object ?? String(id));
  }

  /**
   * The streamer's filter for a print of `path` from byte `offset`, null when the file labels no objects. A print
   * resumed part way (recovery) has the filter fed the file's lines before the offset first, so the ids and the
   * object it is in are known, and the objects the interrupted print had cancelled (restore) are skipped again.
   */
  async lineFilter(path: string, offset: number): Promise<JobLineFilter | null> {
    await this.loading;
    const restore = this.restoring !== null && this.restoring.path === path ? this.restoring : null;
    this.restoring = null;
    const live = this.live;
    if (live === null || live.path !== path || live.objects.size === 0) return null;
    const fileLines = this.deps.fileLines;
    if (offset > 0 && fileLines === undefined) return null;
    for (const id of restore?.ids ?? []) live.cancelled.add(id);
    const s = this.deps.config.get().plugins.cancelobject;
    const firmware = s.gantry.firmwareM486;
    const opts = { before: list(s.beforegcode), after: list(s.aftergcode) };
    const state = offset > 0 ? await this.stateAt(fileLines!, path, offset, firmware ? [] : [...live.cancelled], opts, restore?.scripted ?? true) : undefined;
    if (this.live !== live) return null;
    const filter = new ObjectSkipFilter(opts, state);
    live.filter = filter;
    live.route = null;
    live.printing = true;
    this.lastCancelled = [];
    this.lastCancelledIds = [];
    live.active = -1;
    live.changes = [];
    live.offset = offset;
    live.skipped = [];
    live.spans = null;
    if (filter.currentObject >= 0) {
      live.changes.push([offset, filter.currentObject]);
      this.activeChanged(live, filter.currentObject);
    }
    for (const id of live.cancelled) this.countOut(live, id, offset);
    const pending = [...live.cancelled];
    let started = false;
    // Where a link thread filters (the firmware skips nothing then): the same labels followed here, the skip there.
    let current = filter.currentObject;
    const inLink: LinkLineFilter | undefined = firmware ? undefined : {
      plan: () => ({ ...opts, cancelled: [...live.cancelled], ...(state !== undefined ? { state } : {}) }),
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
    return Object.assign(fn, { inLink, skipped: () => live.skipped });
  }

  /**
   * The filter's state at byte `offset`, from the file's lines before it, with `cancelled` skipped from the start (a
   * section of one of them before the offset is entered and left as the print had). `scripted`: the printer is where
   * the file is at the offset (the recovery script put it there), so a skip under way there starts from that point.
   */
  private async stateAt(fileLines: FileLines, path: string, offset: number, cancelled: number[], opts: { before: string[]; after: string[] },
    scripted: boolean): Promise<SkipFilterState> {
    const pre = new ObjectSkipFilter(opts);
    for (const id of cancelled) pre.cancel(id);
    read: for await (const { lines, ends } of fileLines(path)) {
      for (let i = 0; i < lines.length; i++) {
        if (ends[i] > offset) break read;
        pre.filter(lines[i]);
      }
    }
    const state = pre.snapshot();
    if (scripted) state.at = { ...state.file };
    return state;
  }

  /**
   * Counts a cancelled object's bytes out of what the print has left: its spans in the file from `from` on (the file
   * is read once per print, at the first cancel).
   */
  private countOut(live: Live, id: number, from: number): void {
    const fileLines = this.deps.fileLines;
    if (fileLines === undefined) return;
    live.spans ??= objectSpans(fileLines, live.path).catch((err: unknown) => {
      this.deps.logger.warn({ err, path: live.path }, 'cancel object: the file could not be read for its objects\' spans; progress counts them as printed');
      return new Map();
    });
    void live.spans.then((spans) => {
      if (!live.printing || !live.cancelled.has(id)) return;
      const add: Array<[number, number]> = [];
      for (const [a, b] of spans.get(id) ?? []) if (b > from) add.push([Math.max(a, from), b]);
      if (add.length === 0) return;
      live.skipped = mergeSpans([...live.skipped, ...add]);
    });
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

/** Each object's byte spans in the file: from its start label's line to the line that ends it (ascending). */
async function objectSpans(fileLines: FileLines, path: string): Promise<Map<number, Array<[number, number]>>> {
  const labels = new ObjectLabels();
  const out = new Map<number, Array<[number, number]>>();
  let current = -1;
  let since = 0;
  let start = 0;
  const close = (at: number) => {
    if (current < 0) return;
    let spans = out.get(current);
    if (spans === undefined) out.set(current, spans = []);
    spans.push([since, at]);
  };
  for await (const { lines, ends } of fileLines(path)) {
    for (let i = 0; i < lines.length; i++) {
      const ev = labels.feed(lines[i]);
      if (ev !== null && ev.kind !== 'define') {
        close(start);
        current = ev.kind === 'start' ? ev.id : -1;
        since = start;
      }
      start = ends[i];
    }
  }
  close(start);
  return out;
}

/** Sorted spans, overlapping ones joined. */
function mergeSpans(spans: Array<[number, number]>): Array<[number, number]> {
  spans.sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  for (const [a, b] of spans) {
    const last = out.at(-1);
    if (last !== undefined && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}
