// The Moonraker edge: Moonraker's API (JSON-RPC 2.0 on /websocket and its HTTP mirror, see http-routes.ts) over
// Gantry's own services, so Mainsail, Fluidd, KlipperScreen and other Moonraker clients drive the printer while
// OctoPrint clients keep using it (docs/reference/moonraker.md). State it keeps of its own: the followed G-code state,
// print_stats after a job's end, the temperature and console stores, and the UI database.
import type { Server as HttpServer, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { join } from 'node:path';
import type { WebSocket, WebSocketServer } from 'ws';
import type { HistoryRecord, MoonrakerDeps } from './moonraker-deps.ts';
import { GcodeState } from './gcode-state.ts';
import { PrinterObjects, freshJob, heaterKey, heaterName, select, type JobRecord, type Status } from './printer-objects.ts';
import { StatusHub, type Subscriber, type Wanted } from './status-hub.ts';
import { TemperatureStore, GcodeStore, TEMPERATURE_STORE_SIZE } from './data-store.ts';
import { MoonrakerDatabase } from './database.ts';
import { MoonrakerAuth, type Caller, type Credentials } from './moonraker-auth.ts';
import { FileMethods, GCODES, ROOTS, itemOf, trimSlashes } from './file-methods.ts';
import { historyJob, historyJobById, historyList, historyTotals, jobId, type JobExtras } from './history-methods.ts';
import { COMMANDS, runScript, type CommandHost, type ExtraCommand } from './klipper-commands.ts';
import { BedMeshObject } from './bed-mesh-object.ts';
import { PowerDevices } from './power-devices.ts';
import { JobQueueComponent } from './job-queue.ts';
import { MachineMethods, endstopsOf } from './machine-methods.ts';
import { klippyState, type KlippyState } from './klippy-state.ts';
import { ProcStats, systemInfo } from './machine-info.ts';
import { registerSpoolmanMethods, spoolmanNotifications } from './spoolman-methods.ts';
import { INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, RpcError, badParam, forbiddenRpc, rpcErrorOf, unauthorized } from './rpc-errors.ts';
import { isPlain, type Plain } from '../core/plain.ts';
import { DomainError, ErrorCodes } from '../core/errors.ts';

export const MOONRAKER_VERSION = 'v0.9.3-0-gantry';
export const API_VERSION = [1, 5, 0];
/** Largest frame a client may send (Mainsail's batches of 100 metadata requests are a few KB). */
export const MAX_FRAME_BYTES = 1024 * 1024;
/** Requests in one batch. */
const MAX_BATCH = 200;
/** A client this far behind on reading is dropped (its view would be wrong anyway). */
const MAX_BUFFERED = 8 * 1024 * 1024;
const SETTLE_MS = 300_000;
/** The terminal log's batch (printer/serial-log.ts) plus a margin. */
const LOG_BATCH_MS = 150;
const WS_PATH = '/websocket';
/** The database namespace of Gantry's own additions (filament per history job). */
const GANTRY_NS = 'gantry';

type Handler = (params: Plain, ctx: CallContext) => unknown;
interface Method {
  /** Permission needed; null: reachable without authentication. */
  need: string | null;
  run: Handler;
  /** Only on the socket (identify, subscribe). */
  socketOnly?: boolean;
}

export interface CallContext {
  caller: Caller;
  address: string;
  connection?: Connection;
}

let nextConnectionId = 1;

export class Connection implements Subscriber {
  readonly id = nextConnectionId++;
  wanted: Wanted | null = null;
  identified = false;
  client: Record<string, unknown> = {};

  constructor(readonly ws: WebSocket, public caller: Caller, readonly address: string, private readonly owner: MoonrakerService) {}

  get authenticated(): boolean { return this.owner.auth.authenticated(this.caller); }

  sendJson(message: unknown): void {
    if (this.ws.readyState !== 1) return;
    if (this.ws.bufferedAmount > MAX_BUFFERED) {
      this.ws.terminate();
      return;
    }
    this.ws.send(JSON.stringify(message));
  }

  notify(method: string, params?: unknown[]): void {
    if (!this.authenticated) return;
    this.sendJson(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  send(status: Status, eventtime: number): void {
    this.notify('notify_status_update', [status, eventtime]);
  }
}

/** Console lines that are the link's bookkeeping, not answers a person asked for. */
const QUIET = /^(?:ok\b|wait$|echo:busy:|busy:|T:|B:|\s*T\d?:|SD printing byte|Not SD printing)/;

export class MoonrakerService {
  readonly auth: MoonrakerAuth;
  readonly database: MoonrakerDatabase;
  readonly fileMethods: FileMethods;
  private readonly gcode = new GcodeState();
  private job: JobRecord = freshJob();
  private readonly objects: PrinterObjects;
  private readonly hub = new StatusHub();
  private readonly temperatures = new TemperatureStore();
  private readonly console = new GcodeStore();
  private readonly procStats = new ProcStats();
  private readonly connections = new Set<Connection>();
  private readonly methods = new Map<string, Method>();
  private readonly savedStates = new Map<string, string[]>();
  private klippy: KlippyState;
  private tickTimer: NodeJS.Timeout | undefined;
  private secondTimer: NodeJS.Timeout | undefined;
  private unsubscribers: Array<() => void> = [];
  private wss: Promise<WebSocketServer> | undefined;
  private server: HttpServer | undefined;
  private readonly owner = `moonraker#${nextConnectionId}`;
  private readonly commandHost: CommandHost;
  private readonly bedMesh: BedMeshObject | undefined;
  private readonly power: PowerDevices | undefined;
  private readonly jobQueue: JobQueueComponent | undefined;
  private readonly machine: MachineMethods | undefined;
  /** The websocket's path (`/websocket`, or under a farm printer's prefix). */
  private wsPath = WS_PATH;

  constructor(readonly deps: MoonrakerDeps) {
    this.auth = new MoonrakerAuth(deps.access, deps.config, deps.clock);
    this.database = new MoonrakerDatabase(join(deps.dataDir, 'moonraker-db.json'), deps.logger);
    this.fileMethods = new FileMethods(deps.files);
    this.bedMesh = deps.bedMesh ? new BedMeshObject(deps.bedMesh) : undefined;
    this.power = deps.power ? new PowerDevices(deps.power.service, deps.power.settings) : undefined;
    this.jobQueue = deps.queue ? new JobQueueComponent(deps.queue.service, deps.queue.printer, () => deps.clock.now() / 1000) : undefined;
    this.machine = deps.system ? new MachineMethods(deps.system, () => this.reconnect()) : undefined;
    this.objects = new PrinterObjects(deps, this.gcode, () => this.job, deps.clock.monotonic(), this.bedMesh);
    this.klippy = klippyState(deps.printer.state()).state;
    this.commandHost = this.makeCommandHost();
    this.register();
  }

  get connectionCount(): number { return this.connections.size; }

  /** Every method name (the HTTP mirror registers a route per method that is not socket-only). */
  methodNames(): string[] {
    return [...this.methods].filter(([, m]) => !m.socketOnly).map(([name]) => name);
  }

  async start(): Promise<void> {
    await this.database.load();
    const kept = await this.database.get(GANTRY_NS, 'filament').catch(() => ({}));
    if (isPlain(kept)) for (const [id, mm] of Object.entries(kept)) if (typeof mm === 'number') this.filamentByJob.set(id, mm);
    const { printer, events } = this.deps;
    this.unsubscribers.push(printer.subscribe({
      log: (lines) => { for (const l of lines) if (l.startsWith('Send: ')) this.gcode.sent(l.slice(6)); },
      state: (s) => this.onPrinterState(klippyState(s).state, s.id),
    }));
    this.unsubscribers.push(printer.watchReplies((line) => this.onReply(line)));
    events.on(this.owner, 'PrintStarted', (p) => this.onJobStarted(p.path, p.size, p.user ?? p.owner));
    events.on(this.owner, 'PrintPaused', () => { if (this.job.state === 'printing') this.job.state = 'paused'; });
    events.on(this.owner, 'PrintResumed', () => { if (this.job.state === 'paused') this.job.state = 'printing'; });
    events.on(this.owner, 'PrintDone', () => this.onJobEnded('complete', ''));
    events.on(this.owner, 'PrintFailed', (p) => this.onJobEnded(p.reason === 'cancelled' ? 'cancelled' : 'error', p.error ?? ''));
    // A move also emits FileRemoved + FileAdded (operation `move`) before FileMoved: the move is told once, as move_file.
    events.on(this.owner, 'FileAdded', (p) => { if (p.storage === 'local' && p.operation !== 'move') this.fileChanged('create_file', String(p.path)); });
    events.on(this.owner, 'FileRemoved', (p) => { if (p.storage === 'local') this.fileChanged('delete_file', String(p.path)); });
    events.on(this.owner, 'FileMoved', (p) => { if (p.storage === 'local') this.fileChanged('move_file', String(p.destination_path), String(p.source_path)); });
    events.on(this.owner, 'FolderAdded', (p) => { if (p.storage === 'local') this.fileChanged('create_dir', String(p.path)); });
    events.on(this.owner, 'FolderRemoved', (p) => { if (p.storage === 'local') this.fileChanged('delete_dir', String(p.path)); });
    events.on(this.owner, 'FolderMoved', (p) => { if (p.storage === 'local') this.fileChanged('move_dir', String(p.destination_path), String(p.source_path)); });
    events.on(this.owner, 'plugin_psucontrol_psu_state_changed', (p) => {
      if (this.power && this.deps.power?.service.configured()) this.broadcast('notify_power_changed', [this.power.device(p.isPSUOn === true)]);
    });
    events.on(this.owner, 'MetadataAnalysisFinished', (p) => { void this.metadataChanged(String(p.path)); });
    if (this.jobQueue && this.deps.queue) {
      const bus = this.deps.queue.events;
      this.jobQueue.watch(bus, this.owner, (payload) => this.broadcast('notify_job_queue_changed', [payload]));
      if (bus !== events) this.unsubscribers.push(() => bus.removeOwner(this.owner));
    }
    if (this.deps.spools) spoolmanNotifications(events, this.owner, (m, params) => this.broadcast(m, params));
    this.unsubscribers.push(() => events.removeOwner(this.owner));
    // The ticks run only while there is something to sample or someone to tell: an idle server with no printer and
    // no Moonraker client sleeps (test/e2e/runtime/lean-idle.test.ts).
    events.on(this.owner, 'Connected', () => this.wake());
    events.on(this.owner, 'Disconnected', () => this.rest());
    if (this.deps.printer.isOperational()) this.wake();
  }

  private wake(): void {
    if (this.tickTimer) return;
    this.tickTimer = setInterval(() => this.tick(), this.deps.tickMs ?? 250);
    this.tickTimer.unref();
    this.secondTimer = setInterval(() => this.second(), 1000);
    this.secondTimer.unref();
  }

  private rest(): void {
    if (this.connections.size > 0 || this.deps.printer.isOperational()) return;
    clearInterval(this.tickTimer);
    clearInterval(this.secondTimer);
    this.tickTimer = undefined;
    this.secondTimer = undefined;
  }

  async stop(): Promise<void> {
    clearInterval(this.tickTimer);
    clearInterval(this.secondTimer);
    for (const u of this.unsubscribers.splice(0)) u();
    await this.detach();
  }

  // ------------------------------------------------------------------ websocket

  /** Serves the websocket at /websocket (or `<prefix>/websocket`) on the HTTP server (the push channel leaves that path to it). */
  attach(server: HttpServer, prefix = ''): void {
    this.server = server;
    this.wsPath = `${prefix}${WS_PATH}`;
    server.on('upgrade', this.onUpgrade);
  }

  /** Whether an upgrade path is this edge's (the push channel refuses the others). */
  static claims(path: string): boolean {
    return path === WS_PATH || path === `${WS_PATH}/`;
  }

  /** Whether an upgrade path is this instance's socket (a farm printer's is under its prefix). */
  owns(path: string): boolean {
    return path === this.wsPath || path === `${this.wsPath}/`;
  }

  async detach(): Promise<void> {
    this.server?.off('upgrade', this.onUpgrade);
    this.server = undefined;
    for (const c of this.connections) c.ws.terminate();
    this.connections.clear();
    if (this.wss) (await this.wss.catch(() => undefined))?.close();
  }

  private readonly onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (!this.owns(url.pathname)) return;
    socket.on('error', (err) => this.deps.logger.debug({ err }, 'moonraker upgrade socket error'));
    if (!this.originAllowed(req.headers.origin, req.headers.host)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const address = req.socket.remoteAddress ?? '';
    const caller = this.auth.resolve(credentialsOf(req.headers, url.searchParams, address));
    this.wss ??= import('ws').then(({ WebSocketServer: Server }) => new Server({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false }));
    this.wss.then((wss) => wss.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws, caller, address)), (err: unknown) => {
      this.deps.logger.error({ err }, 'ws failed to load');
      socket.destroy();
    });
  };

  private onSocket(ws: WebSocket, caller: Caller, address: string): void {
    const conn = new Connection(ws, caller, address, this);
    this.connections.add(conn);
    this.wake();
    this.hub.add(conn);
    ws.on('error', (err) => this.deps.logger.debug({ err }, 'moonraker websocket error'));
    ws.on('close', () => {
      this.connections.delete(conn);
      this.rest();
      this.hub.remove(conn);
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) return conn.sendJson({ jsonrpc: '2.0', error: { code: PARSE_ERROR, message: 'Parse error' }, id: null });
      const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
      void this.handleFrame(text, { caller: conn.caller, address, connection: conn }).then((reply) => { if (reply !== undefined) conn.sendJson(reply); });
    });
  }

  /** CORS for the socket: same origin, or the configured cross-origin rule (docs/reference/moonraker.md §1.6). */
  originAllowed(origin: string | undefined, host: string | undefined): boolean {
    if (!origin) return true;
    try {
      if (new URL(origin).host === host) return true;
    } catch {
      return false;
    }
    return this.corsAllows(origin);
  }

  corsAllows(origin: string): boolean {
    if (this.deps.config.current.api.allowCrossOrigin) return true;
    return this.deps.config.current.moonraker.corsDomains.some((pattern) => matchDomain(pattern, origin));
  }

  /** One text frame: a request or a batch. Returns the reply (undefined for notifications without id). */
  async handleFrame(text: string, ctx: CallContext): Promise<unknown> {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return { jsonrpc: '2.0', error: { code: PARSE_ERROR, message: 'Parse error' }, id: null };
    }
    if (Array.isArray(msg)) {
      if (msg.length === 0) return { jsonrpc: '2.0', error: { code: INVALID_REQUEST, message: 'Invalid Request' }, id: null };
      if (msg.length > MAX_BATCH) return { jsonrpc: '2.0', error: { code: INVALID_REQUEST, message: `Batches hold at most ${MAX_BATCH} requests` }, id: null };
      const replies = await Promise.all(msg.map((m) => this.handleRequest(m, ctx)));
      const out = replies.filter((r) => r !== undefined);
      return out.length ? out : undefined;
    }
    return this.handleRequest(msg, ctx);
  }

  private async handleRequest(msg: unknown, ctx: CallContext): Promise<unknown> {
    if (!isPlain(msg)) return { jsonrpc: '2.0', error: { code: INVALID_REQUEST, message: 'Invalid Request' }, id: null };
    const rawId = Object.hasOwn(msg, 'id') ? msg.id : undefined;
    const id = typeof rawId === 'number' || typeof rawId === 'string' || rawId === null ? rawId : null;
    const hasId = rawId !== undefined;
    const fail = (code: number, message: string) => ({ jsonrpc: '2.0', error: { code, message }, id });
    if (msg.jsonrpc !== '2.0' || typeof msg.method !== 'string' || (rawId !== undefined && id === null && rawId !== null)) return fail(INVALID_REQUEST, 'Invalid Request');
    const params = msg.params === undefined ? {} : msg.params;
    if (!isPlain(params)) return fail(INVALID_PARAMS, 'Invalid params');
    try {
      const result = await this.call(msg.method, params, ctx, true);
      return hasId ? { jsonrpc: '2.0', result: result ?? 'ok', id } : undefined;
    } catch (err) {
      if (!(err instanceof RpcError) && !(err instanceof DomainError)) this.deps.logger.warn({ err, method: msg.method }, 'moonraker method failed');
      if (!hasId) return undefined;
      const e = rpcErrorOf(err);
      return fail(e.code, e.message);
    }
  }

  /** Runs a method for a socket or an HTTP request: the one place access is checked. */
  async call(name: string, params: Plain, ctx: CallContext, socket: boolean): Promise<unknown> {
    const m = this.methods.get(name);
    if (!m || (m.socketOnly && !socket)) throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${name.slice(0, 100)}`);
    if (m.need !== null) {
      if (!this.auth.authenticated(ctx.caller)) throw unauthorized();
      if (m.need !== 'any' && !ctx.caller.identity.has(m.need)) throw forbiddenRpc();
    }
    return m.run(params, ctx);
  }

  // ------------------------------------------------------------------ notifications and state

  private broadcast(method: string, params?: unknown[]): void {
    for (const c of this.connections) c.notify(method, params);
  }

  /** Status ticks that computed a snapshot (one per tick, whatever the number of subscribers: tests and diagnostics). */
  snapshotsComputed = 0;

  private tick(): void {
    if (!this.hub.active) return;
    this.snapshotsComputed++;
    this.hub.tick(this.objects.snapshot(), this.objects.eventtime());
  }

  /** Once a second: the temperature store's sample (read straight from the readings) and, for open sockets, proc stats. */
  private second(): void {
    const temps = this.deps.printer.temperatures();
    const readings: Record<string, { temperature: number | null; target: number | null; power: number | null }> = {};
    for (const [key, r] of Object.entries(temps)) {
      const name = heaterName(key);
      if (name) readings[name] = { temperature: r.actual, target: r.target, power: r.target ? 1 : 0 };
    }
    this.temperatures.sample(readings);
    if (this.connections.size === 0) return;
    const sample = this.procStats.sample();
    this.broadcast('notify_proc_stat_update', [this.procStats.notification(sample, this.connections.size)]);
  }

  private onPrinterState(state: KlippyState, id: string): void {
    if (id === 'CONNECTING' || id === 'OPEN_SERIAL' || id === 'DETECT_SERIAL') this.gcode.reset();
    if (state === this.klippy) return;
    const was = this.klippy;
    this.klippy = state;
    if (state === 'ready') this.broadcast('notify_klippy_ready');
    else if (was === 'ready') this.broadcast(state === 'error' && this.deps.printer.state().flags.error ? 'notify_klippy_shutdown' : 'notify_klippy_disconnected');
  }

  private onReply(line: string): void {
    if (QUIET.test(line)) return;
    this.respond(line.startsWith('echo:') ? `// ${line.slice(5)}` : line);
  }

  private respond(line: string): void {
    this.console.add({ message: line, time: this.deps.clock.now() / 1000, type: 'response' });
    this.broadcast('notify_gcode_response', [line]);
  }

  private onJobStarted(path: string, size: number | null, user: string | undefined): void {
    const start = this.deps.clock.now() / 1000;
    this.job = { ...freshJob(), state: 'printing', filename: path, startedAt: this.deps.clock.monotonic(), extrudedAtStart: this.gcode.extruded, fileSize: size };
    this.broadcast('notify_history_changed', [{ action: 'added', job: {
      job_id: jobId(start), user: user ?? null, filename: path, exists: true, status: 'in_progress', start_time: start, end_time: null,
      print_duration: 0, total_duration: 0, filament_used: 0, metadata: {}, auxiliary_data: [] } }]);
  }

  private onJobEnded(state: 'complete' | 'cancelled' | 'error', message: string): void {
    if (this.job.state !== 'printing' && this.job.state !== 'paused') return;
    const snap = this.deps.jobs.snapshot();
    const now = this.deps.clock.monotonic();
    this.job = {
      ...this.job, state, message, endedAt: now,
      printDuration: snap.progress?.printTime ?? (now - (this.job.startedAt ?? now)) / 1000,
      progress: state === 'complete' ? 1 : (snap.progress?.completion ?? 0) / 100,
      filePosition: state === 'complete' ? this.job.fileSize ?? 0 : snap.progress?.filepos ?? 0,
    };
    const path = this.job.filename;
    const filament = Math.max(0, this.gcode.extruded - this.job.extrudedAtStart);
    // The history record is written as the job ends; announce it once it is there.
    setTimeout(() => {
      void this.deps.jobs.printHistory().then((records) => {
        const r = [...records].reverse().find((x) => x.path === path);
        if (!r) return;
        this.filamentByJob.set(jobId(r.start), filament);
        void this.database.post(GANTRY_NS, `filament.${jobId(r.start)}`, Math.round(filament * 100) / 100).catch(() => {});
        void this.enrich(r).then((extras) => this.broadcast('notify_history_changed', [{ action: 'finished', job: historyJob(r, extras) }]));
      }, () => {});
    }, 200).unref();
  }

  /** Filament counted per history job (also kept in the database, namespace `gantry`, to survive restarts). */
  private readonly filamentByJob = new Map<string, number>();

  private filamentOf(r: HistoryRecord): number {
    return this.filamentByJob.get(jobId(r.start)) ?? 0;
  }

  private async enrich(r: HistoryRecord): Promise<JobExtras> {
    const filamentUsed = this.filamentOf(r);
    if (r.origin !== 'local') return { exists: false, metadata: {}, filamentUsed };
    try {
      return { exists: true, metadata: await this.fileMethods.metadata(r.path), filamentUsed };
    } catch {
      return { exists: false, metadata: {}, filamentUsed };
    }
  }

  private fileChanged(action: string, path: string, source?: string): void {
    const dir = action.endsWith('_dir');
    const item = { root: GCODES, path, modified: action.startsWith('delete') ? 0 : Date.now() / 1000, size: 0, permissions: action.startsWith('delete') ? '' : 'rw' };
    const send = (i: typeof item) => this.broadcast('notify_filelist_changed', [{ action, item: i, ...(source !== undefined ? { source_item: { root: GCODES, path: source } } : {}) }]);
    if (action.startsWith('delete') || dir) return send(item);
    void this.deps.files.entry(path).then((e) => send({ ...itemOf(e), path }), () => send(item));
  }

  private async metadataChanged(path: string): Promise<void> {
    try {
      const f = await this.deps.files.file(path);
      this.broadcast('notify_metadata_update', [await this.fileMethods.metadataOf(f)]);
      this.broadcast('notify_filelist_changed', [{ action: 'modify_file', item: itemOf(f) }]);
    } catch {
      // gone meanwhile
    }
  }

  // ------------------------------------------------------------------ commands

  /** EXCLUDE_OBJECT NAME=<n> | CURRENT=1 through the cancel-object service; the names excluded (upper-cased). */
  private async excludeObject(name: string | null, current: boolean): Promise<string[]> {
    const objects = this.deps.objects!;
    const list = objects.outlines();
    const target = current ? list.find((o) => o.id === objects.activeId)
      : name !== null ? list.find((o) => o.object.toUpperCase() === name.replace(/^['"]|['"]$/g, '').toUpperCase()) : undefined;
    if ((current || name !== null) && target === undefined) throw new RpcError(400, `Unknown object: ${name ?? 'current'}`);
    if (target) await objects.cancel(target.id);
    return objects.outlines().filter((o) => o.cancelled).map((o) => o.object.toUpperCase()).sort();
  }

  private makeCommandHost(): CommandHost {
    const { printer, jobs } = this.deps;
    return {
      send: (lines) => printer.clientCommands(lines),
      settled: () => printer.settled(SETTLE_MS),
      pause: (user) => jobs.command('pause', { action: 'pause', user }),
      resume: (user) => jobs.command('pause', { action: 'resume', user }),
      cancel: (user) => jobs.command('cancel', { user }),
      printFile: (filename, user) => jobs.select('local', filename, { print: true, user }),
      ...(this.deps.objects ? { excludeObject: (name: string | null, current: boolean) => this.excludeObject(name, current) } : {}),
      resetFile: () => {
        if (this.job.state === 'printing' || this.job.state === 'paused') return;
        this.job = freshJob();
        if (jobs.isReady()) jobs.unselect();
      },
      setHeater: (heater, target) => {
        const key = heaterKey(heater);
        if (!key || !heaterName(key) || !this.objects.names().includes(heaterName(key)!)) throw new RpcError(400, `Error on 'SET_HEATER_TEMPERATURE': Unknown heater '${heater}'`);
        printer.setTemperature(key, target);
      },
      heaterKeys: () => this.objects.names().filter((n) => /^extruder\d*$|^heater_bed$|^heater_generic chamber$/.test(n)),
      reconnect: () => this.reconnect(),
      emergencyStop: () => this.emergencyStop(),
      respond: (line) => this.respond(line),
      saveState: async (name) => {
        // What was sent reaches the G-code state through the terminal log, which is delivered in 100 ms batches.
        await new Promise((resolve) => setTimeout(resolve, LOG_BATCH_MS));
        const g = this.gcode;
        // The modes a jog or an extrusion changes; factors and feed rate stay as the user set them meanwhile.
        this.savedStates.set(name, [g.absoluteCoordinates ? 'G90' : 'G91', g.absoluteExtrude ? 'M82' : 'M83']);
        if (this.savedStates.size > 100) this.savedStates.delete(this.savedStates.keys().next().value!);
      },
      // Klipper-faithful: the modes come back, the head is not moved back (no MOVE=1).
      restoreState: (name) => this.savedStates.get(name),
      extra: this.extraCommands(),
    };
  }

  /** The commands of the features this host has (the bed mesh's). */
  private extraCommands(): Map<string, ExtraCommand> {
    const out = new Map<string, ExtraCommand>();
    const mesh = this.bedMesh;
    if (!mesh) return out;
    const { printer } = this.deps;
    const host = { send: (lines: string[]) => printer.clientCommands(lines), settled: () => printer.settled(SETTLE_MS) };
    out.set('BED_MESH_CALIBRATE', { help: 'Probes the bed (the bed mesh\'s probe script) and reads the mesh', run: () => mesh.calibrate() });
    out.set('BED_MESH_PROFILE', { help: 'Bed mesh profiles: LOAD=default (M420 S1), REMOVE=<name>', run: async (params) => {
      for (const line of await mesh.profile(params, host)) this.respond(line);
    } });
    out.set('BED_MESH_CLEAR', { help: 'Switches bed levelling off (M420 S0)', run: () => mesh.clear(host) });
    return out;
  }

  private async reconnect(): Promise<void> {
    const { printer } = this.deps;
    const c = printer.connection();
    if (printer.isBusy()) throw new DomainError(ErrorCodes.PRINTER_BUSY, 'A print is running: cancel it first');
    if (printer.state().flags.operational || !printer.state().flags.closedOrError) await printer.disconnect();
    else if (c.port !== null) await printer.disconnect().catch(() => {});
    await printer.connect({ port: c.port ?? undefined, baudrate: c.baudrate ?? undefined });
  }

  /** M119 through the command queue (as /api/printer/command sends it), its lines read back as Klipper's endstop states. */
  private async queryEndstops(): Promise<Record<string, string>> {
    const { printer } = this.deps;
    if (!printer.isOperational()) throw new DomainError(ErrorCodes.PRINTER_NOT_OPERATIONAL, 'Printer is not connected');
    const lines: string[] = [];
    const unwatch = printer.watchReplies((line) => { if (/^\s*[xyz]\d?_(min|max)\s*:/i.test(line)) lines.push(line); });
    try {
      printer.clientCommands(['M119']);
      await printer.settled(SETTLE_MS);
      // The report's lines come before its ok; the thread may hand them over in the same batch as the ok, just after.
      for (let i = 0; i < 20 && lines.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    } finally {
      unwatch();
    }
    if (lines.length === 0) throw new RpcError(400, 'The firmware gave no endstop report to M119');
    return endstopsOf(lines);
  }

  private emergencyStop(): void {
    if (!this.deps.printer.isOperational()) throw new DomainError(ErrorCodes.PRINTER_NOT_OPERATIONAL, 'Printer is not connected');
    this.deps.printer.clientCommands(['M112']);
  }

  // ------------------------------------------------------------------ the method table

  private add(name: string, need: string | null, run: Handler, socketOnly = false): void {
    this.methods.set(name, { need, run, socketOnly });
  }

  private serverInfo(): Record<string, unknown> {
    const k = klippyState(this.deps.printer.state());
    return {
      klippy_connected: true, klippy_state: k.state,
      components: ['klippy_connection', 'application', 'websockets', 'authorization', 'file_manager', 'database', 'data_store', 'machine',
        'proc_stats', 'history', 'webcam', 'announcements', ...(this.power && this.deps.power?.service.configured() ? ['power'] : []),
        ...(this.deps.spools?.enabled() ? ['spoolman'] : []), ...(this.jobQueue ? ['job_queue'] : [])],
      failed_components: [], registered_directories: ROOTS, warnings: [], websocket_count: this.connections.size,
      moonraker_version: MOONRAKER_VERSION, missing_klippy_requirements: [], api_version: API_VERSION, api_version_string: API_VERSION.join('.'),
    };
  }

  /** Gantry's webcam settings (Settings → Webcam) as Moonraker's one webcam; none when it is off or has no URL. */
  private webcams(): Array<Record<string, unknown>> {
    const w = this.deps.config.current.webcam;
    if (!w.webcamEnabled || (!w.stream && !w.snapshot)) return [];
    return [{ name: 'webcam', location: 'printer', service: 'mjpegstreamer-adaptive', enabled: true, icon: 'mdiWebcam', target_fps: 15,
      target_fps_idle: 5, stream_url: w.stream, snapshot_url: w.snapshot, flip_horizontal: w.flipH, flip_vertical: w.flipV, rotation: 0,
      aspect_ratio: w.streamRatio, extra_data: {}, source: 'config', uid: 'gantry-webcam' }];
  }

  private register(): void {
    const { printer, jobs, config } = this.deps;
    const objects = (params: Plain): Wanted => {
      const o = params.objects;
      if (!isPlain(o)) throw badParam('objects must be an object of {name: null | [fields]}');
      const out: Wanted = {};
      for (const [name, fields] of Object.entries(o)) {
        if (fields === null || fields === undefined) out[name] = null;
        else if (Array.isArray(fields) && fields.every((f) => typeof f === 'string')) out[name] = fields as string[];
        else if (typeof fields === 'string') out[name] = fields === '' ? null : fields.split(',');
        else throw badParam(`Invalid fields for ${name}`);
      }
      return out;
    };
    const user = (ctx: CallContext) => ctx.caller.identity.name;

    this.add('server.connection.identify', null, (params, ctx) => {
      const conn = ctx.connection!;
      if (conn.identified) throw new RpcError(400, 'Connection already identified');
      for (const k of ['client_name', 'version', 'type', 'url']) if (typeof params[k] !== 'string') throw badParam(`Invalid or missing ${k}`);
      const creds: Credentials = { address: conn.address };
      if (typeof params.access_token === 'string') creds.accessToken = params.access_token;
      if (typeof params.api_key === 'string') creds.apiKey = params.api_key;
      if (creds.accessToken || creds.apiKey) {
        const caller = this.auth.resolve(creds);
        if (!this.auth.authenticated(caller)) throw unauthorized();
        conn.caller = caller;
      }
      if (!conn.authenticated) throw unauthorized();
      conn.identified = true;
      conn.client = { client_name: params.client_name, version: params.version, type: params.type, url: params.url };
      return { connection_id: conn.id };
    }, true);
    this.add('server.websocket.id', 'any', (_p, ctx) => ({ websocket_id: ctx.connection!.id }), true);
    this.add('server.info', 'STATUS', () => this.serverInfo());
    this.add('server.config', 'STATUS', () => {
      const cfg = {
        server: { host: config.current.server.host, port: config.current.server.port, temperature_store_size: TEMPERATURE_STORE_SIZE, gcode_store_size: 1000 },
        data_store: { temperature_store_size: TEMPERATURE_STORE_SIZE, gcode_store_size: 1000 },
        file_manager: { enable_object_processing: false, queue_gcode_uploads: false },
        authorization: { trusted_clients: config.current.moonraker.trustedClients, cors_domains: config.current.moonraker.corsDomains },
        history: {},
        ...(this.deps.spools?.enabled() ? { spoolman: { server: config.current.plugins.spoolman.server, sync_rate: config.current.plugins.spoolman.syncInterval } } : {}),
      };
      return { config: cfg, orig: cfg, files: [{ filename: 'config.yaml', sections: Object.keys(cfg) }] };
    });
    if (this.deps.spools) registerSpoolmanMethods((name, need, run) => this.add(name, need, run), this.deps.spools);
    this.add('server.temperature_store', 'STATUS', () => this.temperatures.reply());
    this.add('server.gcode_store', 'MONITOR_TERMINAL', (p) => {
      const count = p.count === undefined ? undefined : Number(p.count);
      if (count !== undefined && !Number.isFinite(count)) throw badParam('count must be a number');
      return { gcode_store: this.console.list(count) };
    });
    this.add('server.announcements.list', 'STATUS', () => ({ entries: [], feeds: [] }));
    this.add('server.webcams.list', 'STATUS', () => ({ webcams: this.webcams() }));
    this.add('server.webcams.get_item', 'STATUS', (p) => {
      const cam = this.webcams().find((w) => (p.uid !== undefined && w.uid === p.uid) || (p.name !== undefined && w.name === p.name));
      if (!cam) throw new RpcError(404, 'Webcam not found');
      return { webcam: cam };
    });
    this.add('machine.system_info', 'STATUS', async () => {
      const info = await systemInfo(config.current.server.uuid ?? 'gantry');
      const m = this.machine;
      if (m && isPlain(info.system_info)) Object.assign(info.system_info, { available_services: m.services(), service_state: m.serviceState(printer.isOperational()) });
      return info;
    });
    this.add('machine.proc_stats', 'STATUS', () => this.procStats.full(this.connections.size));

    // database
    this.add('server.database.list', 'STATUS', async () => ({ namespaces: await this.database.namespaces(), backups: [] }));
    this.add('server.database.get_item', 'STATUS', async (p) => ({ namespace: p.namespace, key: p.key ?? null, value: await this.database.get(p.namespace, p.key) }));
    this.add('server.database.post_item', 'STATUS', async (p) => ({ namespace: p.namespace, key: p.key, value: await this.database.post(p.namespace, p.key, p.value) }));
    this.add('server.database.delete_item', 'STATUS', async (p) => ({ namespace: p.namespace, key: p.key, value: await this.database.delete(p.namespace, p.key) }));

    // printer
    this.add('printer.info', 'STATUS', () => {
      const k = klippyState(printer.state());
      return { state: k.state, state_message: k.message, hostname: config.current.appearance.name || 'gantry', software_version: `gantry-${this.deps.version}`,
        cpu_info: printer.firmwareName() || 'Marlin', klipper_path: '', python_path: '', process_id: process.pid, user_id: 0, group_id: 0,
        log_file: '', config_file: '' };
    });
    this.add('printer.objects.list', 'STATUS', () => ({ objects: this.objects.names() }));
    this.add('printer.objects.query', 'STATUS', (p) => ({ eventtime: this.objects.eventtime(), status: select(this.objects.snapshot(), objects(p)) }));
    this.add('printer.objects.subscribe', 'STATUS', (p, ctx) => {
      const wanted = objects(p);
      const conn = ctx.connection!;
      conn.wanted = Object.keys(wanted).length ? wanted : null;
      return { eventtime: this.objects.eventtime(), status: select(this.objects.snapshot(), wanted) };
    }, true);
    this.add('printer.gcode.script', 'CONTROL', async (p, ctx) => {
      if (typeof p.script !== 'string') throw badParam('script must be a string');
      if (p.script.length > 100_000) throw badParam('script is too long');
      this.console.add({ message: p.script, time: this.deps.clock.now() / 1000, type: 'command' });
      await runScript(p.script, ctx.caller.identity, this.commandHost);
      return 'ok';
    });
    this.add('printer.gcode.help', 'STATUS', () => ({ ...Object.fromEntries(COMMANDS.map((c) => [c.name, c.help])),
      ...Object.fromEntries([...this.commandHost.extra ?? []].map(([name, c]) => [name, c.help])) }));
    this.power?.register((name, need, run) => this.add(name, need, run));
    this.jobQueue?.register((name, need, run) => this.add(name, need, (p, ctx) => run(p, ctx.caller.identity.name ?? null)));
    this.machine?.register((name, need, run) => this.add(name, need, run));
    this.add('printer.query_endstops.status', 'CONTROL', () => this.queryEndstops());
    this.add('printer.print.start', 'PRINT', async (p, ctx) => {
      if (typeof p.filename !== 'string' || !p.filename) throw badParam('filename is needed');
      await jobs.select('local', p.filename.replace(/^\/+/, ''), { print: true, user: user(ctx) });
      return 'ok';
    });
    this.add('printer.print.pause', 'PRINT', async (_p, ctx) => { await this.commandHost.pause(user(ctx)); return 'ok'; });
    this.add('printer.print.resume', 'PRINT', async (_p, ctx) => { await this.commandHost.resume(user(ctx)); return 'ok'; });
    this.add('printer.print.cancel', 'PRINT', async (_p, ctx) => { await this.commandHost.cancel(user(ctx)); return 'ok'; });
    this.add('printer.emergency_stop', 'CONTROL', () => { this.emergencyStop(); return 'ok'; });
    this.add('printer.restart', 'CONNECTION', async () => { await this.reconnect(); return 'ok'; });
    this.add('printer.firmware_restart', 'CONNECTION', async () => { await this.reconnect(); return 'ok'; });

    // files
    const f = this.fileMethods;
    this.add('server.files.list', 'FILES_LIST', (p) => f.list(p.root));
    this.add('server.files.roots', 'FILES_LIST', () => f.roots());
    this.add('server.files.get_directory', 'FILES_LIST', (p) => f.directory(p.path, p.extended === true || p.extended === 'true'));
    this.add('server.files.metadata', 'FILES_LIST', (p) => f.metadata(p.filename));
    this.add('server.files.metascan', 'FILES_LIST', async (p) => {
      if (typeof p.filename === 'string') await this.deps.files.analyse(p.filename.replace(/^\/+/, '')).catch(() => {});
      return f.metadata(p.filename);
    });
    this.add('server.files.post_directory', 'FILES_UPLOAD', (p) => f.postDirectory(p.path));
    this.add('server.files.delete_directory', 'FILES_DELETE', (p) => f.deleteDirectory(p.path, p.force === true || p.force === 'true'));
    this.add('server.files.delete_file', 'FILES_DELETE', (p) => f.deleteFile(p.path));
    this.add('server.files.move', 'FILES_DELETE', (p) => f.transfer(p.source, p.dest, 'move'));
    this.add('server.files.copy', 'FILES_UPLOAD', (p) => f.transfer(p.source, p.dest, 'copy'));

    // history
    const enrich = (r: HistoryRecord) => this.enrich(r);
    this.add('server.history.list', 'STATUS', async (p) => historyList(await jobs.printHistory(), p, enrich));
    this.add('server.history.get_job', 'STATUS', async (p) => historyJobById(await jobs.printHistory(), p.uid, enrich));
    this.add('server.history.totals', 'STATUS', async () => historyTotals(await jobs.printHistory(), (r) => this.filamentOf(r)));

    // access
    this.add('access.info', null, (_p, ctx) => ({ default_source: 'moonraker', available_sources: ['moonraker'], login_required: !this.auth.open,
      trusted: ctx.caller.source === 'trusted' }));
    this.add('access.oneshot_token', 'any', (_p, ctx) => this.auth.oneshot(ctx.caller, ctx.address));
    this.add('access.get_user', 'any', (_p, ctx) => ({ username: MoonrakerAuth.userName(ctx.caller), source: 'moonraker', created_on: 0 }));
    this.add('access.users.list', 'ADMIN', () => ({ users: this.deps.access.users.listUsers().map((u) => ({ username: u.name, source: 'moonraker', created_on: 0 })) }));
    this.add('access.get_api_key', 'any', (_p, ctx) => {
      const name = ctx.caller.identity.name;
      const own = name ? this.deps.access.users.getUser(name)?.apikey : undefined;
      if (own) return own;
      if (ctx.caller.identity.has('SETTINGS') && config.current.api.key) return config.current.api.key;
      throw forbiddenRpc();
    });
    this.add('access.login', null, async (p, ctx) => {
      if (typeof p.username !== 'string' || typeof p.password !== 'string') throw badParam('username and password are needed');
      const { access } = this.deps;
      const limited = config.current.devel.enableRateLimiter;
      const keys = [`address:${ctx.address}`, `user:${p.username.slice(0, 64)}`];
      const attempt = limited ? access.loginThrottle.begin(keys) : undefined;
      if (limited && !attempt) throw new RpcError(429, 'Too many failed login attempts. Please try again later.');
      const u = await access.checkCredentials(p.username, p.password);
      if (!u) throw unauthorized();
      attempt?.succeeded();
      const session = access.sessions.create(u.name, 'http');
      if (ctx.connection) ctx.connection.caller = { identity: access.identityForUser(u, 'http', session.id), source: 'token', sessionId: session.id };
      return { username: u.name, ...this.auth.issue(u.name, session.id), action: 'user_logged_in', source: 'moonraker' };
    });
    this.add('access.refresh_jwt', null, (p) => {
      if (typeof p.refresh_token !== 'string') throw badParam('refresh_token is needed');
      const fresh = this.auth.refresh(p.refresh_token);
      if (!fresh) throw unauthorized();
      return { username: fresh.username, token: fresh.token, source: 'moonraker', action: 'user_jwt_refresh' };
    });
    this.add('access.logout', 'any', (_p, ctx) => {
      if (ctx.caller.sessionId) this.deps.access.sessions.delete(ctx.caller.sessionId, 'logout');
      return { username: MoonrakerAuth.userName(ctx.caller), action: 'user_logged_out' };
    });
  }
}

/** A cross-origin client allowed by a `cors_domains` style pattern (`*` matches within a name, `http://*.lan`). */
function matchDomain(pattern: string, origin: string): boolean {
  const p = trimSlashes(pattern.trim());
  if (p === '*') return true;
  const re = new RegExp(`^${p.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^.]*')}$`, 'i');
  return re.test(origin);
}

/** Credentials from headers and query (docs/reference/moonraker.md §1.5). */
export function credentialsOf(headers: IncomingMessage['headers'], query: URLSearchParams, address: string): Credentials {
  const c: Credentials = { address };
  const auth = headers.authorization;
  const bearer = typeof auth === 'string' && /^Bearer\s+/i.test(auth) ? auth.replace(/^Bearer\s+/i, '').trim() : undefined;
  const xat = headers['x-access-token'];
  c.accessToken = bearer || (typeof xat === 'string' ? xat : undefined) || query.get('access_token') || undefined;
  const key = headers['x-api-key'];
  c.apiKey = typeof key === 'string' && key ? key : undefined;
  c.oneshot = query.get('token') ?? undefined;
  return c;
}
