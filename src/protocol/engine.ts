// The G-code protocol engine: numbering, checksums, the ok window, resends, timeouts and the link's state machine.
import type { LineTransport } from './line-transport.ts';
import { canTransition, OPERATIONAL_STATES, type ConnectionStateId } from './connection-state.ts';
import type { EngineHooks } from './hooks.ts';
import { DEFAULT_ENGINE_SETTINGS, realTimers, type EngineSettings, type Timers } from './settings.ts';
import { InFlight, LineHistory, PingPong, SendAhead, AdvancedOkWindow, FLAG_HEATING, FLAG_LONG, type FlowControl } from './send-window.ts';
import { ReplyKind, replyKind, parseAdvancedOk, parseResend, classifyError } from './replies/control.ts';
import { ReplyRouter } from './reply-router.ts';
import { commandCode, frameLine, param, stripComment } from '../gcode/line.ts';

/** A source of job lines the engine pulls from while printing (see job-stream.ts). */
export interface JobFeed {
  /** The next raw file line, or null when none is ready now (the feed calls engine.pump() when one is). */
  next(): string | null;
  /** `@pause`, `@resume`, `@cancel`... met in the file. */
  hostCommand(cmd: string): void;
  /** A pausing command (M0/M1/M25 per settings) met in the file. */
  pausingCommand(cmd: string): void;
}

interface QueuedCommand {
  cmd: string;
  /** Runs when every earlier line is written and acknowledged, instead of sending anything. */
  marker?: () => void;
  poll?: boolean;
}

const HEATING_CODES = new Set(['M109', 'M190', 'M191', 'M116']);
const OFFSET_CODES = new Set(['M104', 'M109', 'M140', 'M190']);

export interface ConnectTarget {
  transport: LineTransport;
  port: string;
  baudrate: number;
}

export class ProtocolEngine {
  readonly settings: EngineSettings;
  private readonly timers: Timers;
  private transport: LineTransport | null = null;
  private port = '';
  private baudrate = 0;
  private stateId: ConnectionStateId = 'OFFLINE';
  private errorText = '';
  private readonly router: ReplyRouter;

  private flow: FlowControl = new PingPong();
  private readonly inFlight = new InFlight();
  private activeFlags = 0;
  private history: LineHistory;
  private nextNumber = 1;
  private readonly queue: QueuedCommand[] = [];
  private queueHead = 0;
  private pollPending = false;
  private feed: JobFeed | null = null;
  /** Lines are numbered while a job runs (and its scripts). */
  jobActive = false;

  // resend bookkeeping
  private resendCursor = -1;
  private resendEnd = -1;
  private holding = false;
  private holdLine = -1;
  private holdTimer: unknown = null;
  private lastResendNumber = -1;
  private consecutiveResends = 0;
  private resendRequests = 0;
  private linesSent = 0;

  // timeouts
  private lastRxAt = 0;
  private lastOkAt = 0;
  private lastPollAt = 0;
  private consecutiveTimeouts = 0;
  private tickTimer: unknown = null;
  private connectStartedAt = 0;
  private hellosSent = 0;
  private sawStart = false;
  private busyConfirmed = false;
  private busySeen = false;
  private pumping = false;
  private writeError = (err: unknown): void => this.onClose(err instanceof Error ? err : new Error(String(err)));

  firmwareInfoReceived = false;
  firmwareName = '';
  autoreportTemp = false;
  emergencyParser = false;
  targetsActive = false;
  toolCount = 1;
  heatedBed = true;
  currentTool = 0;
  currentZ: number | null = null;
  currentF: number | null = null;
  temperatureOffsets: Record<string, number> = {};

  constructor(private readonly hooks: EngineHooks, settings: Partial<EngineSettings> = {}, timers: Timers = realTimers) {
    this.settings = { ...DEFAULT_ENGINE_SETTINGS, ...settings };
    this.timers = timers;
    this.history = new LineHistory(Math.max(this.settings.lastLineBufferSize, this.settings.maxLinesInFlight * 2, 8));
    this.router = new ReplyRouter(this, hooks);
    if (this.settings.rxBufferSize > 0) this.flow = new SendAhead(this.settings.rxBufferSize, this.settings.maxLinesInFlight);
  }

  get state(): ConnectionStateId { return this.stateId; }
  get error(): string { return this.errorText; }
  get flowControl(): string { return this.flow.name; }
  get connectedPort(): string { return this.port; }
  get connectedBaudrate(): number { return this.baudrate; }
  get linesInFlight(): number { return this.inFlight.count; }
  resendStats(): { count: number; transmitted: number; ratio: number } {
    return { count: this.resendRequests, transmitted: this.linesSent, ratio: this.linesSent ? Math.round((this.resendRequests * 100) / this.linesSent) : 0 };
  }

  setState(id: ConnectionStateId, error?: string): boolean {
    if (id === this.stateId && error === undefined) return true;
    if (!canTransition(this.stateId, id)) return false;
    this.stateId = id;
    if (error !== undefined) this.errorText = error;
    else if (id === 'OPEN_SERIAL' || id === 'DETECT_SERIAL') this.errorText = '';
    this.hooks.stateChanged?.(id, this.errorText);
    return true;
  }

  isOperational(): boolean { return OPERATIONAL_STATES.has(this.stateId); }

  // ---------------------------------------------------------------- connection

  /** Opens the transport and runs the hello handshake; resolves once the port is open (Operational comes later). */
  async connect(target: ConnectTarget): Promise<void> {
    this.port = target.port;
    this.baudrate = target.baudrate;
    this.setState('OPEN_SERIAL');
    const t = target.transport;
    t.on('line', this.onLine);
    t.on('close', this.onClose);
    try {
      await t.open();
    } catch (err) {
      t.off('line', this.onLine);
      t.off('close', this.onClose);
      this.setState('ERROR', `Connection error: ${(err as Error).message}`);
      this.hooks.error?.(this.errorText, 'connection');
      this.setState('CLOSED_WITH_ERROR');
      return;
    }
    this.transport = t;
    this.resetLink();
    this.setState('CONNECTING');
    this.connectStartedAt = this.timers.now();
    this.lastRxAt = this.connectStartedAt;
    if (!this.settings.waitForStartOnConnect) {
      this.sendHello();
      this.sendHello();
    }
    this.scheduleTick();
  }

  /** Requested close: Offline. Nothing throws. */
  async disconnect(): Promise<void> {
    const t = this.transport;
    this.shutdownLink();
    if (this.stateId !== 'OFFLINE' && this.stateId !== 'CLOSED' && this.stateId !== 'CLOSED_WITH_ERROR') this.setState('CLOSED');
    if (t) {
      t.off('line', this.onLine);
      t.off('close', this.onClose);
      await t.close().catch(() => {});
      this.hooks.disconnected?.();
    }
  }

  private resetLink(): void {
    this.inFlight.clear();
    this.activeFlags = 0;
    this.history.clear();
    this.nextNumber = 1;
    this.queue.length = 0;
    this.queueHead = 0;
    this.pollPending = false;
    this.holding = false;
    this.resendCursor = this.resendEnd = -1;
    this.hellosSent = 0;
    this.sawStart = false;
    this.consecutiveTimeouts = 0;
    this.firmwareInfoReceived = false;
    this.autoreportTemp = false;
    this.emergencyParser = false;
    this.busyConfirmed = false;
    this.busySeen = false;
    this.router.reset();
  }

  private shutdownLink(): void {
    this.flushOutbox();
    if (this.tickTimer !== null) this.timers.clearTimeout(this.tickTimer);
    if (this.holdTimer !== null) this.timers.clearTimeout(this.holdTimer);
    this.tickTimer = this.holdTimer = null;
    this.transport = null;
  }

  private onClose = (error?: Error): void => {
    if (!this.transport) return;
    const t = this.transport;
    this.shutdownLink();
    t.off('line', this.onLine);
    t.off('close', this.onClose);
    if (error) {
      this.setState('ERROR', `Connection error: ${error.message}`);
      this.hooks.error?.(this.errorText, 'connection');
      this.setState('CLOSED_WITH_ERROR');
    } else {
      this.setState('CLOSED');
    }
    this.hooks.disconnected?.();
  };

  /** A fatal problem: Error with the text, optional emergency stop, then Offline after error. */
  fail(text: string, reason: string, emergencyStop = false): void {
    if (!this.transport || this.stateId === 'ERROR') return;
    const t = this.transport;
    if (emergencyStop) this.writeEmergencyStop();
    this.setState('ERROR', text);
    this.hooks.error?.(text, reason);
    this.shutdownLink();
    t.off('line', this.onLine);
    t.off('close', this.onClose);
    void t.close().catch(() => {});
    this.setState('CLOSED_WITH_ERROR');
    this.hooks.disconnected?.();
  }

  private sendHello(): void {
    this.hellosSent++;
    this.writeRaw(frameLine(0, this.settings.helloCommand));
  }

  private onConnected(): void {
    this.setState('OPERATIONAL');
    this.lastOkAt = this.lastRxAt = this.timers.now();
    this.hooks.connected?.(this.port, this.baudrate);
    this.enqueue('M110 N0');
    this.enqueue('M115');
    if (this.settings.sdAlwaysAvailable) this.enqueue('M20');
    else this.enqueue('M21');
    // A first reading right away, so clients do not see empty temperatures until the first poll or autoreport.
    this.lastPollAt = this.timers.now();
    this.enqueue('M105', { poll: true });
  }

  /** The firmware rebooted under us (`start` while operational): resynchronise. */
  private onExternalReset(): void {
    this.inFlight.clear();
    this.activeFlags = 0;
    this.queue.length = 0;
    this.queueHead = 0;
    this.pollPending = false;
    this.holding = false;
    this.resendCursor = this.resendEnd = -1;
    this.history.clear();
    this.nextNumber = 1;
    const autoreport = this.autoreportTemp;
    this.hooks.printerReset?.();
    this.sendHello();
    this.enqueue('M110 N0');
    if (autoreport) this.enqueue(`M155 S${this.settings.timeout.temperatureAutoreport}`);
  }

  // ---------------------------------------------------------------- sending

  /** Queue a command for the firmware (user, script, internal). Emergency commands jump the queue. */
  enqueue(cmd: string, opts: { poll?: boolean } = {}): void {
    const code = commandCode(cmd);
    if (code !== null && this.settings.emergencyCommands.includes(code)) {
      if (code === 'M112') {
        this.emergencyStop();
        return;
      }
      if (this.emergencyParser && this.transport) {
        // The firmware's emergency parser acts on it while its queue is full; an ok follows.
        this.writeRaw(cmd);
        this.inFlight.push(-1, cmd.length + 1, 0);
        return;
      }
      this.queue.splice(this.queueHead, 0, { cmd });
      this.pump();
      return;
    }
    if (opts.poll) {
      if (this.pollPending) return;
      this.pollPending = true;
    }
    this.queue.push({ cmd, poll: opts.poll });
    this.pump();
  }

  /** Runs `fn` once everything queued before it has been written and acknowledged. */
  marker(fn: () => void): void {
    this.queue.push({ cmd: '', marker: fn });
    this.pump();
  }

  setFeed(feed: JobFeed | null): void {
    this.feed = feed;
    if (feed) this.pump();
  }

  /** Pretend an ok arrived (the API's fake_ack, for a lost acknowledgement). */
  fakeAck(): void {
    if (!this.transport) return;
    this.handleOk('ok');
  }

  /** M112: unnumbered first (emergency parser), numbered as well, heaters off, then close with an error. */
  emergencyStop(): void {
    if (!this.transport) return;
    this.hooks.emergencyStop?.();
    this.fail('Closing serial port due to emergency stop M112.', 'emergency', true);
  }

  private writeEmergencyStop(): void {
    this.writeRaw('M112');
    this.writeRaw(frameLine(this.nextNumber++, 'M112'));
    for (let i = 0; i < this.toolCount; i++) this.writeRaw(frameLine(this.nextNumber++, `M104 T${i} S0`));
    if (this.heatedBed) this.writeRaw(frameLine(this.nextNumber++, 'M140 S0'));
  }

  private writeRaw(wire: string): void {
    const t = this.transport;
    if (!t) return;
    this.hooks.sent?.(wire);
    if (t.writeLines === undefined) {
      t.write(wire).then(undefined, this.writeError);
      return;
    }
    // Lines released in the same turn (several oks in one read) leave in one write.
    this.outbox.push(wire);
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(this.flushOutbox);
    }
  }

  private outbox: string[] = [];
  private flushQueued = false;
  private flushOutbox = (): void => {
    this.flushQueued = false;
    const lines = this.outbox;
    if (lines.length === 0) return;
    this.outbox = [];
    const t = this.transport;
    if (!t) return;
    (lines.length === 1 ? t.write(lines[0]) : t.writeLines!(lines)).then(undefined, this.writeError);
  };

  /** Writes as many lines as the flow control allows. Re-entrant calls are folded into the running loop. */
  pump(): void {
    if (this.pumping || !this.transport || this.holding) return;
    if (this.stateId === 'CONNECTING' || this.stateId === 'OPEN_SERIAL' || this.stateId === 'DETECT_SERIAL') return;
    this.pumping = true;
    try {
      while (this.transport && !this.holding) {
        if (this.resendCursor >= 0) {
          const wire = this.history.get(this.resendCursor);
          if (wire === undefined) {
            this.resendCursor = this.resendEnd = -1;
            continue;
          }
          if (!this.mayWrite(wire.length + 1)) break;
          this.inFlight.push(this.resendCursor, wire.length + 1, 0);
          this.writeRaw(wire);
          this.linesSent++;
          if (this.resendCursor++ >= this.resendEnd) this.resendCursor = this.resendEnd = -1;
          continue;
        }
        let cmd: string | null = null;
        if (this.queueHead < this.queue.length) {
          const q = this.queue[this.queueHead];
          if (q.marker) {
            if (this.inFlight.count > 0) break;
            this.shiftQueue();
            q.marker();
            continue;
          }
          cmd = q.cmd;
          if (!this.sendCommand(cmd, false)) break;
          if (q.poll) this.pollPending = false;
          this.shiftQueue();
          continue;
        }
        if (this.feed) {
          if (this.inFlight.count > 0 && !this.mayWrite(1)) break;
          const raw = this.stagedFileLine ?? this.feed.next();
          this.stagedFileLine = null;
          if (raw === null) {
            // The feed may have queued its own lines (end of file, pause) while answering.
            if (this.queueHead < this.queue.length) continue;
            break;
          }
          if (!this.sendCommand(raw, true)) {
            this.stagedFileLine = raw;
            break;
          }
          continue;
        }
        break;
      }
    } finally {
      this.pumping = false;
    }
  }

  private shiftQueue(): void {
    this.queueHead++;
    if (this.queueHead > 64 && this.queueHead * 2 > this.queue.length) {
      this.queue.splice(0, this.queueHead);
      this.queueHead = 0;
    }
  }

  /** A file line pulled from the feed that did not fit the window; sent first next time. */
  private stagedFileLine: string | null = null;

  /** Processes and writes one command. Returns false, without side effects, when the window is full. */
  private sendCommand(input: string, fromFile: boolean): boolean {
    let cmd = fromFile ? stripComment(input) : input.trim();
    if (cmd === '') return true;
    const c0 = cmd.charCodeAt(0);
    if (c0 === 64 /* @ */) {
      if (fromFile) this.feed?.hostCommand(cmd);
      return true;
    }
    let code: string | null;
    let isMove = false;
    // Fast path for the bulk of a print: G0/G1 (and g0/g1).
    if ((c0 === 71 || c0 === 103) && (cmd.charCodeAt(1) === 49 || cmd.charCodeAt(1) === 48) && (cmd.length === 2 || cmd.charCodeAt(2) === 32)) {
      code = cmd.charCodeAt(1) === 49 ? 'G1' : 'G0';
      isMove = true;
    } else {
      code = commandCode(cmd);
      if (code !== null) {
        if (this.settings.blockedCommands.includes(code) || this.settings.ignoredCommands.includes(code)) {
          if (fromFile && this.settings.pausingCommands.includes(code)) this.feed?.pausingCommand(cmd);
          this.hooks.commandSuppressed?.(cmd, this.settings.blockedCommands.includes(code) ? 'blocked' : 'ignored');
          return true;
        }
        if (OFFSET_CODES.has(code)) cmd = this.applyOffset(cmd, code);
      }
    }
    const numbered = code !== null && this.settings.checksumRequiringCommands.includes(code)
      ? true
      : (code !== null || this.settings.sendChecksumWithUnknownCommands) && !this.settings.neverSendChecksum
        && (this.jobActive || this.settings.alwaysSendChecksum || !this.firmwareInfoReceived);
    const eatsOk = code !== null || this.settings.unknownCommandsNeedAck;
    let flags = 0;
    if (code !== null && !isMove) {
      if (HEATING_CODES.has(code)) flags = FLAG_HEATING | FLAG_LONG;
      else if (this.settings.longRunningCommands.includes(code)) flags = FLAG_LONG;
    }
    let wire: string;
    let number = -1;
    if (numbered) {
      if (code === 'M110') {
        const n = param(cmd, 'N');
        number = n !== null && Number.isFinite(n) ? n : 0;
      } else number = this.nextNumber;
      wire = frameLine(number, cmd);
    } else wire = cmd;
    if (eatsOk && !this.mayWrite(wire.length + 1)) return false;
    if (numbered) {
      if (code === 'M110') this.history.clear();
      this.nextNumber = number + 1;
      this.history.add(number, wire);
    }
    if (eatsOk) {
      this.inFlight.push(number, wire.length + 1, flags);
      this.activeFlags |= flags;
    }
    this.linesSent++;
    this.writeRaw(wire);
    if (isMove) this.trackMove(cmd);
    else if (code !== null) {
      this.afterCommand(cmd, code);
      if (fromFile && this.settings.pausingCommands.includes(code)) this.feed?.pausingCommand(cmd);
    }
    return true;
  }

  /**
   * Send-ahead only while a job streams: idle commands (connect dialogue, user commands) go one per ok, so stray oks
   * from the hellos can never make the window overfill the firmware's buffer.
   */
  private mayWrite(bytes: number): boolean {
    return this.jobActive ? this.flow.canSend(this.inFlight, bytes) : this.inFlight.count === 0;
  }

  /** True when one more line of typical length may be written: the feed asks before pulling a file line. */
  windowOpen(): boolean {
    return !this.holding && this.resendCursor < 0 && this.mayWrite(48);
  }

  private trackMove(cmd: string): void {
    // One pass over the parameters for Z and F.
    for (let i = 2; i < cmd.length; i++) {
      const c = cmd.charCodeAt(i);
      if (cmd.charCodeAt(i - 1) !== 32 || (c !== 90 && c !== 70 && c !== 122 && c !== 102)) continue;
      let j = i + 1;
      while (j < cmd.length && cmd.charCodeAt(j) !== 32) j++;
      const v = Number(cmd.slice(i + 1, j));
      if (!Number.isFinite(v)) continue;
      if (c === 70 || c === 102) this.currentF = v;
      else if (v !== this.currentZ) {
        const old = this.currentZ;
        this.currentZ = v;
        this.hooks.zChanged?.(v, old);
      }
    }
  }

  private afterCommand(cmd: string, code: string): void {
    if (code === 'T') {
      const n = Number(cmd.trim().slice(1).split(' ')[0]);
      if (Number.isInteger(n) && n !== this.currentTool) {
        const old = this.currentTool;
        this.currentTool = n;
        this.hooks.toolChanged?.(n, old);
      }
    } else if (code === 'M155') {
      const s = param(cmd, 'S');
      if (s !== null && Number.isFinite(s)) this.autoreportTemp = s > 0 && this.router.hasCapability('AUTOREPORT_TEMP');
    } else if (code === 'M113') {
      this.busyConfirmed = true;
    } else if (code === 'G28') {
      // Homing Z moves it to a position we do not know until the next absolute Z move.
    }
    this.hooks.commandSent?.(cmd, code);
  }

  private applyOffset(cmd: string, code: string): string {
    const isBed = code === 'M140' || code === 'M190';
    let key = 'bed';
    if (!isBed) {
      const t = param(cmd, 'T');
      key = `tool${t !== null && Number.isFinite(t) ? t : this.currentTool}`;
    }
    const offset = this.temperatureOffsets[key];
    if (!offset || !this.jobActive) return cmd;
    return cmd.replace(/(\s)([SR])([-+]?\d*\.?\d+)/, (m, sp: string, letter: string, value: string) => {
      const v = Number(value);
      return v === 0 ? m : `${sp}${letter}${v + offset}`;
    });
  }

  // ---------------------------------------------------------------- receiving

  private onLine = (raw: string): void => {
    let line = raw;
    const last = line.charCodeAt(line.length - 1);
    if (last === 13 || last === 32 || last === 0 || line.charCodeAt(0) <= 32) line = line.replace(/^[\s\0]+|[\s\0]+$/g, '');
    this.lastRxAt = this.timers.now();
    this.consecutiveTimeouts = 0;
    this.hooks.received?.(line);
    if (line === '') return;
    try {
      this.handleLine(line);
    } catch (err) {
      this.hooks.message?.(`Internal error while handling "${line}": ${(err as Error).message}`);
    }
  };

  private handleLine(line: string): void {
    const kind = replyKind(line);
    if (this.stateId === 'CONNECTING') {
      if (kind === ReplyKind.Ok || kind === ReplyKind.Wait) {
        this.onConnected();
        return;
      }
      if (kind === ReplyKind.Start && !this.sawStart) {
        this.sawStart = true;
        this.sendHello();
        return;
      }
    }
    if (this.holding && this.holdTimer !== null && this.inDrain) this.armHold(this.settings.resendDrainMs);
    switch (kind) {
      case ReplyKind.Ok:
        this.handleOk(line);
        if (line.length > 3) this.router.route(line, true);
        return;
      case ReplyKind.Resend:
        this.handleResend(line);
        if (this.settings.supportResendsWithoutOk === true && this.holding && !this.inDrain) this.endHold();
        return;
      case ReplyKind.Error:
        this.handleError(line);
        return;
      case ReplyKind.Busy:
        this.lastOkAt = this.lastRxAt;
        if (!this.busySeen && this.settings.capabilities.busy_protocol && this.isOperational()) {
          this.busySeen = true;
          this.enqueue(`M113 S${Math.max(this.settings.timeout.communicationBusy - 1, 1)}`);
        }
        return;
      case ReplyKind.Wait:
        // Nothing is queued in the firmware: whatever we count as in flight was acknowledged (lost oks).
        if (this.jobActive && this.inFlight.count > 0 && !this.holding) {
          this.inFlight.clear();
          this.activeFlags = 0;
          this.pump();
        }
        return;
      case ReplyKind.Start:
        if (this.isOperational()) this.onExternalReset();
        return;
      case ReplyKind.Action:
        this.router.route(line, false);
        return;
      default:
        if (this.holding && !this.inDrain && this.settings.supportResendsWithoutOk === 'detect' && !this.router.isReport(line)) this.endHold();
        this.router.route(line, false);
    }
  }

  private handleOk(line: string): void {
    this.lastOkAt = this.lastRxAt;
    if (this.holding) {
      if (!this.inDrain) this.endHold();
      return;
    }
    const adv = line.length > 4 ? parseAdvancedOk(line) : null;
    if (adv) {
      if (adv.buffer >= 0 && this.flow.name === 'ping-pong' && this.settings.advancedOk) {
        this.flow = new AdvancedOkWindow(this.settings.rxBufferSize > 0 ? this.settings.rxBufferSize : 127, this.settings.maxLinesInFlight);
      }
      if (adv.buffer >= 0) this.flow.observeBufferFree?.(adv.buffer);
    }
    const flags = this.inFlight.shift();
    let cleared = flags > 0 ? flags : 0;
    if (adv && adv.line >= 0) {
      // An ok naming line N acknowledges every numbered line up to N: earlier oks were lost.
      let head = this.inFlight.peekNumber();
      while (head >= 0 && head <= adv.line) {
        cleared |= Math.max(0, this.inFlight.shift());
        head = this.inFlight.peekNumber();
      }
    }
    if (cleared !== 0) this.activeFlags = this.inFlight.flagsInFlight();
    this.pump();
  }

  private inDrain = false;

  private handleResend(line: string): void {
    const n = parseResend(line);
    if (n === null) return;
    this.resendRequests++;
    const resendActive = this.resendCursor >= 0 || this.holding;
    if (!resendActive && n >= this.nextNumber) return; // the printer saw a line twice; nothing to do
    if (this.holding && n === this.holdLine) return; // fallout of lines that were in flight with the first request
    if (n === this.lastResendNumber) {
      if (++this.consecutiveResends >= this.settings.maxConsecutiveResends) {
        this.fail(`Printer keeps requesting line ${n} again and again, communication stuck`, 'resend_loop');
        return;
      }
    } else this.consecutiveResends = 1;
    this.lastResendNumber = n;
    if (this.history.get(n) === undefined) {
      if (this.jobActive) this.fail(`Printer requested line ${n} but no sufficient history is available, can't resend`, 'resend');
      return;
    }
    const several = this.inFlight.count > 1;
    this.inFlight.clear();
    this.activeFlags = 0;
    this.resendCursor = n;
    this.resendEnd = this.nextNumber - 1;
    this.holding = true;
    this.holdLine = n;
    this.inDrain = several;
    if (several) this.armHold(this.settings.resendDrainMs);
    else if (this.settings.supportResendsWithoutOk === 'detect') this.armHold(this.settings.timeout.resendOk * 1000);
    else if (!this.settings.swallowOkAfterResend) this.endHold();
  }

  private armHold(ms: number): void {
    if (this.holdTimer !== null) this.timers.clearTimeout(this.holdTimer);
    this.holdTimer = this.timers.setTimeout(() => {
      this.holdTimer = null;
      this.endHold();
    }, ms);
  }

  private endHold(): void {
    if (this.holdTimer !== null) this.timers.clearTimeout(this.holdTimer);
    this.holdTimer = null;
    this.holding = false;
    this.inDrain = false;
    this.pump();
  }

  private pendingKill: string | null = null;

  private handleError(line: string): void {
    // Marlin's kill messages come as two lines; join them so the UI shows the cause and the consequence.
    if (this.pendingKill !== null) {
      const joined = `${this.pendingKill} - ${line.replace(/^error:\s*/i, '')}`;
      this.pendingKill = null;
      this.handleError2(joined);
      return;
    }
    if (/Heating failed|Thermal Runaway|Thermal Malfunction|MAXTEMP triggered|MINTEMP triggered|Invalid extruder number|Watchdog barked|KILL caused/i.test(line)) {
      this.pendingKill = line;
      this.timers.setTimeout(() => {
        if (this.pendingKill === line) {
          this.pendingKill = null;
          this.handleError2(line);
        }
      }, 200);
      return;
    }
    this.handleError2(line);
  }

  private handleError2(line: string): void {
    const { text, cls } = classifyError(line, this.firmwareName);
    switch (cls) {
      case 'resendFollows':
      case 'sd':
      case 'unknownCommand':
        return;
      case 'recoverable':
        this.handleOk('ok');
        return;
      case 'commandFailed':
        this.hooks.firmwareError?.(text, false);
        return;
      default:
        if (this.stateId === 'ERROR' || this.stateId === 'CLOSED_WITH_ERROR') return;
        if (this.settings.ignoreErrorsFromFirmware) {
          this.hooks.firmwareError?.(text, false);
          return;
        }
        this.hooks.firmwareError?.(text, true);
        if (this.settings.disconnectOnErrors || /kill\(\) called|fatal:/i.test(text)) {
          this.fail(text, 'firmware', this.settings.sendM112OnError);
        } else {
          this.hooks.action?.('cancel', `firmware error: ${text}`);
        }
    }
  }

  /** Parsed from replies by the router. */
  firmwareDetected(name: string): void {
    if (this.firmwareInfoReceived) return;
    this.firmwareInfoReceived = true;
    this.firmwareName = name;
    if (!this.settings.firmwareDetection) return;
    const n = name.toLowerCase();
    if (n.includes('repetier') || n.includes('anet_a8') || n.includes('malyan')) this.settings.alwaysSendChecksum = true;
    if (n.includes('klipper')) this.settings.unknownCommandsNeedAck = true;
    if (n.includes('prusa-firmware')) {
      this.settings.sendChecksumWithUnknownCommands = true;
      this.settings.unknownCommandsNeedAck = true;
    }
  }

  capabilityEnabled(name: string): void {
    if (name === 'AUTOREPORT_TEMP' && this.settings.capabilities.autoreport_temp) {
      this.enqueue(`M155 S${this.settings.timeout.temperatureAutoreport}`);
    } else if (name === 'EMERGENCY_PARSER' && this.settings.capabilities.emergency_parser) {
      this.emergencyParser = true;
    }
  }

  /** Tool the firmware refused: fall back to the previous one. */
  invalidTool(): void {
    const bad = this.currentTool;
    const fallback = 0;
    this.currentTool = fallback;
    this.hooks.invalidTool?.(bad, fallback);
    if (bad !== fallback) this.enqueue(`T${fallback}`);
  }

  // ---------------------------------------------------------------- timeouts

  private scheduleTick(): void {
    if (this.tickTimer !== null) this.timers.clearTimeout(this.tickTimer);
    this.tickTimer = this.timers.setTimeout(() => {
      this.tickTimer = null;
      if (!this.transport) return;
      this.tick();
      if (this.transport) this.scheduleTick();
    }, 250);
  }

  /** Effective communication timeout in ms (§8.2 of the serial reference). */
  communicationTimeoutMs(): number {
    const t = this.settings.timeout;
    const comm = this.busyConfirmed ? t.communicationBusy : t.communication;
    const temp = this.autoreportTemp ? t.temperatureAutoreport : this.pollInterval();
    return Math.max(comm, temp + 1) * 1000;
  }

  private pollInterval(): number {
    const t = this.settings.timeout;
    return !this.jobActive && this.targetsActive ? t.temperatureTargetSet : t.temperature;
  }

  private tick(): void {
    const now = this.timers.now();
    if (this.stateId === 'CONNECTING') {
      if (now - this.connectStartedAt < this.settings.timeout.communication * 1000) return;
      if (this.hellosSent < 3 && !this.settings.waitForStartOnConnect) {
        this.sendHello();
        this.connectStartedAt = now;
        return;
      }
      this.hooks.message?.('Timeout while trying to connect');
      void this.disconnect();
      return;
    }
    if (!this.isOperational()) return;
    const timeout = this.communicationTimeoutMs();
    const silent = now - this.lastRxAt >= timeout;
    const okLost = this.jobActive && this.inFlight.count > 0 && (this.activeFlags & FLAG_LONG) === 0 && now - this.lastOkAt >= timeout;
    if (silent || okLost) {
      this.lastRxAt = this.lastOkAt = now;
      this.handleTimeout();
      if (!this.transport) return;
    }
    if (!this.autoreportTemp && (this.activeFlags & FLAG_LONG) === 0 && now - this.lastPollAt >= this.pollInterval() * 1000) {
      this.lastPollAt = now;
      this.enqueue('M105', { poll: true });
    }
  }

  private handleTimeout(): void {
    this.consecutiveTimeouts++;
    const limits = this.settings.maxCommunicationTimeouts;
    const limit = (this.activeFlags & FLAG_LONG) !== 0 ? limits.long : this.jobActive ? limits.printing : limits.idle;
    if (limit > 0 && this.consecutiveTimeouts > limit) {
      this.fail('Too many consecutive timeouts, printer still connected and alive?', 'timeout');
      return;
    }
    if (this.holding) {
      this.hooks.message?.('Communication timeout during an active resend, resending requested line');
      this.endHold();
    } else if ((this.activeFlags & FLAG_HEATING) !== 0) {
      this.activeFlags &= ~FLAG_HEATING;
    } else if ((this.activeFlags & FLAG_LONG) !== 0) {
      // long-running command: keep waiting
    } else if (this.jobActive) {
      this.hooks.message?.('Communication timeout while printing, trying to trigger response from printer');
      this.inFlight.shift();
      this.lastPollAt = this.timers.now();
      this.enqueue('M105', { poll: true });
      this.pump();
    } else if (this.inFlight.count > 0) {
      this.inFlight.clear();
      this.pump();
    }
  }
}
