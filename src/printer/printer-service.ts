// The printer service: the API's printer, a facade over the link (link-controller.ts), the readings, the terminal
// and the scripts; it owns the listeners and hands each part only what it needs.
import type { ConfigSlice } from '../config/config-slice.ts';
import type { EventBus } from '../core/event-bus.ts';
import type { Logger } from '../core/logger.ts';
import { realTimers, type Timers } from '../protocol/settings.ts';
import type { EnqueueOptions } from '../protocol/engine.ts';
import type { LineInjector } from './job/job-stream.ts';
import type { JobMoves } from './job/job-lifecycle.ts';
import { LinkController, type PortProvider, type ProfileSource } from './link/link-controller.ts';
import type { LinkThreadSpawner } from './link/worker-link.ts';
import type { LinkThreadInit } from './link/link-messages.ts';
import { PrinterReadings } from './readings/printer-readings.ts';
import { SerialLog } from './readings/serial-log.ts';
import { actionHooks, readingHooks, terminalHooks } from './link/link-hooks.ts';
import { extrudeCommands, homeCommands, jogCommands, targetCommand } from './printer-commands.ts';
import { renderJobScript, type ScriptSource } from './job/job-scripts.ts';
import { conflict } from '../core/errors.ts';
import { commandCode } from '../gcode/line.ts';
import { ToolChangeScripts } from './link/tool-change-scripts.ts';
import type {
  ConnectOptions, ConnectionSnapshot, JobLineSource, JobStream, JobStreamListener, JobStreamOptions, LinkProfile, Position,
  FirmwareJobAction, Printer, PrinterListener, PrinterStateSnapshot, ResendStats, SdFileEntry, TemperatureHistoryEntry, TemperatureSnapshot,
} from './types.ts';

export type { PortProvider, ProfileSource } from './link/link-controller.ts';

/**
 * What the HTTP API asks of the printer. The routes take this, not the whole service, so that a stand-in (the inject
 * tests' printer) is checked against it: a route calling something new fails the type check, not a test at run time.
 */
export type PrinterApi = Pick<PrinterService,
  | 'connect' | 'disconnect' | 'fakeAck' | 'state' | 'connection' | 'isOperational' | 'isBusy' | 'profile' | 'firmwareName'
  | 'temperatures' | 'temperatureHistory' | 'clientCommands' | 'runScript' | 'setTemperature' | 'setTemperatureOffsets'
  | 'jog' | 'home' | 'extrude' | 'selectTool' | 'feedRate' | 'flowRate' | 'sdReady' | 'sdInit' | 'sdRefresh' | 'sdRelease'>;

/** The port choices the connection API offers and checks against. */
export type PortChoices = Pick<PortProvider, 'listPorts' | 'baudrates'>;

/**
 * How many commands may wait unwritten for the link. Each costs ≈ 90 bytes, and a printer writes a few hundred a second
 * at best: 300 API requests of 8,000 `G4 P1000` had queued 2.4 million (28 days of waiting) and grown the server by
 * 210 MB. The most one request of the default 100 KB body holds (≈ 34,000 one-letter lines) always fits an empty queue.
 */
export const MAX_WAITING_COMMANDS = 50_000;

/** The printer's slice of the configuration: `config.slice(...PRINTER_SECTIONS)`, read live. */
export const PRINTER_SECTIONS = ['serial', 'scripts', 'temperature', 'feature', 'printerProfiles'] as const;
export type PrinterConfig = ConfigSlice<typeof PRINTER_SECTIONS[number]>;

export interface PrinterServiceDeps {
  config: PrinterConfig;
  events: EventBus;
  logger: Logger;
  profiles: ProfileSource;
  ports: PortProvider;
  logsDir: string;
  scriptsDir?: string | null;
  timers?: Timers;
  /** Asked before every connect (power control switches the supply on and waits for the board, src/power/). */
  beforeConnect?: (opts: ConnectOptions) => Promise<void>;
  /** Starts the printer link's own thread (serial.linkThread: worker); absent, the link runs on this thread. */
  linkThread?: { spawn: LinkThreadSpawner; config: () => LinkThreadInit['config']; virtualSdFolder: string | null };
}

export class PrinterService implements Printer {
  private readonly link: LinkController;
  private readonly readings: PrinterReadings;
  private readonly serialLog: SerialLog;
  private listeners: PrinterListener[] = [];
  private readonly replyWatchers = new Set<(line: string) => void>();
  /** Words the host answers itself (Klipper-style `SET_ACTIVE_SPOOL ID=3`, src/spools/): never sent to the firmware. */
  private hostWords = new Map<string, (cmd: string) => void>();
  private unwatchConfig: (() => void) | null = null;
  /** The printer's G-code scripts (its settings' scripts.gcode, its scripts folder, its profile): the job's and the journal's too. */
  readonly scriptSource: ScriptSource;

  constructor(private readonly deps: PrinterServiceDeps) {
    const c = deps.config.get();
    const events = deps.events;
    this.readings = new PrinterReadings(c.temperature.cutoff);
    this.serialLog = new SerialLog(Math.max(c.serial.terminalLogSize, 300), (lines, received) => this.notify((l) => {
      l.log?.(lines);
      if (received.length > 0) l.messages?.(received);
    }), undefined, (err) => deps.logger.warn({ err }, 'serial.log cannot be written; lines are dropped, and it is opened again 10 s later'));
    this.scriptSource = { settings: () => this.deps.config.get().scripts.gcode, scriptsDir: deps.scriptsDir ?? null, profile: () => this.profile() };
    const toolScripts = new ToolChangeScripts({
      source: this.scriptSource,
      context: () => ({ last_position: this.readings.position, last_temperature: this.temperatures() }),
      ran: (name, payload) => {
        const event = name.charAt(0).toUpperCase() + name.slice(1);
        events.emit(`GcodeScript${event}Running`, payload);
        events.emit(`GcodeScript${event}Finished`, payload);
      },
    });
    const engine = () => this.link.current;
    const readings = this.readings;
    this.link = new LinkController({
      serial: () => this.deps.config.get().serial, events, logger: deps.logger, timers: deps.timers ?? realTimers,
      profiles: deps.profiles, ports: deps.ports, serialLog: this.serialLog, toolScripts, offsets: () => readings.offsets(),
      stateChanged: () => this.notifyState(),
      beforeDisconnect: () => this.runScript('beforePrinterDisconnected', {}),
      thread: deps.linkThread,
      hostWord: (cmd) => { this.runHostWord(cmd); },
      zChanged: (z, old) => {
        events.emit('ZChange', { new: z, old });
        this.notify((l) => l.z?.(z));
      },
      hooks: () => ({
        ...terminalHooks(this.serialLog, this.replyWatchers),
        ...readingHooks({
          readings, events, engine, stateId: () => this.link.id, profile: () => this.profile(), currentF: () => this.link.currentF,
          sdLowerCase: () => this.deps.config.get().serial.sdLowerCase, notify: (fn) => this.notify(fn), notifyState: () => this.notifyState(),
          runScript: (name, ctx) => this.runScript(name, ctx),
        }),
        ...actionHooks({
          readings, events, engine, job: () => this.link.job, jobAction: (action, err) => this.jobAction(action, err),
          notifyState: () => this.notifyState(), disconnect: () => this.disconnect(), sdRefresh: () => this.sdRefresh(),
        }),
      }),
    });
  }

  async start(): Promise<void> {
    const serial = this.deps.config.get().serial;
    this.serialLog.setFileLogging(serial.log, this.deps.logsDir);
    // serial.log and the scripts apply at once; the other serial settings on the next connect.
    this.unwatchConfig = this.deps.config.onChange((c, previous) => {
      this.serialLog.setFileLogging(c.serial.log, this.deps.logsDir);
      if (JSON.stringify(c.scripts) !== JSON.stringify(previous.scripts)) void this.link.refreshToolScripts();
    });
    if (serial.autoconnect) {
      this.connect({ port: serial.port ?? undefined, baudrate: serial.baudrate ?? undefined, profileId: this.deps.config.get().printerProfiles.default ?? undefined })
        .catch((err: unknown) => this.deps.logger.warn({ err }, 'autoconnect failed'));
    }
  }

  async stop(): Promise<void> {
    this.unwatchConfig?.();
    await this.link.close();
    this.serialLog.close();
  }

  // ---------------------------------------------------------------- connection

  async connect(opts: ConnectOptions): Promise<void> {
    await this.deps.beforeConnect?.(opts).catch((err: unknown) => this.deps.logger.warn({ err }, 'power on before connecting failed'));
    return this.link.connect(opts, async () => {
      this.readings.reset();
      this.serialLog.setFileLogging(this.deps.config.get().serial.log, this.deps.logsDir);
    });
  }

  disconnect(): Promise<void> { return this.link.disconnect(); }
  settled(timeoutMs: number): Promise<void> { return this.link.settled(timeoutMs); }
  fakeAck(): void { this.link.fakeAck(); }
  holdStateEvents(reported: Promise<unknown>): void { this.link.holdStateEvents(reported); }

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
    return this.link.state(this.deps.config.get().feature.sdSupport && this.readings.sdReady);
  }

  beginSdJob(): JobMoves { return this.link.beginSdJob(); }
  connection(): ConnectionSnapshot { return this.link.connection(this.deps.profiles.getDefault().id); }
  isOperational(): boolean { return this.link.isOperational(); }
  isBusy(): boolean { return this.link.isBusy(); }
  isPrinting(): boolean { return this.link.job !== null; }
  transferring(): boolean { return this.link.transferring(); }
  cancelTransfer(): boolean { return this.link.cancelTransfer(); }

  profile(): LinkProfile {
    const id = this.link.profileInUse();
    return (id ? this.deps.profiles.get(id) : undefined) ?? this.deps.profiles.getDefault();
  }

  temperatures(): TemperatureSnapshot { return this.readings.snapshot(this.profile()); }
  temperatureHistory(limit?: number): TemperatureHistoryEntry[] { return this.readings.history.list(limit); }
  offsets(): Record<string, number> { return this.readings.offsets(); }
  currentZ(): number | null { return this.link.currentZ(); }
  lastPosition(): Position { return { ...this.readings.position }; }
  terminal(): string[] { return this.serialLog.lines().slice(-this.deps.config.get().serial.terminalLogSize); }
  resends(): ResendStats { return this.link.resends(); }
  firmwareName(): string { return this.link.firmwareName(); }
  flowControl(): string { return this.link.flowControl(); }
  /**
   * The firmware sent `start` (it booted) since this link was opened (detection answers are not seen): after a reconnect, a
   * print can only be continued where it stopped when this is false (recovery).
   */
  sawFirmwareStart(): boolean { return this.link.current?.sawStart ?? false; }

  watchReplies(watch: (line: string) => void): () => void {
    const own = (line: string) => watch(line);
    this.replyWatchers.add(own);
    return () => { this.replyWatchers.delete(own); };
  }

  /** `word` (upper case) in a command from the terminal, the API or a script runs `fn` here instead of going out. */
  handleHostWord(word: string, fn: (cmd: string) => void): () => void {
    this.hostWords = new Map(this.hostWords).set(word, fn);
    return () => { if (this.hostWords.get(word) === fn) { this.hostWords = new Map(this.hostWords); this.hostWords.delete(word); } };
  }

  private isHostWord(cmd: string): boolean {
    const c = cmd.charCodeAt(0) & ~32;
    if (c === 71 || c === 77 || c === 84) return false;
    const sp = cmd.search(/\s/);
    return this.hostWords.has((sp < 0 ? cmd : cmd.slice(0, sp)).toUpperCase());
  }

  /** A host word's answer, shown in the terminal like a firmware line. */
  hostSays(line: string): void { this.serialLog.info(line); }

  /** Runs a host word's handler; false when `cmd` is none (G, M, T codes never are). */
  runHostWord(cmd: string): boolean {
    if (this.hostWords.size === 0) return false;
    const c = cmd.charCodeAt(0) & ~32;
    if (c === 71 || c === 77 || c === 84) return false;
    const sp = cmd.search(/\s/);
    const fn = this.hostWords.get((sp < 0 ? cmd : cmd.slice(0, sp)).toUpperCase());
    if (!fn) return false;
    this.serialLog.info(`Host: ${cmd}`);
    fn(cmd);
    return true;
  }

  subscribe(listener: PrinterListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => { this.listeners = this.listeners.filter((l) => l !== listener); };
  }

  // ---------------------------------------------------------------- commands

  commands(lines: string[], opts: EnqueueOptions = {}): void {
    // Host words are answered here, also while no printer is connected; they are not firmware commands.
    const rest = this.hostWords.size === 0 ? lines : lines.filter((l) => !this.runHostWord(l.trim()));
    if (rest.length === 0) return;
    const engine = this.link.link();
    const profile = this.profile();
    for (const raw of rest) {
      const cmd = raw.trim();
      if (cmd === '') continue;
      // Heater commands for heaters the profile does not have are dropped, like tool numbers beyond the profile.
      const upper = cmd.toUpperCase();
      if (!profile.heatedBed && /^M(140|190)\b/.test(upper)) continue;
      if (!profile.heatedChamber && /^M(141|191)\b/.test(upper)) continue;
      if (this.deps.config.get().serial.sanityCheckTools && /^T\d+\b/.test(upper) && Number(upper.slice(1).split(' ')[0]) >= profile.extruder.count) continue;
      engine.enqueue(cmd, opts);
    }
  }

  clientCommands(lines: string[]): void {
    if (this.hostWords.size > 0 && lines.every((l) => this.isHostWord(l.trim()))) return this.commands(lines);
    const waiting = this.link.link().queuedCommands;
    // An emergency stop on its own always goes: it is written ahead of the queue.
    const emergency = this.deps.config.get().serial.emergencyCommands;
    const urgent = lines.every((l) => emergency.includes(commandCode(l.trim()) ?? ''));
    if (!urgent && waiting + lines.length > MAX_WAITING_COMMANDS) {
      throw conflict(`The printer's command queue is full: ${waiting} commands wait to be sent (at most ${MAX_WAITING_COMMANDS}); send more once they have gone`);
    }
    this.commands(lines);
  }

  setTemperature(heater: string, target: number): void {
    this.clientCommands([targetCommand(heater, target)]);
    // The target is what was asked for, at once: behind queued moves the command may wait a second or more.
    this.readings.askTarget(heater, target);
  }

  setTemperatureOffsets(offsets: Record<string, number>): void {
    this.readings.setOffsets(offsets);
    this.link.setOffsets(this.readings.offsets());
    this.notifyState();
  }

  jog(axes: { x?: number; y?: number; z?: number }, opts: { relative?: boolean; speed?: number | false } = {}): void {
    this.link.link();
    this.clientCommands(jogCommands(this.profile(), axes, opts));
  }

  home(axes: Array<'x' | 'y' | 'z'>): void {
    this.link.link();
    this.clientCommands(homeCommands(axes));
  }

  extrude(amount: number, speed?: number): void {
    this.link.link();
    this.clientCommands(extrudeCommands(this.profile(), amount, speed));
  }

  selectTool(tool: number): void {
    this.clientCommands([`T${tool}`]);
  }

  feedRate(percent: number): void { this.clientCommands([`M220 S${percent}`]); }
  flowRate(percent: number): void { this.clientCommands([`M221 S${percent}`]); }

  sdReady(): boolean { return this.readings.sdReady && this.isOperational(); }
  sdLongNames(): boolean { return this.readings.lfnWrite && this.deps.config.get().serial.capabilities.lfn_write; }
  sdFiles(): SdFileEntry[] { return this.isOperational() ? this.readings.sdFiles : []; }
  sdInit(): void { this.commands(['M21']); }
  sdRefresh(): void {
    if (!this.readings.sdReady) return;
    const c = this.deps.config.get().serial.capabilities;
    // Once: a firmware repeating //action:sd_updated, or a client refreshing in a loop, would queue a listing each time.
    this.commands([c.extended_m20 && this.link.firmwareName().toLowerCase().includes('marlin') ? 'M20 L' : 'M20'], { once: true });
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
    this.link.setLineInjector(injector);
  }

  streamJob(source: JobLineSource, listener: JobStreamListener, opts: JobStreamOptions = {}): JobStream {
    return this.link.streamJob(source, listener, opts);
  }
}
