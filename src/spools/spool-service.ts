// Spoolman support: the active spool of each tool (kept on disk), the filament a print uses (from the file's own
// extrusion at the job's position, extrusion-index.ts) reported as `PUT /api/v1/spool/{id}/use` every sync interval
// and at the end, a queue of unsent use kept on disk across a Spoolman outage, Spoolman's change feed, and the check
// of a print's analysed filament against what the active spool has left (docs/reference/plugins.md §5.3, §5.4).
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../core/atomic-file.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import { conflict, notFound, invalid } from '../core/errors.ts';
import type { JobSnapshot, SelectedFile } from '../printer/job/job-types.ts';
import { SpoolmanClient, SpoolmanHttpError, type ChangeMessage, type RawReply, type Spool } from './spoolman-client.ts';
import { buildExtrusionIndex, usedAt, type ExtrusionIndex } from './extrusion-index.ts';
import { parseSpoolWord, SPOOL_WORDS } from './spool-words.ts';

export interface SpoolmanSettings {
  server: string;
  syncInterval: number;
  lowFilament: 'off' | 'warn' | 'refuse';
  timeout: number;
}

export interface SpoolDeps {
  /** Its slice of the settings (`config.slice('plugins')`), read live. */
  config: { get(): { plugins: { spoolman: SpoolmanSettings } } };
  events: EventBus;
  logger: Logger;
  /** Where the active spools and the unsent use are kept (data/spoolman.json). */
  file: string;
  jobs: { snapshot(): JobSnapshot; isPrinting(): boolean };
  absolutePath: (path: string) => string | Promise<string>;
  /** Host words from the terminal, the API and scripts (PrinterService.handleHostWord). */
  hostWords: (word: string, fn: (cmd: string) => void) => () => void;
  /** A line for the terminal (the answer to a host word). */
  say: (line: string) => void;
  push: (data: Record<string, unknown>) => void;
  /** Seconds before the change feed is tried again after it dropped (tests shorten it). */
  retrySeconds?: number;
}

interface Stored { active: Record<string, number>; pending: Record<string, number> }

interface LivePrint {
  path: string;
  index: ExtrusionIndex | null;
  ready: Promise<void>;
  /** The file's extrusion at the position the print started from (0, or a recovered print's offset). */
  startPos: number;
  base: number[] | null;
  /** Per tool: filament already counted (queued for a spool, or for none). */
  counted: number[];
  lastPos: number;
  /** Per tool: the spool and what it got in this print. */
  used: Map<string, { tool: number; spool_id: number; used: number }>;
}

/** Below this (mm) nothing is sent: a rounding remainder, not filament. */
const EPSILON = 1e-6;

export class SpoolService {
  private active = new Map<number, number>();
  private pending = new Map<number, number>();
  private spools = new Map<number, Spool>();
  private client: SpoolmanClient | null = null;
  private stopFeed: (() => void) | null = null;
  private connectedNow = false;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private live: LivePrint | null = null;
  private lastPrint: LivePrint | null = null;
  private saving: Promise<void> = Promise.resolve();
  private lastError: string | null = null;
  private readonly unsubscribe: Array<() => void> = [];
  private server = '';

  constructor(private readonly deps: SpoolDeps) {}

  async start(): Promise<void> {
    await this.load();
    const ev = this.deps.events;
    this.unsubscribe.push(
      ev.on('spools', 'PrintStarted', (p) => this.printStarted(p.origin, p.path)),
      ev.on('spools', 'PrintDone', () => this.printEnded(true)),
      ev.on('spools', 'PrintCancelled', () => this.printEnded(false)),
      ev.on('spools', 'PrintFailed', (p) => { if (p.reason !== 'cancelled') this.printEnded(false); }),
      ev.on('spools', 'PrintPaused', () => { this.accrue(); void this.flush(); }),
      ev.on('spools', 'SettingsUpdated', () => this.configure()),
      ...SPOOL_WORDS.map((w) => this.deps.hostWords(w, (cmd) => this.hostWord(cmd))),
    );
    this.configure();
  }

  async stop(): Promise<void> {
    for (const u of this.unsubscribe.splice(0)) u();
    this.stopFeed?.();
    this.stopFeed = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flushing;
    await this.saving;
  }

  // ------------------------------------------------------------------ settings and the link to Spoolman

  /** (Re)connects when plugins.spoolman.server changed; the sync timer follows syncInterval. */
  private configure(): void {
    const s = this.deps.config.get().plugins.spoolman;
    if (s.server !== this.server) {
      this.server = s.server;
      this.stopFeed?.();
      this.stopFeed = null;
      this.setConnected(false);
      this.client = s.server ? new SpoolmanClient(s.server, () => this.deps.config.get().plugins.spoolman.timeout * 1000) : null;
      if (this.client) {
        const client = this.client;
        this.stopFeed = client.follow((m) => this.changed(m), (up) => {
          if (this.client !== client) return;
          this.setConnected(up);
          if (up) void this.refresh().then(() => this.flush());
        }, (this.deps.retrySeconds ?? 2) * 1000);
      }
    }
    // A changed interval applies from the next start of the timer.
    if (this.timer) { clearInterval(this.timer); this.timer = null; }
    this.wake();
  }

  /** The sync timer runs only while a print is tracked or use waits to be sent: an idle server sleeps. */
  private wake(): void {
    if (this.timer || !this.client || (!this.live && this.pending.size === 0)) return;
    this.timer = setInterval(() => this.tick(), Math.max(200, this.deps.config.get().plugins.spoolman.syncInterval * 1000));
    this.timer.unref();
  }

  private setConnected(up: boolean): void {
    if (up === this.connectedNow) return;
    this.connectedNow = up;
    this.deps.events.emit('plugin_spoolman_status_changed', { spoolman_connected: up });
    this.deps.push({ type: 'status', spoolman_connected: up });
  }

  connected(): boolean { return this.connectedNow; }
  enabled(): boolean { return this.client !== null; }

  /** The spools Spoolman has (cached from the last listing and the change feed). */
  private async refresh(): Promise<void> {
    const c = this.client;
    if (!c) return;
    try {
      const list = await c.spools();
      if (!Array.isArray(list)) return;
      this.spools = new Map(list.filter((s) => typeof s?.id === 'number').map((s) => [s.id, s]));
      this.lastError = null;
    } catch (err) {
      this.lastError = (err as Error).message;
    }
  }

  private changed(m: ChangeMessage): void {
    if (m.resource !== 'spool') return;
    const id = m.payload.id;
    if (typeof id !== 'number') return;
    if (m.type === 'deleted') {
      this.spools.delete(id);
      // Moonraker clears the active spool when Spoolman deletes it (§5.4).
      for (const [tool, sid] of this.active) if (sid === id) void this.setActive(tool, null, 'spoolman').catch(() => {});
    } else this.spools.set(id, m.payload as Spool);
    this.deps.push({ type: 'spool', change: m.type, spool_id: id });
  }

  // ------------------------------------------------------------------ the active spools

  activeSpools(): Record<string, number> { return Object.fromEntries([...this.active].map(([t, id]) => [String(t), id])); }

  async listSpools(): Promise<Spool[]> {
    if (!this.client) throw conflict('Spoolman is not set up (plugins.spoolman.server)');
    try {
      await this.refreshOrThrow();
    } catch (err) {
      // Spoolman's state, not a fault of this server: a 409 naming the cause (as when it is not set up).
      throw conflict(`Spoolman did not answer: ${(err as Error).message}`);
    }
    return [...this.spools.values()];
  }

  private async refreshOrThrow(): Promise<void> {
    const list = await this.client!.spools();
    this.spools = new Map(list.filter((s) => typeof s?.id === 'number').map((s) => [s.id, s]));
  }

  /** Sets (or with null clears) the spool of a tool; what the tool used so far goes to the spool it had. */
  async setActive(tool: number, id: number | null, by: string): Promise<void> {
    if (!Number.isInteger(tool) || tool < 0 || tool > 63) throw invalid(`No tool ${tool}`);
    if (id !== null && this.client && this.connectedNow) {
      try {
        this.spools.set(id, await this.client.spool(id));
      } catch (err) {
        if (err instanceof SpoolmanHttpError && err.status === 404) throw notFound(`Spoolman has no spool ${id}`);
      }
    }
    this.accrue();
    if (id === null) this.active.delete(tool);
    else this.active.set(tool, id);
    await this.save();
    this.deps.logger.info({ tool, spool: id, by }, 'active spool set');
    this.deps.events.emit('plugin_spoolman_active_spool_set', { spool_id: id, tool });
    this.deps.push({ type: 'active', tool, spool_id: id });
  }

  private hostWord(cmd: string): void {
    const w = parseSpoolWord(cmd);
    if (w.kind === 'bad') { this.deps.say(`!! ${w.message}`); return; }
    void this.setActive(w.tool, w.kind === 'set' ? w.id : null, 'gcode').then(
      () => this.deps.say(w.kind === 'set' ? `// Active spool of tool ${w.tool}: ${w.id}` : `// Active spool of tool ${w.tool} cleared`),
      (err: Error) => this.deps.say(`!! ${err.message}`));
  }

  // ------------------------------------------------------------------ use while printing

  private printStarted(origin: string, path: string): void {
    if (origin !== 'local') { this.live = null; return; }
    const startPos = this.deps.jobs.snapshot().progress?.filepos ?? 0;
    const live: LivePrint = { path, index: null, ready: Promise.resolve(), startPos, base: null, counted: [], lastPos: startPos, used: new Map() };
    live.ready = Promise.resolve(this.deps.absolutePath(path)).then(buildExtrusionIndex).then((idx) => {
      live.index = idx;
      live.base = usedAt(idx, startPos);
      live.counted = live.base.map(() => 0);
    }, (err: Error) => this.deps.logger.warn({ err, path }, 'the file\'s extrusion could not be read; its use is not reported'));
    this.live = live;
    this.lastPrint = live;
    this.wake();
  }

  private printEnded(done: boolean): void {
    const live = this.live;
    if (!live) return;
    this.live = null;
    // Done: every line went out. Otherwise the last position the job had.
    const pos = done ? Infinity : (this.deps.jobs.snapshot().progress?.filepos ?? live.lastPos);
    // At once when the index is there: the print history, written next, records what each spool gave.
    if (live.index) {
      this.accrueFor(live, Math.max(pos, live.lastPos));
      void this.flush();
      return;
    }
    void live.ready.then(() => {
      this.accrueFor(live, Math.max(pos, live.lastPos));
      return this.flush();
    });
  }

  private tick(): void {
    this.accrue();
    if (this.pending.size > 0) void this.flush();
    else if (!this.live && this.timer) { clearInterval(this.timer); this.timer = null; }
  }

  /** Counts what the running print extruded since the last look, for the active spool of each tool. */
  private accrue(): void {
    const live = this.live;
    if (!live) return;
    const pos = this.deps.jobs.snapshot().progress?.filepos;
    if (typeof pos === 'number') this.accrueFor(live, pos);
  }

  private accrueFor(live: LivePrint, pos: number): void {
    if (!live.index || !live.base) return;
    live.lastPos = Math.max(live.lastPos, Number.isFinite(pos) ? pos : live.lastPos);
    const now = usedAt(live.index, pos);
    let changed = false;
    for (let t = 0; t < now.length; t++) {
      const delta = now[t] - live.base[t] - live.counted[t];
      if (!(delta > EPSILON)) continue;
      live.counted[t] += delta;
      const spool = this.active.get(t);
      if (spool === undefined) continue;
      this.pending.set(spool, (this.pending.get(spool) ?? 0) + delta);
      const key = `${t}:${spool}`;
      const u = live.used.get(key) ?? { tool: t, spool_id: spool, used: 0 };
      u.used += delta;
      live.used.set(key, u);
      changed = true;
    }
    if (changed) { void this.save(); this.wake(); }
  }

  /** Sends the queued use, one spool at a time, while the change feed is up (as Moonraker does, §5.4). */
  flush(): Promise<void> {
    this.flushing ??= this.sendPending().finally(() => { this.flushing = null; });
    return this.flushing;
  }

  private async sendPending(): Promise<void> {
    const c = this.client;
    if (!c || !this.connectedNow) return;
    for (const [id, amount] of [...this.pending]) {
      if (!(amount > EPSILON)) { this.pending.delete(id); continue; }
      try {
        const spool = await c.use(id, amount);
        if (spool && typeof spool.id === 'number') this.spools.set(spool.id, spool);
        const left = (this.pending.get(id) ?? 0) - amount;
        if (left > EPSILON) this.pending.set(id, left);
        else this.pending.delete(id);
        this.lastError = null;
      } catch (err) {
        if (err instanceof SpoolmanHttpError && err.status === 404) {
          // The spool is gone from Spoolman: its use has nowhere to go, and it is no tool's spool any more (§5.4).
          this.deps.logger.warn({ spool: id, mm: amount }, 'Spoolman has no such spool; its use is dropped and it is no longer active');
          this.pending.delete(id);
          for (const [tool, sid] of this.active) if (sid === id) { this.active.delete(tool); this.deps.events.emit('plugin_spoolman_active_spool_set', { spool_id: null, tool }); }
        } else {
          this.lastError = (err as Error).message;
          break;
        }
      }
    }
    await this.save();
  }

  // ------------------------------------------------------------------ the check before a print

  /** Filament (mm) the spool has left by Spoolman's figures, less what is queued for it. */
  remaining(id: number): number | null {
    const s = this.spools.get(id);
    if (!s) return null;
    let mm: number | null = typeof s.remaining_length === 'number' ? s.remaining_length : null;
    if (mm === null && typeof s.remaining_weight === 'number') {
      const d = s.filament?.diameter, rho = s.filament?.density;
      if (typeof d === 'number' && typeof rho === 'number' && d > 0 && rho > 0) mm = s.remaining_weight / (rho * Math.PI * (d / 2) ** 2 / 1000);
    }
    return mm === null ? null : mm - (this.pending.get(id) ?? 0);
  }

  /** Before a print: a tool whose analysed filament exceeds its spool's remaining warns or refuses (plugins.spoolman.lowFilament). */
  async beforeStart(file: SelectedFile): Promise<void> {
    const mode = this.deps.config.get().plugins.spoolman.lowFilament;
    if (mode === 'off' || !this.client) return;
    const need = file.analysis?.filament ?? {};
    const short: Array<{ tool: number; spool_id: number; needed: number; remaining: number }> = [];
    for (const [key, v] of Object.entries(need)) {
      const tool = Number(key.replace(/^tool/, ''));
      const id = this.active.get(tool);
      if (id === undefined || !(v.length > 0)) continue;
      if (this.connectedNow) {
        try { this.spools.set(id, await this.client.spool(id)); } catch { /* the cached figures then */ }
      }
      const left = this.remaining(id);
      if (left !== null && v.length > left) short.push({ tool, spool_id: id, needed: Math.round(v.length), remaining: Math.round(Math.max(0, left)) });
    }
    if (short.length === 0) return;
    const text = short.map((s) => `tool ${s.tool}: the file needs ${(s.needed / 1000).toFixed(2)} m, spool ${s.spool_id} has ${(s.remaining / 1000).toFixed(2)} m left`).join('; ');
    this.deps.events.emit('plugin_spoolman_low_filament', { path: file.path, tools: short, refused: mode === 'refuse' });
    this.deps.push({ type: 'lowFilament', path: file.path, tools: short, refused: mode === 'refuse' });
    if (mode === 'refuse') throw conflict(`Not enough filament: ${text}`);
    this.deps.logger.warn({ path: file.path, tools: short }, `not enough filament on the active spool: ${text}`);
  }

  // ------------------------------------------------------------------ what the API and history see

  /** The print history's record of the spools of the print that just ended. */
  historyExtras(): { spools?: Array<{ tool: number; spool_id: number; used: number }> } {
    const p = this.lastPrint;
    if (!p) return {};
    const used = [...p.used.values()].map((u) => ({ ...u, used: Math.round(u.used * 1000) / 1000 }));
    // A print whose spool gave nothing yet (its end is being counted) still names its spools.
    if (used.length === 0) for (const [tool, id] of this.active) used.push({ tool, spool_id: id, used: 0 });
    return used.length > 0 ? { spools: used } : {};
  }

  status(): { enabled: boolean; server: string; spoolman_connected: boolean; active: Record<string, number>; spools: Record<string, Spool | null>; pending_reports: Array<{ spool_id: number; filament_used: number }>; error: string | null } {
    return {
      enabled: this.client !== null, server: this.server, spoolman_connected: this.connectedNow, active: this.activeSpools(),
      spools: Object.fromEntries([...this.active].map(([t, id]) => [String(t), this.spools.get(id) ?? null])),
      pending_reports: [...this.pending].map(([spool_id, filament_used]) => ({ spool_id, filament_used })),
      error: this.lastError,
    };
  }

  /** Moonraker's proxy (§5.4): a documented call passed through; null when Spoolman is not connected. */
  async proxy(method: string, path: string, body: unknown, query: string | undefined): Promise<RawReply | null> {
    if (!this.client || !this.connectedNow) return null;
    if (!/^\/v1\//.test(path)) throw invalid('path must start with /v1/');
    return this.client.request(method, path, body, query);
  }

  // ------------------------------------------------------------------ on disk

  private async load(): Promise<void> {
    let v: Partial<Stored> = {};
    try {
      v = JSON.parse(await readFile(this.deps.file, 'utf8')) as Partial<Stored>;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') this.deps.logger.warn({ err }, 'spoolman.json unreadable; no active spools');
    }
    for (const [t, id] of Object.entries(v.active ?? {})) if (Number.isInteger(Number(t)) && typeof id === 'number') this.active.set(Number(t), id);
    for (const [id, mm] of Object.entries(v.pending ?? {})) if (typeof mm === 'number' && mm > 0) this.pending.set(Number(id), mm);
  }

  private save(): Promise<void> {
    const data: Stored = {
      active: Object.fromEntries([...this.active].map(([t, id]) => [String(t), id])),
      pending: Object.fromEntries([...this.pending].map(([id, mm]) => [String(id), mm])),
    };
    this.saving = this.saving.then(() => writeFileAtomic(this.deps.file, JSON.stringify(data))).catch((err: unknown) => {
      this.deps.logger.warn({ err }, 'spoolman.json could not be written');
    });
    return this.saving;
  }
}
