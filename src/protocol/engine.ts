// The G-code protocol engine: composes the sender, the link supervisor and the reply handler; owns the link's state.
// Its owner drives it through methods and hears it through hooks; no field of it is written from outside.
import { canLinkTransition, type LinkStateId } from './connection-state.ts';
import type { EngineHooks } from './hooks.ts';
import { DEFAULT_ENGINE_SETTINGS, realTimers, type EngineSettings, type Timers } from './settings.ts';
import { LineSender, type EnqueueOptions, type JobFeed, type SenderSnapshot } from './line-sender.ts';
import type { LineRules } from './line-rules.ts';
import { LinkSupervisor } from './link-supervisor.ts';
import { ReplyHandler } from './reply-handler.ts';
import { FirmwareState } from './firmware-state.ts';
import { detectPort, type DetectionCandidate } from './detection.ts';
import type { LineTransport, TransportFactory } from './line-transport.ts';
import { commandCode, param } from '../gcode/line.ts';
import { trimLineNoise } from './line-noise.ts';

export type { EnqueueOptions, JobFeed } from './line-sender.ts';
export type { LineRules, LineContext } from './line-rules.ts';

export interface ConnectTarget {
  transport: LineTransport;
  port: string;
  baudrate: number;
}

/** The machine as the profile describes it (what an emergency stop switches off). */
export interface MachineShape {
  toolCount: number;
  heatedBed: boolean;
}

export class ProtocolEngine {
  /** The configured settings; `effectiveSettings` adds what the detected firmware needs. */
  readonly settings: EngineSettings;
  private readonly fw: FirmwareState;
  private readonly timers: Timers;
  private readonly sender: LineSender;
  private readonly supervisor: LinkSupervisor;
  private readonly replies: ReplyHandler;
  private stateId: LinkStateId = 'OFFLINE';
  private errorText = '';
  private port = '';
  private baudrate = 0;
  private busySeen = false;

  constructor(private readonly hooks: EngineHooks, settings: Partial<EngineSettings> = {}, timers: Timers = realTimers,
    private readonly machine: MachineShape = { toolCount: 1, heatedBed: true }) {
    this.settings = { ...DEFAULT_ENGINE_SETTINGS, ...settings };
    this.timers = timers;
    this.fw = new FirmwareState(this.settings, hooks, (cmd) => this.enqueue(cmd));
    const fw = this.fw;
    const current = (): EngineSettings => fw.effective;
    this.sender = new LineSender(current, timers, {
      sent: hooks.sent ? (w) => hooks.sent!(w) : undefined,
      commandWritten: (cmd, code) => this.commandWritten(cmd, code),
      suppressed: (cmd, reason) => hooks.commandSuppressed?.(cmd, reason),
      mayWrite: () => this.stateId !== 'CONNECTING' && this.stateId !== 'OPEN_SERIAL' && this.stateId !== 'DETECT_SERIAL',
      linkFailed: (err) => this.onClose(err),
      fail: (text, reason) => this.fail(text, reason),
      currentTool: () => fw.tool,
      firmwareKnown: () => fw.known,
    });
    this.supervisor = new LinkSupervisor(current, timers, this.sender, {
      connecting: () => this.stateId === 'CONNECTING', operational: () => this.isOperational(),
      giveUp: () => void this.disconnect(), fail: (text, reason) => this.fail(text, reason), message: (text) => hooks.message?.(text),
    });
    this.replies = new ReplyHandler({
      firmware: fw, acks: this.sender,
      link: {
        connecting: () => this.stateId === 'CONNECTING', operational: () => this.isOperational(),
        failed: () => this.stateId === 'ERROR' || this.stateId === 'CLOSED_WITH_ERROR', handshakeAnswered: () => this.onConnected(),
        startWhileConnecting: () => this.supervisor.startWhileConnecting(), externalReset: () => this.onExternalReset(),
        ok: (line) => this.ok(line), busy: () => this.onBusy(), fail: (text, reason, stop) => this.fail(text, reason, stop),
      },
    }, hooks, timers, current, this.supervisor.targets);
  }

  get state(): LinkStateId { return this.stateId; }
  get error(): string { return this.errorText; }
  get effectiveSettings(): EngineSettings { return this.fw.effective; }
  get flowControl(): string { return this.sender.flowControl; }
  get connectedPort(): string { return this.port; }
  get connectedBaudrate(): number { return this.baudrate; }
  get linesInFlight(): number { return this.sender.linesInFlight; }
  /** Commands queued and not yet written (read per client command, not per line: the snapshot is an object). */
  get queuedCommands(): number { return this.sender.snapshot().queued; }
  /** See LineSender.sentTail: the recovery's re-sync after a dropped link reads which lines the firmware holds. */
  sentTail(max: number): { lines: Array<{ n: number; wire: string }>; staged: boolean } { return this.sender.sentTail(max); }
  get strayOks(): number { return this.sender.strayOks; }
  get firmwareName(): string { return this.fw.name; }
  get firmwareInfoReceived(): boolean { return this.fw.known; }
  get currentTool(): number { return this.fw.tool; }
  get autoreportTemp(): boolean { return this.supervisor.autoreportTemp; }
  /** The firmware reports SD progress by itself (M27 S<n> sent): SD jobs need not poll M27. */
  get autoreportSd(): boolean { return this.fw.sdAutoreport; }
  get emergencyParser(): boolean { return this.fw.parser; }
  get jobActive(): boolean { return this.sender.jobActive; }
  /** The firmware sent `start` (it booted) since the link was opened (while connecting, or later as printerReset). */
  get sawStart(): boolean { return this.supervisor.sawStart; }
  isOperational(): boolean { return this.stateId === 'OPERATIONAL'; }
  snapshot(): SenderSnapshot { return this.sender.snapshot(); }
  capabilities(): Record<string, boolean> { return this.replies.capabilities(); }
  communicationTimeoutMs(): number { return this.supervisor.communicationTimeoutMs(); }

  resendStats(): { count: number; transmitted: number; ratio: number } {
    const count = this.sender.resendRequests;
    const sent = this.sender.sentCount;
    return { count, transmitted: sent, ratio: sent ? Math.round((count * 100) / sent) : 0 };
  }

  /** A job streams: its lines are numbered, send-ahead applies, timeouts probe. */
  setJobActive(active: boolean): void { this.sender.jobActive = active; }
  /** The owner's rewrites, expansions and move listener on the line path (null removes them). */
  setLineRules(rules: LineRules | null): void { this.sender.setRules(rules); }
  setFeed(feed: JobFeed | null): void { this.sender.setFeed(feed); }
  /** Runs `fn` once everything queued before it has been written and acknowledged. */
  marker(fn: () => void): void { this.sender.marker(fn); }
  pump(): void { this.sender.pump(); }
  /** The tool once everything queued has been written. */
  plannedTool(): number { return this.sender.plannedTool(); }

  /** Queue a command for the firmware (user, script, internal). Emergency commands jump the queue. */
  enqueue(cmd: string, opts: EnqueueOptions = {}): void {
    const code = commandCode(cmd);
    if (code !== null && this.fw.effective.emergencyCommands.includes(code)) {
      if (code === 'M112') this.emergencyStop();
      // The firmware's emergency parser acts on it while its queue is full; an ok follows.
      else if (this.fw.parser && this.sender.transport) this.sender.writeNow(cmd);
      else this.sender.enqueue(cmd, { first: true });
      return;
    }
    this.sender.enqueue(cmd, opts);
  }

  // ---------------------------------------------------------------- link lifecycle

  private setState(id: LinkStateId, error?: string): boolean {
    if (id === this.stateId && error === undefined) return true;
    if (!canLinkTransition(this.stateId, id)) return false;
    this.stateId = id;
    if (error !== undefined) this.errorText = error;
    else if (id === 'OPEN_SERIAL' || id === 'DETECT_SERIAL') this.errorText = '';
    this.hooks.stateChanged?.(id, this.errorText);
    return true;
  }

  /** Opens the transport and runs the hello handshake; resolves once the port is open (Operational comes later). */
  async connect(target: ConnectTarget): Promise<void> {
    this.port = target.port;
    this.baudrate = target.baudrate;
    this.setState('OPEN_SERIAL');
    const t = target.transport;
    this.listen(t, true);
    try {
      await t.open();
    } catch (err) {
      this.listen(t, false);
      this.closedWithError(`Connection error: ${(err as Error).message}`, 'connection');
      return;
    }
    this.attach(t);
    this.setState('CONNECTING');
    this.supervisor.beginHandshake();
  }

  /** Auto-detection: the first candidate (port × baudrate) that answers goes straight to Operational. */
  async connectAuto(candidates: DetectionCandidate[], create: TransportFactory): Promise<void> {
    this.setState('DETECT_SERIAL');
    const found = await detectPort(candidates, create, this.timers, {
      helloCommand: this.settings.helloCommand, attemptTimeout: this.settings.timeout.detectionConsecutive,
      cancelled: () => this.stateId !== 'DETECT_SERIAL', log: (text) => this.hooks.message?.(text),
    });
    if (this.stateId !== 'DETECT_SERIAL') {
      await found?.transport.close().catch(() => {});
      return;
    }
    if (!found) {
      this.closedWithError('No more candidates to test, and no working port/baudrate combination detected.', 'autodetect');
      return;
    }
    this.port = found.port;
    this.baudrate = found.baudrate;
    this.listen(found.transport, true);
    this.attach(found.transport);
    this.supervisor.beginDetected();
    this.onConnected();
  }

  /** Requested close: Offline. Nothing throws. */
  async disconnect(): Promise<void> {
    const t = this.sender.transport;
    this.detach();
    if (this.stateId !== 'OFFLINE' && this.stateId !== 'CLOSED' && this.stateId !== 'CLOSED_WITH_ERROR') this.setState('CLOSED');
    if (t) {
      this.listen(t, false);
      await t.close().catch(() => {});
      this.hooks.disconnected?.();
    }
  }

  /** A fatal problem: Error with the text, optional emergency stop, then Offline after error. */
  fail(text: string, reason: string, emergencyStop = false): void {
    const t = this.sender.transport;
    if (!t || this.stateId === 'ERROR') return;
    if (emergencyStop) this.sender.writeEmergencyStop(this.machine.toolCount, this.machine.heatedBed);
    this.setState('ERROR', text);
    this.hooks.error?.(text, reason);
    this.detach();
    this.listen(t, false);
    void t.close().catch(() => {});
    this.setState('CLOSED_WITH_ERROR');
    this.hooks.disconnected?.();
  }

  /** Pretend an ok arrived (the API's fake_ack, for a lost acknowledgement). */
  fakeAck(): void {
    if (this.sender.transport) this.ok('ok');
  }

  /** M112: unnumbered first (emergency parser), numbered as well, heaters off, then close with an error. */
  emergencyStop(): void {
    if (!this.sender.transport) return;
    this.hooks.emergencyStop?.();
    this.fail('Closing serial port due to emergency stop M112.', 'emergency', true);
  }

  private closedWithError(text: string, reason: string): void {
    this.setState('ERROR', text);
    this.hooks.error?.(this.errorText, reason);
    this.setState('CLOSED_WITH_ERROR');
  }

  private listen(t: LineTransport, on: boolean): void {
    if (on) {
      t.on('line', this.onLine);
      t.on('close', this.onClose);
    } else {
      t.off('line', this.onLine);
      t.off('close', this.onClose);
    }
  }

  private attach(t: LineTransport): void {
    this.sender.attach(t);
    this.supervisor.reset();
    this.supervisor.targets.clear();
    this.fw.reset();
    this.busySeen = false;
    this.replies.reset();
  }

  private detach(): void {
    this.supervisor.stop();
    this.sender.detach();
  }

  private onClose = (error?: Error): void => {
    const t = this.sender.transport;
    if (!t) return;
    this.detach();
    this.listen(t, false);
    if (error) this.closedWithError(`Connection error: ${error.message}`, 'connection');
    else this.setState('CLOSED');
    this.hooks.disconnected?.();
  };

  private onConnected(): void {
    this.setState('OPERATIONAL');
    this.supervisor.connected();
    this.hooks.connected?.(this.port, this.baudrate);
    this.enqueue('M110 N0');
    this.enqueue('M115');
    this.enqueue(this.settings.sdAlwaysAvailable ? 'M20' : 'M21');
    // A first reading right away, so clients do not see empty temperatures until the first poll or autoreport.
    this.enqueue('M105', { poll: true });
  }

  /** The firmware rebooted under us (`start` while operational): resynchronise. */
  private onExternalReset(): void {
    this.sender.clear();
    this.supervisor.startReceived();
    const autoreport = this.supervisor.autoreportTemp;
    this.hooks.printerReset?.();
    this.supervisor.sendHello();
    this.enqueue('M110 N0');
    // The firmware forgot what it was told: the autoreports and the keepalive interval are asked for again.
    const t = this.fw.effective.timeout;
    if (autoreport) this.enqueue(`M155 S${t.temperatureAutoreport}`);
    if (this.fw.sdAutoreport) this.enqueue(`M27 S${t.sdStatusAutoreport}`);
    if (this.supervisor.busyConfirmed) this.enqueue(`M113 S${Math.max(t.communicationBusy - 1, 1)}`);
  }

  // ---------------------------------------------------------------- receiving

  private onLine = (raw: string): void => {
    const line = trimLineNoise(raw);
    this.supervisor.lineReceived();
    this.hooks.received?.(line);
    if (line === '') return;
    try {
      this.sender.lineReceived();
      this.replies.handle(line);
    } catch (err) {
      this.hooks.message?.(`Internal error while handling "${line}": ${(err as Error).message}`);
    }
  };

  private ok(line: string): void {
    this.supervisor.okReceived();
    this.sender.okReceived(line);
  }

  private onBusy(): void {
    this.supervisor.okReceived();
    const s = this.fw.effective;
    if (!this.busySeen && s.capabilities.busy_protocol && this.isOperational()) {
      this.busySeen = true;
      this.enqueue(`M113 S${Math.max(s.timeout.communicationBusy - 1, 1)}`);
    }
  }

  private commandWritten(cmd: string, code: string): void {
    if (code === 'T') {
      this.fw.toolSelected(cmd);
    } else if (code === 'M155') {
      const s = param(cmd, 'S');
      if (s !== null && Number.isFinite(s)) this.supervisor.autoreportTemp = s > 0 && this.replies.hasCapability('AUTOREPORT_TEMP');
    } else if (code === 'M113') {
      this.supervisor.busyConfirmed = true;
    } else this.supervisor.targets.commandWritten(cmd, code, this.fw.tool);
    this.hooks.commandSent?.(cmd, code);
  }
}
