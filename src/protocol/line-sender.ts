// The sender: command queue, job feed and the line pulled ahead, numbering/checksums, and writing within the window.
import type { LineTransport } from './line-transport.ts';
import type { EngineSettings, Timers } from './settings.ts';
import { FLAG_HEATING, FLAG_LONG, FLAG_PROBE, FLAG_TEMP_QUERY } from './send-window.ts';
import { AckTracker, type WindowSnapshot } from './ack-tracker.ts';
import { WireWriter } from './wire-writer.ts';
import { commandCode, frameLine, param, stripComment, toolNumber } from '../gcode/line.ts';
import { NO_RULES, type LineRules } from './line-rules.ts';
import type { ReplyAcks } from './reply-handler.ts';
import type { SupervisedSender, TimeoutRemedy } from './link-supervisor.ts';

/** How a command joins the queue: `poll`, a temperature poll; `once`, not again while the same command waits unsent. */
export interface EnqueueOptions { poll?: boolean; once?: boolean }

/** A source of job lines the sender pulls from while printing (printer/job/job-stream.ts). */
export interface JobFeed {
  /** The next raw file line, or null when none is ready now (the feed calls engine.pump() when one is). */
  next(): string | null;
  /**
   * Whether the line next() returned last is the file's own (not a script's or a timelapse's line put before it):
   * what a link thread's object filter may read. Undefined: every line is the file's.
   */
  readonly fileLine?: boolean;
  /** `@pause`, `@resume`, `@cancel`... met in the file. */
  hostCommand(cmd: string): void;
  /** A pausing command (M0/M1/M25 per settings) met in the file. */
  pausingCommand(cmd: string): void;
}

/** The engine side the sender calls into (kept narrow). */
export interface SenderHost {
  /** Every line written, in wire form. */
  sent?(wire: string): void;
  /** A known command other than G0/G1 was written. */
  commandWritten(cmd: string, code: string): void;
  suppressed(cmd: string, reason: 'blocked' | 'ignored'): void;
  /** The link is up far enough to write (not opening, detecting or waiting for the handshake). */
  mayWrite(): boolean;
  linkFailed(err: Error): void;
  /** A fatal protocol problem (resend loop, no history): the link goes to Error. */
  fail(text: string, reason: string): void;
  currentTool(): number;
  /** Unnumbered lines need the firmware's M115 report first. */
  firmwareKnown(): boolean;
}

/** A command parsed and framed, ready to write (job lines are framed while the firmware works on the previous one). */
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

export interface SenderSnapshot extends WindowSnapshot {
  nextNumber: number;
  queued: number;
  staged: boolean;
  jobActive: boolean;
  linesSent: number;
}

export class LineSender implements ReplyAcks, SupervisedSender {
  readonly acks: AckTracker;
  readonly wire: WireWriter;
  private nextNumber = 1;
  private readonly queue: QueuedCommand[] = [];
  private queueHead = 0;
  private pollPending = false;
  private feed: JobFeed | null = null;
  private staged: PreparedLine | null = null;
  private pumping = false;
  private linesSent = 0;
  private rules: LineRules = NO_RULES;
  /** Lines are numbered while a job runs (and its scripts). */
  jobActive = false;

  constructor(private readonly settings: () => EngineSettings, timers: Timers, private readonly host: SenderHost) {
    this.acks = new AckTracker(settings, timers, { pump: () => this.pump(), fail: (text, reason) => host.fail(text, reason) });
    this.wire = new WireWriter({ sent: (w) => host.sent?.(w), failed: (err) => host.linkFailed(err), turnEnded: () => this.turnEnded() });
  }

  setRules(rules: LineRules | null): void { this.rules = rules ?? NO_RULES; }

  /** A new link (or a reset one): lines go to `t`, numbering starts again. */
  attach(t: LineTransport): void {
    this.wire.attach(t);
    this.clear();
  }

  /** The link is gone: what the turn collected goes out first, the resend hold's timer stops. */
  detach(): void {
    this.wire.flush();
    this.acks.stopTimers();
    this.wire.attach(null);
  }

  // What the firmware's replies do to the window (the engine's reply handler calls these).
  okReceived(line: string): void { this.acks.ok(line, this.wire.epoch); }
  resendRequested(line: string): void { this.acks.resend(line, this.nextNumber, this.jobActive); }
  waitReceived(): void { this.acks.wait(this.wire.epoch, this.jobActive); }
  lineReceived(): void { this.acks.lineReceived(); }
  otherLine(isReport: boolean): void { this.acks.otherLine(isReport); }

  get flowControl(): string { return this.acks.flowControl; }
  get strayOks(): number { return this.acks.strayOks; }
  get resendRequests(): number { return this.acks.resendRequests; }
  get transport(): LineTransport | null { return this.wire.attached; }
  get attached(): boolean { return this.wire.attached !== null; }
  get longRunning(): boolean { return (this.acks.activeFlags & FLAG_LONG) !== 0; }
  get linesInFlight(): number { return this.acks.count; }
  get sentCount(): number { return this.linesSent; }
  get next(): number { return this.nextNumber; }

  /**
   * The last `max` numbered lines written (oldest first) and whether a job line was pulled from the feed but not yet
   * written. After a link dropped without a printer reset, the firmware's own line counter says which of them it got
   * (recovery); asked once, when a print is interrupted.
   */
  sentTail(max: number): { lines: Array<{ n: number; wire: string }>; staged: boolean } {
    const lines: Array<{ n: number; wire: string }> = [];
    for (let n = this.nextNumber - 1; n >= 0 && lines.length < max; n--) {
      const wire = this.acks.sent(n);
      if (wire === undefined) break;
      lines.push({ n, wire });
    }
    return { lines: lines.reverse(), staged: this.staged !== null && this.staged.feed !== null };
  }

  snapshot(): SenderSnapshot {
    return { ...this.acks.snapshot(), nextNumber: this.nextNumber, queued: this.queue.length - this.queueHead, staged: this.staged !== null, jobActive: this.jobActive, linesSent: this.linesSent };
  }

  /** Forgets every line queued, in flight, pulled ahead or kept for resends: numbering starts again at 1. */
  clear(): void {
    this.acks.clear();
    this.nextNumber = 1;
    this.queue.length = 0;
    this.queueHead = 0;
    this.pollPending = false;
    this.staged = null;
    this.wire.discard();
  }

  /**
   * Queues a command; `poll` ones (temperature polls) are not queued twice, nor a `once` one while the same command
   * waits unsent (its answer will be as fresh: an SD listing asked for again and again). Emergency commands are the
   * engine's.
   */
  enqueue(cmd: string, opts: EnqueueOptions & { first?: boolean } = {}): void {
    if (opts.first) {
      this.queue.splice(this.queueHead, 0, { cmd });
      this.pump();
      return;
    }
    if (opts.poll) {
      if (this.pollPending) return;
      this.pollPending = true;
    }
    if (opts.once && this.waiting(cmd)) return;
    const code = this.rules.expandCodes.size === 0 ? null : commandCode(cmd);
    const expanded = code !== null && this.rules.expandCodes.has(code)
      ? this.rules.expand(cmd, code, { jobActive: this.jobActive, tool: this.host.currentTool(), plannedTool: this.plannedTool() })
      : null;
    // Queued directly, so a T inside the lines is never expanded again.
    if (expanded !== null) for (const l of expanded) this.queue.push({ cmd: l });
    else this.queue.push({ cmd, poll: opts.poll });
    this.pump();
  }

  private waiting(cmd: string): boolean {
    for (let i = this.queueHead; i < this.queue.length; i++) if (this.queue[i].cmd === cmd) return true;
    return false;
  }

  /** Writes outside the queue and numbering (emergency parser commands); counted in flight, an ok follows. */
  writeNow(cmd: string): void {
    this.wire.write(cmd);
    this.acks.record(-1, cmd, true, 0, this.wire.epoch, false);
  }

  /** The connect handshake's hello as line 0, at once: it resets the firmware's numbering (no ok is awaited for it). */
  writeHello(command: string): void {
    this.wire.write(frameLine(0, command));
  }

  /**
   * A communication timeout (the link supervisor decides one came): a held resend goes out, a heat-up's silence is
   * forgiven once, a long command is waited for; while printing, an M105 probe outside the window decides whether an
   * ok was lost (AckTracker.ok; a probe still unanswered means neither reply is coming, so what was in flight up to it
   * is taken as acknowledged), and when idle, whatever was in flight is given up.
   */
  recoverFromTimeout(): TimeoutRemedy {
    const acks = this.acks;
    if (acks.holding) {
      acks.endHold();
      return 'resend';
    }
    if (acks.clearHeating()) return 'heating';
    if (this.longRunning) return 'long';
    if (this.jobActive) {
      // Granting a credit now would leave one line too many in flight for the rest of the print if the ok was late.
      acks.dropThroughProbe();
      this.sendProbe();
      this.pump();
      return 'probe';
    }
    if (!acks.dropAll()) return 'none';
    this.pump();
    return 'dropped';
  }

  /** M112 twice (unnumbered, then numbered) and heaters off, ahead of everything. */
  writeEmergencyStop(toolCount: number, heatedBed: boolean): void {
    this.wire.write('M112');
    this.wire.write(frameLine(this.nextNumber++, 'M112'));
    for (let i = 0; i < toolCount; i++) this.wire.write(frameLine(this.nextNumber++, `M104 T${i} S0`));
    if (heatedBed) this.wire.write(frameLine(this.nextNumber++, 'M140 S0'));
  }

  /**
   * The tool once everything queued has been written: the last T still waiting in the queue, else the current one. A
   * job line is only pulled while the queue is empty, so for job lines this is the current tool.
   */
  plannedTool(): number {
    for (let i = this.queue.length - 1; i >= this.queueHead; i--) {
      const cmd = this.queue[i].cmd;
      if (commandCode(cmd) !== 'T') continue;
      const tool = toolNumber(cmd);
      if (tool !== null) return tool;
    }
    return this.host.currentTool();
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

  /** Writes as many lines as the flow control allows. Re-entrant calls are folded into the running loop. */
  pump(): void {
    if (this.pumping || !this.wire.attached || this.acks.holding || !this.host.mayWrite()) return;
    this.pumping = true;
    try {
      while (this.wire.attached && !this.acks.holding) {
        const resent = this.acks.nextResend(this.jobActive, this.wire.epoch);
        if (resent === null) break;
        if (resent !== undefined) {
          this.wire.write(resent);
          this.linesSent++;
          continue;
        }
        if (this.queueHead < this.queue.length) {
          const q = this.queue[this.queueHead];
          if (q.marker) {
            if (this.acks.count > 0) break;
            this.shiftQueue();
            q.marker();
            continue;
          }
          if (!this.sendCommand(q.cmd, false)) break;
          if (q.poll) this.pollPending = false;
          this.shiftQueue();
          continue;
        }
        if (this.feed === null) break;
        if (this.acks.count > 0 && !this.acks.mayWrite(1, this.jobActive)) break;
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

  private turnEnded(): void {
    this.prepareNext();
    if (this.jobActive && this.feed !== null && this.acks.awaitingReply) this.wire.attached?.awaitingReply?.();
  }

  /**
   * Runs once the writes of a turn are out, while the firmware works: pulls the next job line and frames it. Lines
   * with side effects at send time (host commands, suppressed commands, rewritten ones, M110) are left for sendCommand.
   */
  private prepareNext(): void {
    const feed = this.feed;
    if (feed === null || this.staged !== null || this.acks.holding || this.acks.resending || this.queueHead < this.queue.length) return;
    if (this.pumping || !this.wire.attached) return;
    for (;;) {
      const raw = feed.next();
      if (raw === null) return;
      const cmd = stripComment(raw);
      if (cmd === '') continue;
      const c0 = cmd.charCodeAt(0);
      const isMove = isPlainMove(cmd, c0);
      const code = isMove ? (cmd.charCodeAt(1) === 49 ? 'G1' : 'G0') : commandCode(cmd);
      if (c0 === 64 /* @ */ || code === null || code === 'M110' || this.rules.rewriteCodes.has(code) || this.suppressed(code)) {
        this.staged = { feed, raw, cmd, code, isMove, framed: false, number: -1, wire: '', flags: 0, eatsOk: false };
        return;
      }
      this.staged = this.frame(feed, raw, cmd, code, isMove);
      return;
    }
  }

  private isHostWord(cmd: string): boolean {
    const words = this.settings().hostWords;
    if (words.length === 0) return false;
    const sp = cmd.indexOf(' ');
    return words.includes((sp < 0 ? cmd : cmd.slice(0, sp)).toUpperCase());
  }

  private suppressed(code: string): boolean {
    const s = this.settings();
    return s.blockedCommands.includes(code) || s.ignoredCommands.includes(code);
  }

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
    const isMove = isPlainMove(cmd, c0);
    if (isMove) {
      code = cmd.charCodeAt(1) === 49 ? 'G1' : 'G0';
    } else {
      code = commandCode(cmd);
      // Not a G, M or T code: maybe a word the host answers (settings.hostWords); only such lines pay for the look.
      if (code === null && fromFile && this.isHostWord(cmd)) {
        this.feed?.hostCommand(cmd);
        return true;
      }
      if (code !== null) {
        if (this.suppressed(code)) {
          const s = this.settings();
          if (fromFile && s.pausingCommands.includes(code)) this.feed?.pausingCommand(cmd);
          this.host.suppressed(cmd, s.blockedCommands.includes(code) ? 'blocked' : 'ignored');
          return true;
        }
        if (this.rules.rewriteCodes.has(code)) cmd = this.rules.rewrite(cmd, code, { jobActive: this.jobActive, tool: this.host.currentTool() });
      }
    }
    const line = this.frame(fromFile ? this.feed : null, input, cmd, code, isMove);
    if (this.commit(line, fromFile)) return true;
    if (fromFile) this.staged = line;
    return false;
  }

  /** Line number, checksum and flow flags for a command; no side effects. */
  private frame(feed: JobFeed | null, raw: string, cmd: string, code: string | null, isMove: boolean): PreparedLine {
    const s = this.settings();
    const numbered = code !== null && s.checksumRequiringCommands.includes(code)
      ? true
      : (code !== null || s.sendChecksumWithUnknownCommands) && !s.neverSendChecksum
        && (this.jobActive || s.alwaysSendChecksum || !this.host.firmwareKnown());
    const eatsOk = code !== null || s.unknownCommandsNeedAck;
    let flags = 0;
    if (code !== null && !isMove) {
      if (HEATING_CODES.has(code)) flags = FLAG_HEATING | FLAG_LONG;
      else if (s.longRunningCommands.includes(code)) flags = FLAG_LONG;
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
  sendProbe(): void {
    if (this.pollPending) {
      // The probe is the temperature poll that was waiting for room in the window.
      const i = this.queue.findIndex((q, k) => k >= this.queueHead && q.poll === true);
      if (i >= 0) this.queue.splice(i, 1);
      this.pollPending = false;
    }
    const line = this.frame(null, 'M105', 'M105', 'M105', false);
    line.flags |= FLAG_PROBE;
    // With a known receive buffer the probe must fit too.
    this.acks.makeRoom(line.wire.length + 1);
    this.commit(line, false, true);
  }

  /** Writes a framed line if the window has room (false, without side effects, when not); bookkeeping after the write. */
  private commit(p: PreparedLine, fromFile: boolean, force = false): boolean {
    const { wire, number, eatsOk, flags, code } = p;
    if (eatsOk && !force && !this.acks.mayWrite(wire.length + 1, this.jobActive)) return false;
    if (number >= 0) this.nextNumber = number + 1;
    this.acks.record(number, wire, eatsOk, flags, this.wire.epoch, code === 'M110');
    this.linesSent++;
    this.wire.write(wire);
    if (p.isMove) this.rules.moveSent?.(p.cmd);
    else if (code !== null) {
      this.host.commandWritten(p.cmd, code);
      if (fromFile && this.settings().pausingCommands.includes(code)) this.feed?.pausingCommand(p.cmd);
    }
    return true;
  }
}

/** G0/G1 (and g0/g1) with parameters or none: the bulk of a print, recognised without commandCode. */
function isPlainMove(cmd: string, c0: number): boolean {
  const c1 = cmd.charCodeAt(1);
  return (c0 === 71 || c0 === 103) && (c1 === 49 || c1 === 48) && (cmd.length === 2 || cmd.charCodeAt(2) === 32);
}
