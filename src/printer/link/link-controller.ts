// The printer link: owns the protocol engine and the job lifecycle, connects and disconnects, streams jobs, and keeps
// the printer's state (the link's, or the job's while one runs) with its texts and PrinterStateChanged events.
import type { Config } from '../../config/schema.ts';
import type { EventBus } from '../../core/event-bus.ts';
import type { Logger } from '../../core/logger.ts';
import { conflict, invalid, notOperational } from '../../core/errors.ts';
import type { EngineHooks } from '../../protocol/hooks.ts';
import type { TransportFactory } from '../../protocol/line-transport.ts';
import type { Timers } from '../../protocol/settings.ts';
import type { LinkStateId } from '../../protocol/connection-state.ts';
import { STATE_TEXT, stateFlags, BUSY_STATES, LINK_ACTIVE_STATES, OPERATIONAL_STATES, type ConnectionStateId } from '../printer-state.ts';
import { engineSettingsFrom, planConnection, type ConnectPlan } from './link-settings.ts';
import { JobStreamer, type LineInjector } from '../job/job-stream.ts';
import { JobLifecycle, displayState, stateText, type JobMoves } from '../job/job-lifecycle.ts';
import type { LineRulesEvents, ToolChangeLines } from './printer-line-rules.ts';
import type { EngineLink, LinkOptions } from './engine-link.ts';
import { WorkerLink, type LinkThreadSpawner } from './worker-link.ts';
import type { LinkThreadInit } from './link-messages.ts';
import type { SerialLog } from '../readings/serial-log.ts';
import type {
  ConnectOptions, ConnectionSnapshot, JobLineSource, JobStream, JobStreamListener, JobStreamOptions, LinkProfile, PrinterStateSnapshot, ResendStats,
} from '../types.ts';

/** Ports and transports (main.ts supplies serial + VIRTUAL). */
export interface PortProvider {
  listPorts(): Promise<string[]>;
  baudrates(): number[];
  /** Baudrates to try when auto-detecting. */
  detectionBaudrates(portCount: number): number[];
  /**
   * Opens transports in this thread (a link in the main thread, the reconnect probe). A promise: the transports, the
   * virtual printer and the engine load on first use, not at start, since the link usually runs in its own thread.
   */
  transports(): Promise<TransportFactory>;
}

/** Printer profiles (PrinterProfiles satisfies it). */
export interface ProfileSource {
  get(id: string): LinkProfile | undefined;
  getDefault(): LinkProfile;
  select?(id: string | null): void;
}

export interface LinkControllerDeps {
  serial: () => Config['serial'];
  events: EventBus;
  logger: Logger;
  timers: Timers;
  profiles: ProfileSource;
  ports: PortProvider;
  serialLog: SerialLog;
  /** The engine's hooks other than its state (readings, terminal, events, firmware actions). */
  hooks: () => EngineHooks;
  toolScripts: { refresh(): Promise<void>; lines(oldTool: number, newTool: number): ToolChangeLines | null };
  /** Temperature offsets to apply on a new link. */
  offsets: () => Record<string, number>;
  /** Every change of state() (and of what it reports). */
  stateChanged: (id: ConnectionStateId) => void;
  /** Runs the beforePrinterDisconnected script; false when there is none. */
  beforeDisconnect: () => Promise<boolean>;
  zChanged: (z: number, old: number | null) => void;
  /** A host word met in a streamed file (SET_ACTIVE_SPOOL …, PrinterService.handleHostWord). */
  hostWord?: (cmd: string) => void;
  /** How to start the printer link's own thread (serial.linkThread: worker); without it the link runs here. */
  thread?: { spawn: LinkThreadSpawner; config: () => LinkThreadInit['config']; virtualSdFolder: string | null };
}

export class LinkController {
  private engine: EngineLink | null = null;
  /**
   * Bumped by every connect, disconnect and close: a connect still preparing (port list, scripts) when another of
   * them comes is dropped before it opens a link, so a stop never leaves a link (or its thread) behind it.
   */
  private attempt = 0;
  /** The attempt that announced its connect and has not opened its link yet (0: none). */
  private preparing = 0;
  private closed = false;
  private linkState: LinkStateId = 'OFFLINE';
  private readonly lifecycle = new JobLifecycle(() => this.applyState(displayState(this.linkState, this.lifecycle.state)),
    () => this.engine?.isOperational() === true);
  private stateId: ConnectionStateId = 'OFFLINE';
  private errorText = '';
  private port: string | null = null;
  private baudrate: number | null = null;
  private profileId: string | null = null;
  private streamer: JobStreamer | null = null;
  /** While set, PrinterStateChanged payloads queue in `heldStateEvents` (see holdStateEvents). */
  private stateEventHold: Promise<void> | null = null;
  private heldStateEvents: Array<{ state_id: ConnectionStateId; state_string: string }> = [];
  /** Lines put into streamed jobs at chosen points (timelapse parking); null keeps the job path free of it. */
  private lineInjector: LineInjector | null = null;

  constructor(private readonly deps: LinkControllerDeps) {}

  get id(): ConnectionStateId { return this.stateId; }
  get error(): string { return this.errorText; }
  get job(): JobStreamer | null { return this.streamer; }
  /** The engine of the current link (null before the first connect); for the hooks and tests, never to write to. */
  get current(): EngineLink | null { return this.engine; }
  get currentF(): number | null { return this.engine?.currentF ?? null; }
  currentZ(): number | null { return this.engine?.currentZ ?? null; }
  profileInUse(): string | null { return this.profileId; }

  async connect(opts: ConnectOptions, prepare: () => Promise<void>): Promise<void> {
    if (this.closed) return;
    if (this.engine && this.isBusy()) {
      // Reconnecting would end the print (and reset most boards through DTR). Farm managers and home-automation
      // buttons send connect without looking; OctoPrint 1.9.3 ignores it while connected, so the answer stays 204.
      this.deps.serialLog.info('Connect ignored: a print or an SD upload is in progress (disconnect first to reconnect)');
      return;
    }
    if (this.engine && LINK_ACTIVE_STATES.has(this.stateId)) await this.disconnect();
    const attempt = ++this.attempt;
    const { profiles } = this.deps;
    const profile = opts.profileId ? profiles.get(opts.profileId) : profiles.getDefault();
    if (!profile) throw invalid('printerProfile is invalid');
    const port = opts.port && opts.port !== 'AUTO' ? opts.port : undefined;
    const baud = opts.baudrate && opts.baudrate > 0 ? opts.baudrate : undefined;
    // Accepted: the state says so at once, as OctoPrint's does, while the port list, the scripts and the link's
    // thread are prepared (70–190 ms of "Closed" otherwise). The link's own states follow from there.
    this.deps.events.emit('Connecting', {});
    this.preparing = attempt;
    this.onLinkState(port === 'VIRTUAL' || (port !== undefined && baud !== undefined) ? 'OPEN_SERIAL' : 'DETECT_SERIAL', '');
    let opened: { engine: EngineLink; plan: ConnectPlan } | null = null;
    try {
      opened = await this.openLink(attempt, profile, port, baud, prepare);
    } finally {
      // Failed or overtaken before a link was opened: back to what the link says (Closed).
      if (this.preparing === attempt) {
        if (opened === null) this.unannounce();
        else this.preparing = 0;
      }
    }
    if (opened === null) return;
    const { engine, plan } = opened;
    this.engine?.dispose();
    engine.setOffsets(this.deps.offsets());
    this.engine = engine;
    let p: Promise<void>;
    if (plan.kind === 'direct') {
      this.port = plan.port;
      this.baudrate = plan.baudrate;
      this.deps.serialLog.info(`Connecting to port ${plan.port}, baudrate ${plan.baudrate}`);
      p = engine.connect(plan.port, plan.baudrate);
    } else {
      this.port = plan.candidates[0]?.port ?? null;
      this.baudrate = null;
      this.deps.serialLog.info(`Detecting port and baudrate among ${plan.candidates.length} candidate(s)`);
      p = engine.connectAuto(plan.candidates).then(() => {
        if (this.engine === engine && engine.isOperational()) {
          this.port = engine.connectedPort;
          this.baudrate = engine.connectedBaudrate;
        }
      });
    }
    // Nothing escapes: failures end in an error state the API shows.
    await p.catch((err: unknown) => this.deps.logger.error({ err }, 'connect failed'));
  }

  /** The port list, the scripts and the link for a connect; null when a later connect, disconnect or close overtook it. */
  private async openLink(attempt: number, profile: LinkProfile, port: string | undefined, baud: number | undefined,
    prepare: () => Promise<void>): Promise<{ engine: EngineLink; plan: ConnectPlan } | null> {
    const { profiles, ports } = this.deps;
    const known = await ports.listPorts();
    if (port !== undefined && !known.includes(port)) throw invalid('port is invalid');
    this.profileId = profile.id;
    profiles.select?.(profile.id);
    // Files in the scripts folder may have changed, and Gantry's own snippets follow the profile.
    await this.refreshToolScripts();
    await prepare();
    if (this.closed || attempt !== this.attempt) return null;
    const hooks: EngineHooks = { ...this.deps.hooks(), stateChanged: (id, error) => this.onLinkState(id as LinkStateId, error) };
    const engine = await this.newLink({ hooks, settings: engineSettingsFrom(this.deps.serial()), rules: this.lineRules(),
      machine: { toolCount: profile.extruder.count, heatedBed: profile.heatedBed } });
    if (this.closed || attempt !== this.attempt) {
      engine.dispose();
      return null;
    }
    return { engine, plan: planConnection(port, baud, known, (n) => ports.detectionBaudrates(n)) };
  }

  /** A connect announced (see connect) did not open its link: the state goes back to the link's (Closed). */
  private unannounce(): void {
    this.preparing = 0;
    this.onLinkState(this.engine?.state ?? 'CLOSED', this.engine?.error ?? '');
  }

  /** Disconnects for good: connects still preparing, and any that come later, open nothing. */
  close(): Promise<void> {
    this.closed = true;
    return this.disconnect();
  }

  async disconnect(): Promise<void> {
    this.attempt++;
    if (this.preparing !== 0) this.unannounce();
    const engine = this.engine;
    if (!engine) return;
    this.deps.events.emit('Disconnecting', {});
    this.streamer?.abort('Disconnected');
    if (this.isOperational() && (await this.deps.beforeDisconnect())) {
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
  refreshToolScripts(): Promise<void> {
    return this.deps.toolScripts.refresh().catch((err: unknown) => this.deps.logger.warn({ err }, 'tool change scripts not loaded'));
  }

  /** In its own thread when configured so and main.ts said how to start one; here otherwise (the engine loaded then). */
  private async newLink(opts: LinkOptions): Promise<EngineLink> {
    const thread = this.deps.thread;
    if (thread && this.deps.serial().linkThread === 'worker') {
      const nice = this.deps.serial().linkThreadNice;
      return new WorkerLink(opts, thread.spawn, { config: thread.config(), virtualSdFolder: thread.virtualSdFolder, nice: nice === 0 ? null : nice });
    }
    const [{ LocalLink }, transports] = await Promise.all([import('./engine-link.ts'), this.deps.ports.transports()]);
    return new LocalLink(opts, transports, this.deps.timers);
  }

  /** Tool-change scripts and Z tracking on the link's line path (offsets are set on the link). */
  private lineRules(): LineRulesEvents {
    return {
      toolChangeLines: (oldTool, newTool) => {
        try {
          return this.deps.toolScripts.lines(oldTool, newTool);
        } catch (err) {
          this.deps.logger.warn({ err }, 'tool change scripts failed to render');
          return null;
        }
      },
      zChanged: (z, old) => this.deps.zChanged(z, old),
    };
  }

  setOffsets(offsets: Record<string, number>): void {
    this.engine?.setOffsets(offsets);
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
    if (!OPERATIONAL_STATES.has(id) && this.streamer) this.streamer.abort(this.errorText || 'Printer disconnected');
    if (was !== id) {
      const changed = { state_id: id, state_string: this.stateText(id) };
      if (this.stateEventHold) this.heldStateEvents.push(changed);
      else this.deps.events.emit('PrinterStateChanged', changed);
      this.deps.serialLog.info(`Changing monitoring state from "${STATE_TEXT[was]}" to "${this.stateText(id)}"`);
    }
    this.deps.stateChanged(id);
  }

  holdStateEvents(reported: Promise<unknown>): void {
    const timers = this.deps.timers;
    const capped = new Promise<void>((resolve) => {
      const timer = timers.setTimeout(resolve, 5000);
      void reported.catch(() => {}).finally(() => { timers.clearTimeout(timer); resolve(); });
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

  state(sdReady: boolean): PrinterStateSnapshot {
    const id = this.stateId;
    return { id, text: this.stateText(id), flags: stateFlags(id, sdReady && OPERATIONAL_STATES.has(id)), error: this.errorText };
  }

  private stateText(id: ConnectionStateId): string {
    // `… from SD` while the firmware prints from its card, `… send file to SD` while a file is written to it.
    return stateText(id, this.lifecycle.kind);
  }

  /**
   * The one job lifecycle for a print the firmware runs from its SD card (sd-job.ts moves it): said to be of kind
   * `sd`, so the state and its texts (`… from SD`) follow from the driver's moves.
   */
  beginSdJob(): JobMoves {
    this.link();
    if (this.streamer || this.isBusy()) throw conflict('Printer is already printing');
    this.lifecycle.begin('sd');
    return this.lifecycle;
  }

  connection(defaultProfile: string): ConnectionSnapshot {
    const closed = this.stateId === 'OFFLINE' || this.stateId === 'CLOSED';
    return {
      state: closed ? 'Closed' : this.stateText(this.stateId),
      port: closed ? null : this.port,
      baudrate: closed ? null : this.baudrate,
      printerProfile: this.profileId ?? defaultProfile,
    };
  }

  isOperational(): boolean { return OPERATIONAL_STATES.has(this.stateId); }
  isBusy(): boolean { return BUSY_STATES.has(this.stateId); }
  transferring(): boolean { return this.streamer !== null && this.lifecycle.kind === 'transfer'; }

  cancelTransfer(): boolean {
    const job = this.streamer;
    if (!job || this.lifecycle.kind !== 'transfer') return false;
    void job.cancel();
    return true;
  }

  resends(): ResendStats { return this.engine?.resendStats() ?? { count: 0, transmitted: 0, ratio: 0 }; }
  firmwareName(): string { return this.engine?.firmwareName ?? ''; }
  flowControl(): string { return this.engine?.flowControl ?? 'ping-pong'; }

  /** The engine of an operational link, or notOperational. */
  link(): EngineLink {
    if (!this.engine || !this.isOperational()) throw notOperational();
    return this.engine;
  }

  /** The injector the next streamed jobs ask for every file line (one owner; null removes it). */
  setLineInjector(injector: LineInjector | null): void {
    this.lineInjector = injector;
  }

  streamJob(source: JobLineSource, listener: JobStreamListener, opts: JobStreamOptions = {}): JobStream {
    const engine = this.link();
    if (this.streamer || this.isBusy()) throw conflict('Printer is already printing');
    const serial = this.deps.serial();
    const streamer = new JobStreamer(engine, afterSettled(this.refreshToolScripts(), source), {
      progress: (pos) => listener.progress?.(pos),
      stateChanged: (s) => listener.stateChanged?.(s),
      finished: (outcome, pos, error) => {
        if (this.streamer === streamer) this.streamer = null;
        listener.finished(outcome, pos, error);
      },
    }, { logPositionOnPause: serial.logPositionOnPause, abortHeatupOnCancel: serial.abortHeatupOnCancel, injector: this.lineInjector, ...opts },
    { lifecycle: this.lifecycle, toolChange: (line, planned) => engine.toolChange(line, planned), hostWord: (cmd) => this.deps.hostWord?.(cmd) });
    this.streamer = streamer;
    // Said before the first state change, so PrinterStateChanged already says what is going on.
    this.lifecycle.begin(opts.transfer === true ? 'transfer' : 'print');
    streamer.start();
    return {
      get filepos() { return streamer.sentFilepos; },
      get linesInFlight() { return streamer.linesInFlight; },
      positionBack: (back) => streamer.positionBack(back),
      sentTail: (max) => engine.sentTail(max),
      pause: (byFirmware) => {
        if (!byFirmware) return streamer.pause();
        streamer.markPaused();
        return Promise.resolve();
      },
      resume: (byFirmware) => streamer.resume(!byFirmware),
      cancel: async () => { await streamer.cancel(); },
      done: streamer.done,
      get state() { return streamer.state; },
    };
  }
}

/** The job's lines once `ready` has settled: the first line waits for the tool change scripts a job start reloads. */
async function* afterSettled(ready: Promise<void>, source: JobLineSource): JobLineSource {
  await ready;
  yield* source;
}
