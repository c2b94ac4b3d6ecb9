// The printer service: owns the link (engine + transport), its state, readings, terminal and events; the API's printer.
import type { ConfigStore } from '../config/config-store.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import { conflict, invalid, notOperational } from '../core/errors.ts';
import { ProtocolEngine } from '../protocol/engine.ts';
import type { EngineHooks } from '../protocol/hooks.ts';
import type { TransportFactory } from '../protocol/line-transport.ts';
import { realTimers, type Timers } from '../protocol/settings.ts';
import { engineSettingsFrom, planConnection } from './link-settings.ts';
import { STATE_TEXT, SD_STATE_TEXT, TRANSFER_STATE_TEXT, stateFlags, BUSY_STATES, LINK_ACTIVE_STATES, OPERATIONAL_STATES, type ConnectionStateId, type LinkStateId } from '../protocol/connection-state.ts';
import { JobStreamer, type LineInjector } from './job-stream.ts';
import { JobLifecycle, displayState, type JobState } from './job-lifecycle.ts';
import { PrinterLineRules } from './line-rules.ts';
import { PrinterReadings } from './printer-readings.ts';
import { SerialLog } from './serial-log.ts';
import { linkHooks } from './link-hooks.ts';
import { extrudeCommands, homeCommands, jogCommands, targetCommand } from './printer-commands.ts';
import { renderJobScript, type ScriptSource } from './scripts.ts';
import { ToolChangeScripts } from './tool-change-scripts.ts';
import type {
  ConnectOptions, ConnectionSnapshot, JobLineSource, JobStream, JobStreamListener, JobStreamOptions, LinkProfile, Position,
  FirmwareJobAction, Printer, PrinterListener, PrinterStateSnapshot, ResendStats, SdFileEntry, TemperatureHistoryEntry, TemperatureSnapshot,
} from './types.ts';

/** Ports and transports (main.ts supplies serial + VIRTUAL). */
export interface PortProvider {
  listPorts(): Promise<string[]>;
  baudrates(): number[];
  /** Baudrates to try when auto-detecting. */
  detectionBaudrates(portCount: number): number[];
  create: TransportFactory;
}

/** Printer profiles (PrinterProfiles satisfies it). */
export interface ProfileSource {
  get(id: string): LinkProfile | undefined;
  getDefault(): LinkProfile;
  select?(id: string | null): void;
}

export interface PrinterServiceDeps {
  config: ConfigStore;
  events: EventBus;
  logger: Logger;
  profiles: ProfileSource;
  ports: PortProvider;
  logsDir: string;
  scriptsDir?: string | null;
  timers?: Timers;
}

export class PrinterService implements Printer {
  private engine: ProtocolEngine | null = null;
  private lineRules: PrinterLineRules | null = null;
  private linkState: LinkStateId = 'OFFLINE';
  private readonly lifecycle = new JobLifecycle(() => this.applyState(displayState(this.linkState, this.lifecycle.state)),
    () => this.engine?.isOperational() === true);
  private stateId: ConnectionStateId = 'OFFLINE';
  private errorText = '';
  private port: string | null = null;
  private baudrate: number | null = null;
  private profileId: string | null = null;
  private readonly readings: PrinterReadings;
  private readonly serialLog: SerialLog;
  private listeners: PrinterListener[] = [];
  private readonly replyWatchers = new Set<(line: string) => void>();
  private job: JobStreamer | null = null;
  private readonly timers: Timers;
  /** The firmware prints from its SD card: state texts read `... from SD`. */
  private sdPrinting = false;
  /** The job streamed is a file being written to the SD card: state texts read `... send file to SD`. */
  private sdStreaming = false;
  private unwatchConfig: (() => void) | null = null;
  private readonly scriptSource: ScriptSource;
  private readonly toolScripts: ToolChangeScripts;
  /** While set, PrinterStateChanged payloads queue in `heldStateEvents` (see holdStateEvents). */
  private stateEventHold: Promise<void> | null = null;
  private heldStateEvents: Array<{ state_id: ConnectionStateId; state_string: string }> = [];
  /** Lines put into streamed jobs at chosen points (timelapse parking); null keeps the job path free of it. */
  private lineInjector: LineInjector | null = null;

  constructor(private readonly deps: PrinterServiceDeps) {
    this.timers = deps.timers ?? realTimers;
    const c = deps.config.current;
    this.readings = new PrinterReadings(c.temperature.cutoff);
    this.serialLog = new SerialLog(Math.max(c.serial.terminalLogSize, 300), (lines, received) => this.notify((l) => {
      l.log?.(lines);
      if (received.length > 0) l.messages?.(received);
    }));
    this.scriptSource = { settings: () => this.deps.config.current.scripts.gcode, scriptsDir: deps.scriptsDir ?? null, profile: () => this.profile() };
    this.toolScripts = new ToolChangeScripts({
      source: this.scriptSource,
      context: () => ({ last_position: this.readings.position, last_temperature: this.temperatures() }),
      ran: (name, payload) => {
        const event = name.charAt(0).toUpperCase() + name.slice(1);
        this.deps.events.emit(`GcodeScript${event}Running`, payload);
        this.deps.events.emit(`GcodeScript${event}Finished`, payload);
      },
    });
  }

  async start(): Promise<void> {
    const serial = this.deps.config.current.serial;
    this.serialLog.setFileLogging(serial.log, this.deps.logsDir);
    // serial.log and the scripts apply at once; the other serial settings on the next connect.
    this.unwatchConfig = this.deps.config.onChange((c, previous) => {
      this.serialLog.setFileLogging(c.serial.log, this.deps.logsDir);
      if (JSON.stringify(c.scripts) !== JSON.stringify(previous.scripts)) void this.refreshToolScripts();
    });
    if (serial.autoconnect) {
      this.connect({ port: serial.port ?? undefined, baudrate: serial.baudrate ?? undefined, profileId: this.deps.config.current.printerProfiles.default ?? undefined })
        .catch((err: unknown) => this.deps.logger.warn({ err }, 'autoconnect failed'));
    }
  }

  async stop(): Promise<void> {
    this.unwatchConfig?.();
    await this.disconnect();
    this.serialLog.close();
  }

  // ---------------------------------------------------------------- connection

  async connect(opts: ConnectOptions): Promise<void> {
    if (this.engine && LINK_ACTIVE_STATES.has(this.stateId)) await this.disconnect();
    const profile = opts.profileId ? this.deps.profiles.get(opts.profileId) : this.deps.profiles.getDefault();
    if (!profile) throw invalid('printerProfile is invalid');
    const ports = await this.deps.ports.listPorts();
    const port = opts.port && opts.port !== 'AUTO' ? opts.port : undefined;
    const baud = opts.baudrate && opts.baudrate > 0 ? opts.baudrate : undefined;
    if (port !== undefined && !ports.includes(port)) throw invalid('port is invalid');
    this.profileId = profile.id;
    this.deps.profiles.select?.(profile.id);
    // Files in the scripts folder may have changed, and Gantry's own snippets follow the profile.
    await this.refreshToolScripts();
    this.readings.reset();
    this.serialLog.setFileLogging(this.deps.config.current.serial.log, this.deps.logsDir);
    this.deps.events.emit('Connecting', {});
    const engine = new ProtocolEngine(this.hooks(), engineSettingsFrom(this.deps.config.current.serial), this.timers,
      { toolCount: profile.extruder.count, heatedBed: profile.heatedBed });
    const rules = this.newLineRules();
    rules.setOffsets(this.readings.offsets());
    engine.setLineRules(rules);
    this.lineRules = rules;
    this.engine = engine;
    const plan = planConnection(port, baud, ports, (n) => this.deps.ports.detectionBaudrates(n));
    let p: Promise<void>;
    if (plan.kind === 'direct') {
      this.port = plan.port;
      this.baudrate = plan.baudrate;
      this.serialLog.info(`Connecting to port ${plan.port}, baudrate ${plan.baudrate}`);
      p = engine.connect({ transport: this.deps.ports.create(plan.port, plan.baudrate), port: plan.port, baudrate: plan.baudrate });
    } else {
      this.port = plan.candidates[0]?.port ?? null;
      this.baudrate = null;
      this.serialLog.info(`Detecting port and baudrate among ${plan.candidates.length} candidate(s)`);
      p = engine.connectAuto(plan.candidates, this.deps.ports.create).then(() => {
        if (this.engine === engine && engine.isOperational()) {
          this.port = engine.connectedPort;
          this.baudrate = engine.connectedBaudrate;
        }
      });
    }
    // Nothing escapes: failures end in an error state the API shows.
    await p.catch((err: unknown) => this.deps.logger.error({ err }, 'connect failed'));
  }

  async disconnect(): Promise<void> {
    const engine = this.engine;
    if (!engine) return;
    this.deps.events.emit('Disconnecting', {});
    this.job?.abort('Disconnected');
    if (this.isOperational() && (await this.runScript('beforePrinterDisconnected', {}))) {
      // Let the script reach the firmware before the port closes, but never hang a disconnect on a silent printer.
      await this.settled(5000);
    }
    await engine.disconnect();
    if (this.engine === engine) {
      this.port = this.baudrate = null;
      this.profileId = null;
      this.deps.profiles.select?.(null);
    }
  }

  settled(timeoutMs: number): Promise<void> {
    const engine = this.engine;
    if (!engine) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      timer.unref();
      engine.marker(() => { clearTimeout(timer); resolve(); });
    });
  }

  fakeAck(): void {
    this.engine?.fakeAck();
  }

  /** Never fails: a script that cannot be loaded keeps the previous text (and is logged). */
  private async refreshToolScripts(): Promise<void> {
    await this.toolScripts.refresh().catch((err: unknown) => this.deps.logger.warn({ err }, 'tool change scripts not loaded'));
  }

  private hooks(): EngineHooks {
    return linkHooks({
      readings: this.readings, serialLog: this.serialLog, replyWatchers: this.replyWatchers, events: this.deps.events, config: this.deps.config,
      engine: () => this.engine, job: () => this.job, stateId: () => this.stateId, profile: () => this.profile(),
      currentF: () => this.lineRules?.currentF ?? null,
      applyState: (id, error) => this.onLinkState(id as LinkStateId, error), notify: (fn) => this.notify(fn), notifyState: () => this.notifyState(),
      runScript: (name, ctx) => this.runScript(name, ctx), disconnect: () => this.disconnect(), sdRefresh: () => this.sdRefresh(),
      jobAction: (action, firmwareError) => this.jobAction(action, firmwareError),
    });
  }

  /** Offsets, tool-change scripts and Z tracking on the link's line path. */
  private newLineRules(): PrinterLineRules {
    return new PrinterLineRules({
      toolChangeLines: (oldTool, newTool) => {
        try {
          return this.toolScripts.lines(oldTool, newTool);
        } catch (err) {
          this.deps.logger.warn({ err }, 'tool change scripts failed to render');
          return null;
        }
      },
      zChanged: (z, old) => {
        this.deps.events.emit('ZChange', { new: z, old });
        this.notify((l) => l.z?.(z));
      },
    });
  }

  /** The link moved: a job state only shows while the link is Operational. */
  private onLinkState(id: LinkStateId, error?: string): void {
    this.linkState = id;
    if (id !== 'OPERATIONAL') this.lifecycle.reset();
    this.applyState(displayState(id, this.lifecycle.state), error);
  }

  private applyState(id: ConnectionStateId, error?: string): void {
    const was = this.stateId;
    this.stateId = id;
    if (error !== undefined) this.errorText = error;
    if (id === 'OPEN_SERIAL' || id === 'DETECT_SERIAL') this.errorText = '';
    if (!OPERATIONAL_STATES.has(id) && this.job) this.job.abort(this.errorText || 'Printer disconnected');
    if (id === 'CLOSED' || id === 'CLOSED_WITH_ERROR') {
      this.readings.sdReady = false;
      this.readings.sdFiles = [];
    }
    if (was !== id) {
      if (!OPERATIONAL_STATES.has(id)) this.sdPrinting = false;
      const changed = { state_id: id, state_string: this.stateText(id) };
      if (this.stateEventHold) this.heldStateEvents.push(changed);
      else this.deps.events.emit('PrinterStateChanged', changed);
      this.serialLog.info(`Changing monitoring state from "${STATE_TEXT[was]}" to "${this.stateText(id)}"`);
    }
    this.notifyState();
  }

  holdStateEvents(reported: Promise<unknown>): void {
    const capped = new Promise<void>((resolve) => {
      const timer = this.timers.setTimeout(resolve, 5000);
      void reported.catch(() => {}).finally(() => { this.timers.clearTimeout(timer); resolve(); });
    });
    const hold: Promise<void> = Promise.all([this.stateEventHold, capped]).then(() => {
      if (this.stateEventHold !== hold) return; // a later hold releases everything, in order
      this.stateEventHold = null;
      const held = this.heldStateEvents;
      this.heldStateEvents = [];
      for (const changed of held) this.deps.events.emit('PrinterStateChanged', changed);
    });
    this.stateEventHold = hold;
  }

  private notifyState(): void {
    const s = this.state();
    this.notify((l) => l.state?.(s));
  }

  private jobAction(action: FirmwareJobAction, firmwareError?: string): boolean {
    let handled = false;
    this.notify((l) => {
      if (!l.jobAction) return;
      handled = true;
      l.jobAction(action, firmwareError);
    });
    return handled;
  }

  private notify(fn: (l: PrinterListener) => void): void {
    for (const l of this.listeners) {
      try {
        fn(l);
      } catch (err) {
        this.deps.logger.warn({ err }, 'printer listener failed');
      }
    }
  }

  // ---------------------------------------------------------------- snapshots

  state(): PrinterStateSnapshot {
    const id = this.stateId;
    const sdReady = this.deps.config.current.feature.sdSupport && this.readings.sdReady && OPERATIONAL_STATES.has(id);
    return { id, text: this.stateText(id), flags: stateFlags(id, sdReady), error: this.errorText };
  }

  private stateText(id: ConnectionStateId): string {
    return (this.sdPrinting ? SD_STATE_TEXT[id] : this.sdStreaming ? TRANSFER_STATE_TEXT[id] : undefined) ?? STATE_TEXT[id];
  }

  setSdPrintState(state: ConnectionStateId): void {
    const engine = this.engine;
    if (!engine || !this.isOperational() || this.job) return;
    this.sdPrinting = state !== 'OPERATIONAL';
    if (!this.lifecycle.move(state === 'OPERATIONAL' ? 'IDLE' : state as JobState)) this.sdPrinting = BUSY_STATES.has(this.stateId);
    this.notifyState();
  }

  connection(): ConnectionSnapshot {
    const closed = this.stateId === 'OFFLINE' || this.stateId === 'CLOSED';
    return {
      state: closed ? 'Closed' : this.stateText(this.stateId),
      port: closed ? null : this.port,
      baudrate: closed ? null : this.baudrate,
      printerProfile: this.profileId ?? this.deps.profiles.getDefault().id,
    };
  }

  isOperational(): boolean { return OPERATIONAL_STATES.has(this.stateId); }
  isBusy(): boolean { return BUSY_STATES.has(this.stateId); }
  isPrinting(): boolean { return this.job !== null; }
  transferring(): boolean { return this.job !== null && this.sdStreaming; }

  cancelTransfer(): boolean {
    const job = this.job;
    if (!job || !this.sdStreaming) return false;
    void job.cancel();
    return true;
  }

  profile(): LinkProfile {
    return (this.profileId ? this.deps.profiles.get(this.profileId) : undefined) ?? this.deps.profiles.getDefault();
  }

  temperatures(): TemperatureSnapshot { return this.readings.snapshot(this.profile()); }
  temperatureHistory(limit?: number): TemperatureHistoryEntry[] { return this.readings.history.list(limit); }
  offsets(): Record<string, number> { return this.readings.offsets(); }
  currentZ(): number | null { return this.lineRules?.currentZ ?? null; }
  lastPosition(): Position { return { ...this.readings.position }; }
  terminal(): string[] { return this.serialLog.lines().slice(-this.deps.config.current.serial.terminalLogSize); }
  resends(): ResendStats { return this.engine?.resendStats() ?? { count: 0, transmitted: 0, ratio: 0 }; }
  firmwareName(): string { return this.engine?.firmwareName ?? ''; }
  flowControl(): string { return this.engine?.flowControl ?? 'ping-pong'; }

  watchReplies(watch: (line: string) => void): () => void {
    const own = (line: string) => watch(line);
    this.replyWatchers.add(own);
    return () => { this.replyWatchers.delete(own); };
  }

  subscribe(listener: PrinterListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => { this.listeners = this.listeners.filter((l) => l !== listener); };
  }

  // ---------------------------------------------------------------- commands

  private link(): ProtocolEngine {
    if (!this.engine || !this.isOperational()) throw notOperational();
    return this.engine;
  }

  commands(lines: string[]): void {
    const engine = this.link();
    const profile = this.profile();
    for (const raw of lines) {
      const cmd = raw.trim();
      if (cmd === '') continue;
      // Heater commands for heaters the profile does not have are dropped, like tool numbers beyond the profile.
      const upper = cmd.toUpperCase();
      if (!profile.heatedBed && /^M(140|190)\b/.test(upper)) continue;
      if (!profile.heatedChamber && /^M(141|191)\b/.test(upper)) continue;
      if (this.deps.config.current.serial.sanityCheckTools && /^T\d+\b/.test(upper) && Number(upper.slice(1).split(' ')[0]) >= profile.extruder.count) continue;
      engine.enqueue(cmd);
    }
  }

  setTemperature(heater: string, target: number): void {
    this.commands([targetCommand(heater, target)]);
  }

  setTemperatureOffsets(offsets: Record<string, number>): void {
    this.readings.setOffsets(offsets);
    this.lineRules?.setOffsets(this.readings.offsets());
    this.notifyState();
  }

  jog(axes: { x?: number; y?: number; z?: number }, opts: { relative?: boolean; speed?: number | false } = {}): void {
    this.link();
    this.commands(jogCommands(this.profile(), axes, opts));
  }

  home(axes: Array<'x' | 'y' | 'z'>): void {
    this.link();
    this.commands(homeCommands(axes));
  }

  extrude(amount: number, speed?: number): void {
    this.link();
    this.commands(extrudeCommands(this.profile(), amount, speed));
  }

  selectTool(tool: number): void {
    this.commands([`T${tool}`]);
  }

  feedRate(percent: number): void { this.commands([`M220 S${percent}`]); }
  flowRate(percent: number): void { this.commands([`M221 S${percent}`]); }

  sdReady(): boolean { return this.readings.sdReady && this.isOperational(); }
  sdLongNames(): boolean { return this.readings.lfnWrite && this.deps.config.current.serial.capabilities.lfn_write; }
  sdFiles(): SdFileEntry[] { return this.isOperational() ? this.readings.sdFiles : []; }
  sdInit(): void { this.commands(['M21']); }
  sdRefresh(): void {
    if (!this.readings.sdReady) return;
    const c = this.deps.config.current.serial.capabilities;
    this.commands([c.extended_m20 && this.engine?.firmwareName.toLowerCase().includes('marlin') ? 'M20 L' : 'M20']);
  }
  sdRelease(): void {
    this.commands(['M22']);
    this.readings.sdReady = false;
    this.readings.sdFiles = [];
    this.notifyState();
  }

  /** Renders a GCODE script; null when no such script exists. */
  async script(name: string, context: Record<string, unknown> = {}): Promise<string[] | null> {
    // Same renderer as the job scripts, so snippets work from the command API too.
    return renderJobScript(name, this.scriptSource, { last_position: this.readings.position, last_temperature: this.temperatures(), ...context });
  }

  /** Renders and queues a script; fires GcodeScript<Name>Running/Finished. False when the script is unknown. */
  async runScript(name: string, context: Record<string, unknown>): Promise<boolean> {
    const lines = await this.script(name, context).catch(() => null);
    if (lines === null) return false;
    const event = name.charAt(0).toUpperCase() + name.slice(1);
    this.deps.events.emit(`GcodeScript${event}Running`, context);
    if (lines.length > 0 && this.isOperational()) this.commands(lines);
    this.deps.events.emit(`GcodeScript${event}Finished`, context);
    return true;
  }

  /** The injector the next streamed jobs ask for every file line (one owner; null removes it). */
  setLineInjector(injector: LineInjector | null): void {
    this.lineInjector = injector;
  }

  streamJob(source: JobLineSource, listener: JobStreamListener, opts: JobStreamOptions = {}): JobStream {
    const engine = this.link();
    if (this.job || this.isBusy()) throw conflict('Printer is already printing');
    const serial = this.deps.config.current.serial;
    const rules = this.lineRules;
    const streamer = new JobStreamer(engine, afterSettled(this.refreshToolScripts(), source), {
      progress: (pos) => listener.progress?.(pos),
      stateChanged: (s) => listener.stateChanged?.(s),
      finished: (outcome, pos, error) => {
        if (this.job === streamer) {
          this.job = null;
          this.sdStreaming = false;
        }
        listener.finished(outcome, pos, error);
      },
    }, { logPositionOnPause: serial.logPositionOnPause, abortHeatupOnCancel: serial.abortHeatupOnCancel, injector: this.lineInjector, ...opts },
    { lifecycle: this.lifecycle, toolChange: rules ? (line, planned) => rules.toolChange(line, planned) : undefined });
    this.job = streamer;
    // Set before the first state change, so PrinterStateChanged already says what is going on.
    this.sdStreaming = opts.transfer === true;
    streamer.start();
    return {
      get filepos() { return streamer.filepos; },
      get linesInFlight() { return streamer.linesInFlight; },
      positionBack: (back) => streamer.positionBack(back),
      pause: (byFirmware) => {
        if (!byFirmware) return streamer.pause();
        streamer.markPaused();
        return Promise.resolve();
      },
      resume: (byFirmware) => streamer.resume(!byFirmware),
      cancel: async () => { await streamer.cancel(); },
      done: streamer.done,
    };
  }
}

/** The job's lines once `ready` has settled: the first line waits for the tool change scripts a job start reloads. */
async function* afterSettled(ready: Promise<void>, source: JobLineSource): JobLineSource {
  await ready;
  yield* source;
}
