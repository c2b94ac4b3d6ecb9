// The send window's bookkeeping: lines in flight, the flow-control strategy, the resend history and cursor, and what
// oks, resend requests and `wait` replies do to them.
import { FLAG_HEATING, FLAG_PROBE, FLAG_TEMP_QUERY, InFlight, LineHistory, PingPong, SendAhead, type FlowControl } from './send-window.ts';
import { parseAdvancedOk, parseResend } from './replies/control.ts';
import { isTemperatureLine } from './replies/temperature.ts';
import type { EngineSettings, Timers } from './settings.ts';

/** What the tracker asks of the sender that owns it. */
export interface AckHost {
  /** The window may have room again. */
  pump(): void;
  fail(text: string, reason: string): void;
}

/** The sender's state for diagnostics and tests (LineSender.snapshot()). */
export interface WindowSnapshot {
  flowControl: string;
  linesInFlight: number;
  bytesInFlight: number;
  resendCursor: number;
  resendEnd: number;
  holding: boolean;
  resendRequests: number;
  strayOks: number;
}

export class AckTracker {
  private flow: FlowControl = new PingPong();
  private readonly inFlight = new InFlight();
  private readonly history: LineHistory;
  /** Flags of the lines in flight, or-ed (long-running, heating, probe...). */
  private flags = 0;
  // resend: lines cursor..end go out again; while holding nothing is written
  private cursor = -1;
  private end = -1;
  private held = false;
  private holdLine = -1;
  private holdTimer: unknown = null;
  private inDrain = false;
  private lastResendNumber = -1;
  private consecutiveResends = 0;
  resendRequests = 0;
  /** Oks dropped because nothing the firmware could have seen was waiting for them (tests and diagnostics). */
  strayOks = 0;

  constructor(private readonly settings: () => EngineSettings, private readonly timers: Timers, private readonly host: AckHost) {
    const s = settings();
    this.history = new LineHistory(Math.max(s.lastLineBufferSize, s.maxLinesInFlight * 2, 8));
    if (s.rxBufferSize > 0) this.flow = new SendAhead(s.rxBufferSize, s.maxLinesInFlight);
  }

  get flowControl(): string { return this.flow.name; }
  get count(): number { return this.inFlight.count; }
  get activeFlags(): number { return this.flags; }
  get holding(): boolean { return this.held; }
  /** Ping-pong with a line in flight and no resend: the next write waits on the firmware's reply. */
  get awaitingReply(): boolean { return !this.held && this.flow.awaitsReply(this.inFlight); }
  has(flag: number): boolean { return this.inFlight.has(flag); }

  snapshot(): WindowSnapshot {
    return {
      flowControl: this.flow.name, linesInFlight: this.inFlight.count, bytesInFlight: this.inFlight.totalBytes,
      resendCursor: this.cursor, resendEnd: this.end, holding: this.held, resendRequests: this.resendRequests, strayOks: this.strayOks,
    };
  }

  /** The wire text of line `n` while it is kept for resends. */
  sent(n: number): string | undefined { return this.history.get(n); }

  /** Forgets every line in flight or kept for resends. */
  clear(): void {
    this.inFlight.clear();
    this.flags = 0;
    this.history.clear();
    this.held = false;
    this.cursor = this.end = -1;
  }

  stopTimers(): void {
    if (this.holdTimer !== null) this.timers.clearTimeout(this.holdTimer);
    this.holdTimer = null;
  }

  /**
   * Send-ahead only while a job streams: idle commands (connect dialogue, user commands) go one per ok, so stray oks
   * from the hellos can never make the window overfill the firmware's buffer.
   */
  mayWrite(bytes: number, jobActive: boolean): boolean {
    return jobActive ? this.flow.canSend(this.inFlight, bytes) : this.inFlight.count === 0;
  }

  /** A line written: kept for resends when numbered, counted in flight when the firmware acknowledges it. */
  record(number: number, wire: string, eatsOk: boolean, flags: number, epoch: number, resetsNumbering: boolean): void {
    if (number >= 0) {
      if (resetsNumbering) this.history.clear();
      this.history.add(number, wire);
    }
    if (eatsOk) {
      this.inFlight.push(number, wire.length + 1, flags, epoch);
      this.flags |= flags;
    }
  }

  /**
   * The next line of an active resend, already counted in flight; null when the window is full, undefined when no
   * resend is running.
   */
  nextResend(jobActive: boolean, epoch: number): string | null | undefined {
    while (this.cursor >= 0) {
      const wire = this.history.get(this.cursor);
      if (wire === undefined) {
        this.cursor = this.end = -1;
        break;
      }
      if (!this.mayWrite(wire.length + 1, jobActive)) return null;
      this.inFlight.push(this.cursor, wire.length + 1, 0, epoch);
      if (this.cursor++ >= this.end) this.cursor = this.end = -1;
      return wire;
    }
    return undefined;
  }

  get resending(): boolean { return this.cursor >= 0; }

  /** Room for `bytes` more in a known receive buffer: the oldest lines' oks are taken as lost, as OctoPrint does. */
  makeRoom(bytes: number): void {
    const budget = this.settings().rxBufferSize;
    if (budget <= 0 || this.inFlight.count === 0 || this.inFlight.totalBytes + bytes <= budget) return;
    while (this.inFlight.count > 0 && this.inFlight.totalBytes + bytes > budget) this.inFlight.shift();
    this.flags = this.inFlight.flagsInFlight();
  }

  ok(line: string, epoch: number): void {
    if (this.held) {
      if (!this.inDrain) this.endHold();
      return;
    }
    const s = this.settings();
    const adv = line.length > 4 ? parseAdvancedOk(line) : null;
    if (adv && adv.buffer >= 0) this.flow = this.flow.bufferFree(adv.buffer, s);
    if (adv && adv.line >= 0) {
      // ADVANCED_OK names its line: an ok for a line older than the oldest in flight is stale (already counted).
      const head = this.inFlight.peekNumber();
      if (head >= 0 && adv.line < head) return;
    }
    // An ok read in the turn its line was written in was sent before the firmware could see that line: it is one more
    // than the lines in flight (a duplicate, noise, a reset's greeting). Counting it would let one more line out each
    // time, beyond the window and the firmware's receive buffer; like OctoPrint's credit cap, it is dropped.
    if (this.inFlight.count > 0 && this.inFlight.peekEpoch() >= epoch) {
      this.strayOks++;
      return;
    }
    if (line.length > 4 && this.inFlight.has(FLAG_TEMP_QUERY) && isTemperatureLine(line)) {
      // `ok T:` answers an M105: plain oks of lines before it were lost (a timeout's probe, see LineSender.sendProbe).
      let cleared = 0;
      while (this.inFlight.count > 0 && this.inFlight.peekEpoch() < epoch) {
        const f = this.inFlight.shift();
        cleared |= f;
        if ((f & FLAG_TEMP_QUERY) !== 0) break;
      }
      if (cleared !== 0) this.flags = this.inFlight.flagsInFlight();
      this.host.pump();
      return;
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
    if (cleared !== 0) this.flags = this.inFlight.flagsInFlight();
    this.host.pump();
  }

  /** `Resend: N`; `nextNumber` is the number the next new line would get. */
  resend(line: string, nextNumber: number, jobActive: boolean): void {
    this.requestResend(line, nextNumber, jobActive);
    if (this.settings().supportResendsWithoutOk === true && this.held && !this.inDrain) this.endHold();
  }

  private requestResend(line: string, nextNumber: number, jobActive: boolean): void {
    const n = parseResend(line);
    if (n === null) return;
    const s = this.settings();
    this.resendRequests++;
    const resendActive = this.cursor >= 0 || this.held;
    if (!resendActive && n >= nextNumber) return; // the printer saw a line twice; nothing to do
    if (this.held && n === this.holdLine) return; // fallout of lines that were in flight with the first request
    if (n === this.lastResendNumber) {
      if (++this.consecutiveResends >= s.maxConsecutiveResends) {
        this.host.fail(`Printer keeps requesting line ${n} again and again, communication stuck`, 'resend_loop');
        return;
      }
    } else this.consecutiveResends = 1;
    this.lastResendNumber = n;
    if (this.history.get(n) === undefined) {
      if (jobActive) this.host.fail(`Printer requested line ${n} but no sufficient history is available, can't resend`, 'resend');
      return;
    }
    const several = this.inFlight.count > 1;
    this.inFlight.clear();
    this.flags = 0;
    this.cursor = n;
    this.end = nextNumber - 1;
    this.held = true;
    this.holdLine = n;
    this.inDrain = several;
    if (several) this.armHold(s.resendDrainMs);
    else if (s.supportResendsWithoutOk === 'detect') this.armHold(s.timeout.resendOk * 1000);
    else if (!s.swallowOkAfterResend) this.endHold();
  }

  /** Nothing is queued in the firmware (`wait`): lines it could have seen were acknowledged (lost oks). */
  wait(epoch: number, jobActive: boolean): void {
    // Only lines it could have seen, though: lines written in this turn left after the `wait` was read.
    if (!jobActive || this.inFlight.count === 0 || this.held) return;
    let dropped = false;
    while (this.inFlight.count > 0 && this.inFlight.peekEpoch() < epoch) {
      this.inFlight.shift();
      dropped = true;
    }
    if (!dropped) return;
    this.flags = this.inFlight.flagsInFlight();
    this.host.pump();
  }

  /** Any line received: a drain after a resend request lasts until the replies of the lines in flight stop. */
  lineReceived(): void {
    if (this.held && this.holdTimer !== null && this.inDrain) this.armHold(this.settings().resendDrainMs);
  }

  /** A line that is neither ok nor resend: with `detect`, anything but a periodic report means no ok is coming. */
  otherLine(isReport: boolean): void {
    if (this.held && !this.inDrain && this.settings().supportResendsWithoutOk === 'detect' && !isReport) this.endHold();
  }

  endHold(): void {
    this.stopTimers();
    this.held = false;
    this.inDrain = false;
    this.host.pump();
  }

  private armHold(ms: number): void {
    this.stopTimers();
    this.holdTimer = this.timers.setTimeout(() => {
      this.holdTimer = null;
      this.endHold();
    }, ms);
  }

  // ---------------------------------------------------------------- timeouts (LinkSupervisor)

  /** A heat-up's silence is expected once; the next timeout counts. */
  clearHeating(): boolean {
    if ((this.flags & FLAG_HEATING) === 0) return false;
    this.flags &= ~FLAG_HEATING;
    return true;
  }

  /** A probe still unanswered means neither reply is coming: what was in flight up to it is taken as acknowledged. */
  dropThroughProbe(): void {
    if (!this.inFlight.has(FLAG_PROBE)) return;
    while (this.inFlight.count > 0 && (this.inFlight.shift() & FLAG_PROBE) === 0);
    this.flags = this.inFlight.flagsInFlight();
  }

  /** Idle timeout: whatever was in flight is given up. */
  dropAll(): boolean {
    if (this.inFlight.count === 0) return false;
    this.inFlight.clear();
    return true;
  }
}
