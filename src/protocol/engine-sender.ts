// The sending half of the protocol engine: command queue, job feed, numbering/checksums, the ok window, writes.
import type { LineTransport } from './line-transport.ts';
import { canTransition, OPERATIONAL_STATES, type ConnectionStateId } from './connection-state.ts';
import type { EngineHooks, ToolChangeLines } from './hooks.ts';
import { DEFAULT_ENGINE_SETTINGS, realTimers, type EngineSettings, type Timers } from './settings.ts';
import { InFlight, LineHistory, PingPong, SendAhead, FLAG_HEATING, FLAG_LONG, FLAG_PROBE, FLAG_TEMP_QUERY, type FlowControl } from './send-window.ts';
import { ReplyRouter } from './reply-router.ts';
import { commandCode, frameLine, param, stripComment, toolNumber } from '../gcode/line.ts';

/** A source of job lines the engine pulls from while printing (see job-stream.ts). */
export interface JobFeed {
  /** The next raw file line, or null when none is ready now (the feed calls engine.pump() when one is). */
  next(): string | null;
  /** `@pause`, `@resume`, `@cancel`... met in the file. */
  hostCommand(cmd: string): void;
  /** A pausing command (M0/M1/M25 per settings) met in the file. */
  pausingCommand(cmd: string): void;
}

/**
 * A command parsed and framed, ready to write. Job lines are prepared while the firmware works on the previous one,
 * so the firmware's ok only has to commit it (ping-pong latency is the time from that ok to the next write).
 */
interface PreparedLine {
  feed: JobFeed | null;
  raw: string;
  cmd: string;
  code: string | null;
  isMove: boolean;
  /** False: pulled ahead but left for sendCommand (its side effects belong to its turn). */
  framed: boolean;
  /** -1: sent without a line number. */
  number: number;
  wire: string;
  flags: number;
  eatsOk: boolean;
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

/** Sending: the engine (engine.ts) adds the receiving side, connection lifecycle and timeouts. */
export abstract class EngineSender {
  readonly settings: EngineSettings;
  protected readonly timers: Timers;
  protected transport: LineTransport | null = null;
  protected port = '';
  protected baudrate = 0;
  protected stateId: ConnectionStateId = 'OFFLINE';
  protected errorText = '';
  protected readonly router: ReplyRouter;
  protected flow: FlowControl = new PingPong();
  protected readonly inFlight = new InFlight();
  protected activeFlags = 0;
  /**
   * Write turn: advanced after each turn that wrote something (a microtask, so after every line of the read that caused
   * the writes was handled). Replies handled in the turn a line was written in were read before it left.
   */
  protected epoch = 1;
  private epochQueued = false;
  private readonly nextEpoch = (): void => {
    this.epochQueued = false;
    this.epoch++;
  };
  protected history: LineHistory;
  protected nextNumber = 1;
  protected readonly queue: QueuedCommand[] = [];
  protected queueHead = 0;
  protected pollPending = false;
  protected feed: JobFeed | null = null;
  /** Lines are numbered while a job runs (and its scripts). */
  jobActive = false;

  // resend: lines resendCursor..resendEnd go out again; while holding nothing is written
  protected resendCursor = -1;
  protected resendEnd = -1;
  protected holding = false;
  protected resendRequests = 0;
  protected linesSent = 0;
  protected busyConfirmed = false;
  protected pumping = false;
  protected writeError = (err: unknown): void => this.linkFailed(err instanceof Error ? err : new Error(String(err)));

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
  constructor(protected readonly hooks: EngineHooks, settings: Partial<EngineSettings> = {}, timers: Timers = realTimers) {
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
  /**
   * The last `max` numbered lines written (oldest first) and whether a job line was pulled from the feed but not yet
   * written. After a link dropped without a printer reset, the firmware's own line counter says which of them it got
   * (recovery); asked once, when a print is interrupted.
   */
  sentTail(max: number): { lines: Array<{ n: number; wire: string }>; staged: boolean } {
    const lines: Array<{ n: number; wire: string }> = [];
    for (let n = this.nextNumber - 1; n >= 0 && lines.length < max; n--) {
      const wire = this.history.get(n);
      if (wire === undefined) break;
      lines.push({ n, wire });
    }
    return { lines: lines.reverse(), staged: this.staged !== null && this.staged.feed !== null };
  }
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
        this.inFlight.push(-1, cmd.length + 1, 0, this.epoch);
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
    const around = code === 'T' ? this.toolChangeLines(cmd) : null;
    if (around !== null) {
      // Queued directly, so a T inside the scripts never asks for the scripts again.
      for (const l of around.before) this.queue.push({ cmd: l });
      this.queue.push({ cmd });
      for (const l of around.after) this.queue.push({ cmd: l });
    } else {
      this.queue.push({ cmd, poll: opts.poll });
    }
    this.pump();
  }

  /**
   * The beforeToolChange/afterToolChange lines for a command about to be queued or fed from a job, when it is a `T<n>`
   * that changes the tool the firmware will have by the time it runs; null otherwise. Callers test the first character
   * before calling, so the lines of a print that are not tool changes never get here.
   */
  toolChangeLines(line: string): ToolChangeLines | null {
    const hook = this.hooks.toolChangeLines;
    if (hook === undefined) return null;
    const cmd = stripComment(line);
    if (commandCode(cmd) !== 'T') return null;
    const tool = toolNumber(cmd);
    const old = this.plannedTool();
    if (tool === null || tool === old) return null;
    return hook(old, tool);
  }

  /**
   * The tool once everything queued has been written: the last T still waiting in the queue, else the current one. A
   * job line is only pulled while the queue is empty, so for job lines this is the current tool.
   */
  private plannedTool(): number {
    for (let i = this.queue.length - 1; i >= this.queueHead; i--) {
      const cmd = this.queue[i].cmd;
      if (commandCode(cmd) !== 'T') continue;
      const tool = toolNumber(cmd);
      if (tool !== null) return tool;
    }
    return this.currentTool;
  }

  /** Runs `fn` once everything queued before it has been written and acknowledged. */
  marker(fn: () => void): void {
    this.queue.push({ cmd: '', marker: fn });
    this.pump();
  }

  setFeed(feed: JobFeed | null): void {
    this.feed = feed;
    if (feed === null) return;
    // A line pulled ahead belongs to its job: resuming the same feed sends it first, another job drops it.
    if (this.staged !== null && this.staged.feed !== feed) this.staged = null;
    this.pump();
  }

  protected writeEmergencyStop(): void {
    this.writeRaw('M112');
    this.writeRaw(frameLine(this.nextNumber++, 'M112'));
    for (let i = 0; i < this.toolCount; i++) this.writeRaw(frameLine(this.nextNumber++, `M104 T${i} S0`));
    if (this.heatedBed) this.writeRaw(frameLine(this.nextNumber++, 'M140 S0'));
  }

  protected writeRaw(wire: string): void {
    const t = this.transport;
    if (!t) return;
    if (!this.epochQueued) {
      this.epochQueued = true;
      queueMicrotask(this.nextEpoch);
    }
    if (t.send === undefined) {
      t.write(wire).then(undefined, this.writeError);
    } else if (!this.turnQueued) {
      // The first line of a turn leaves at once (ping-pong latency); more lines released in the same turn (several oks
      // in one read, send-ahead) are collected and leave together in one write at the end of the turn.
      this.turnQueued = true;
      queueMicrotask(this.endTurn);
      t.send(wire + '\n');
    } else {
      this.outbox += wire + '\n';
    }
    this.hooks.sent?.(wire);
  }

  protected outbox = '';
  protected turnQueued = false;
  /** After the writes of a turn: the collected lines go out, and the next job line is prepared for the next ok. */
  protected endTurn = (): void => {
    this.turnQueued = false;
    this.flushOutbox();
    this.prepareNext();
    if (this.jobActive && this.feed !== null && this.flow.name === 'ping-pong' && this.inFlight.count > 0 && !this.holding) {
      this.transport?.awaitingReply?.();
    }
  };

  protected flushOutbox(): void {
    const text = this.outbox;
    if (text === '') return;
    this.outbox = '';
    this.transport?.send?.(text);
  }

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
          this.inFlight.push(this.resendCursor, wire.length + 1, 0, this.epoch);
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
          const staged = this.staged;
          if (staged !== null) {
            this.staged = null;
            if (!staged.framed || (staged.number >= 0 && staged.number !== this.nextNumber)) {
              // Not framed ahead, or something else was numbered since: the full path (it re-stages on a full window).
              if (!this.sendCommand(staged.raw, true)) break;
              continue;
            }
            if (!this.commit(staged, true)) {
              this.staged = staged;
              break;
            }
            continue;
          }
          const raw = this.feed.next();
          if (raw === null) {
            // The feed may have queued its own lines (end of file, pause) while answering.
            if (this.queueHead < this.queue.length) continue;
            break;
          }
          if (!this.sendCommand(raw, true)) break;
          continue;
        }
        break;
      }
    } finally {
      this.pumping = false;
    }
  }

  protected shiftQueue(): void {
    this.queueHead++;
    if (this.queueHead > 64 && this.queueHead * 2 > this.queue.length) {
      this.queue.splice(0, this.queueHead);
      this.queueHead = 0;
    }
  }

  /** The next job line, pulled from the feed (and usually framed) before its turn; see PreparedLine. */
  protected staged: PreparedLine | null = null;

  /**
   * Runs once the writes of a turn are out, while the firmware works: pulls the next job line and frames it. Lines
   * with side effects at send time (host commands, suppressed commands, offsets, M110) are left for sendCommand.
   */
  protected prepareNext(): void {
    const feed = this.feed;
    if (feed === null || this.staged !== null || this.holding || this.resendCursor >= 0 || this.queueHead < this.queue.length) return;
    if (this.pumping || !this.transport) return;
    for (;;) {
      const raw = feed.next();
      if (raw === null) return;
      const cmd = stripComment(raw);
      if (cmd === '') continue;
      const c0 = cmd.charCodeAt(0);
      const isMove = isPlainMove(cmd, c0);
      const code = isMove ? (cmd.charCodeAt(1) === 49 ? 'G1' : 'G0') : commandCode(cmd);
      if (c0 === 64 /* @ */ || code === null || code === 'M110' || OFFSET_CODES.has(code) || this.suppressed(code)) {
        this.staged = { feed, raw, cmd, code, isMove, framed: false, number: -1, wire: '', flags: 0, eatsOk: false };
        return;
      }
      this.staged = this.frame(feed, raw, cmd, code, isMove);
      return;
    }
  }

  private suppressed(code: string): boolean {
    return this.settings.blockedCommands.includes(code) || this.settings.ignoredCommands.includes(code);
  }

  /** Processes and writes one command. Returns false, without side effects, when the window is full. */
  protected sendCommand(input: string, fromFile: boolean): boolean {
    let cmd = fromFile ? stripComment(input) : input.trim();
    if (cmd === '') return true;
    const c0 = cmd.charCodeAt(0);
    if (c0 === 64 /* @ */) {
      if (fromFile) this.feed?.hostCommand(cmd);
      return true;
    }
    let code: string | null;
    const isMove = isPlainMove(cmd, c0);
    if (isMove) {
      code = cmd.charCodeAt(1) === 49 ? 'G1' : 'G0';
    } else {
      code = commandCode(cmd);
      if (code !== null) {
        if (this.suppressed(code)) {
          if (fromFile && this.settings.pausingCommands.includes(code)) this.feed?.pausingCommand(cmd);
          this.hooks.commandSuppressed?.(cmd, this.settings.blockedCommands.includes(code) ? 'blocked' : 'ignored');
          return true;
        }
        if (OFFSET_CODES.has(code)) cmd = this.applyOffset(cmd, code);
      }
    }
    const line = this.frame(fromFile ? this.feed : null, input, cmd, code, isMove);
    if (this.commit(line, fromFile)) return true;
    if (fromFile) this.staged = line;
    return false;
  }

  /** Line number, checksum and flow flags for a command; no side effects. */
  private frame(feed: JobFeed | null, raw: string, cmd: string, code: string | null, isMove: boolean): PreparedLine {
    const numbered = code !== null && this.settings.checksumRequiringCommands.includes(code)
      ? true
      : (code !== null || this.settings.sendChecksumWithUnknownCommands) && !this.settings.neverSendChecksum
        && (this.jobActive || this.settings.alwaysSendChecksum || !this.firmwareInfoReceived);
    const eatsOk = code !== null || this.settings.unknownCommandsNeedAck;
    let flags = 0;
    if (code !== null && !isMove) {
      if (HEATING_CODES.has(code)) flags = FLAG_HEATING | FLAG_LONG;
      else if (this.settings.longRunningCommands.includes(code)) flags = FLAG_LONG;
      else if (code === 'M105') flags = FLAG_TEMP_QUERY;
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
    return { feed, raw, cmd, code, isMove, framed: true, number, wire, flags, eatsOk };
  }

  /**
   * After a communication timeout while printing: an M105 outside the window. Its `ok T:` tells whether the ok of the
   * line in flight was lost (it comes alone) or only late (a plain ok comes first), so no credit is granted on a guess.
   */
  protected sendProbe(): void {
    if (this.pollPending) {
      // The probe is the temperature poll that was waiting for room in the window.
      const i = this.queue.findIndex((q, k) => k >= this.queueHead && q.poll === true);
      if (i >= 0) this.queue.splice(i, 1);
      this.pollPending = false;
    }
    const line = this.frame(null, 'M105', 'M105', 'M105', false);
    line.flags |= FLAG_PROBE;
    // With a known receive buffer the probe must fit too: the oldest lines' oks are taken as lost, as OctoPrint does.
    const budget = this.settings.rxBufferSize;
    if (budget > 0 && this.inFlight.count > 0 && this.inFlight.totalBytes + line.wire.length + 1 > budget) {
      while (this.inFlight.count > 0 && this.inFlight.totalBytes + line.wire.length + 1 > budget) this.inFlight.shift();
      this.activeFlags = this.inFlight.flagsInFlight();
    }
    this.commit(line, false, true);
  }

  /** Writes a framed line if the window has room (false, without side effects, when not); bookkeeping after the write. */
  private commit(p: PreparedLine, fromFile: boolean, force = false): boolean {
    const { wire, number, eatsOk, flags, code } = p;
    if (eatsOk && !force && !this.mayWrite(wire.length + 1)) return false;
    if (number >= 0) {
      if (code === 'M110') this.history.clear();
      this.nextNumber = number + 1;
      this.history.add(number, wire);
    }
    if (eatsOk) {
      this.inFlight.push(number, wire.length + 1, flags, this.epoch);
      this.activeFlags |= flags;
    }
    this.linesSent++;
    this.writeRaw(wire);
    if (p.isMove) this.trackMove(p.cmd);
    else if (code !== null) {
      this.afterCommand(p.cmd, code);
      if (fromFile && this.settings.pausingCommands.includes(code)) this.feed?.pausingCommand(p.cmd);
    }
    return true;
  }

  /**
   * Send-ahead only while a job streams: idle commands (connect dialogue, user commands) go one per ok, so stray oks
   * from the hellos can never make the window overfill the firmware's buffer.
   */
  protected mayWrite(bytes: number): boolean {
    return this.jobActive ? this.flow.canSend(this.inFlight, bytes) : this.inFlight.count === 0;
  }

  protected trackMove(cmd: string): void {
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

  protected afterCommand(cmd: string, code: string): void {
    if (code === 'T') {
      const n = Number(cmd.trim().slice(1).split(' ')[0]);
      // Announced even when it names the current tool, as OctoPrint does (the firmware re-selects it).
      if (Number.isInteger(n)) {
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

  protected applyOffset(cmd: string, code: string): string {
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

  /** The transport failed while writing. */
  protected abstract linkFailed(err: Error): void;
  abstract emergencyStop(): void;
  abstract firmwareDetected(name: string): void;
  abstract capabilityEnabled(name: string): void;
  abstract invalidTool(): void;
}

/** G0/G1 (and g0/g1) with parameters or none: the bulk of a print, recognised without commandCode. */
function isPlainMove(cmd: string, c0: number): boolean {
  const c1 = cmd.charCodeAt(1);
  return (c0 === 71 || c0 === 103) && (c1 === 49 || c1 === 48) && (cmd.length === 2 || cmd.charCodeAt(2) === 32);
}
