// The G-code protocol engine: the link's lifecycle and state machine, replies (ok, resends, errors), timeouts.
import { EngineSender, type ConnectTarget } from './engine-sender.ts';
import { FLAG_HEATING, FLAG_LONG, FLAG_PROBE, FLAG_TEMP_QUERY, AdvancedOkWindow } from './send-window.ts';
import { ReplyKind, replyKind, parseAdvancedOk, parseResend, classifyError } from './replies/control.ts';
import { isTemperatureLine } from './replies/temperature.ts';
import { frameLine } from '../gcode/line.ts';
import { detectPort, type DetectionCandidate } from './detection.ts';
import type { TransportFactory } from './line-transport.ts';

export type { JobFeed, ConnectTarget } from './engine-sender.ts';

/**
 * What no firmware reply starts or ends with: control characters, spaces, DEL and bytes outside ASCII at the start
 * (line noise after a reset or on a bad cable, as in `\0\xff\xfeok`), control characters and spaces at the end. The
 * reference strips whitespace and NUL from both ends; the wider set at the start recovers a reply behind the noise.
 */
// eslint-disable-next-line no-control-regex
const EDGE_NOISE = /^[^\x21-\x7e]+|[\s\x00-\x1f\x7f]+$/g;

export class ProtocolEngine extends EngineSender {
  // resend bookkeeping
  private holdLine = -1;
  private holdTimer: unknown = null;
  private lastResendNumber = -1;
  private consecutiveResends = 0;
  // timeouts and the connect handshake
  private lastRxAt = 0;
  private lastOkAt = 0;
  private lastPollAt = 0;
  private consecutiveTimeouts = 0;
  private tickTimer: unknown = null;
  private connectStartedAt = 0;
  private hellosSent = 0;
  private sawStart = false;
  private busySeen = false;

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

  /**
   * Auto-detection: tries the candidates (port × baudrate) and goes straight to Operational with the first that
   * answers; none answering is an honest error.
   */
  async connectAuto(candidates: DetectionCandidate[], create: TransportFactory): Promise<void> {
    this.setState('DETECT_SERIAL');
    const t = this.settings.timeout;
    const found = await detectPort(candidates, create, this.timers, {
      helloCommand: this.settings.helloCommand, attemptTimeout: t.detectionConsecutive,
      cancelled: () => this.stateId !== 'DETECT_SERIAL', log: (text) => this.hooks.message?.(text),
    });
    if (this.stateId !== 'DETECT_SERIAL') {
      await found?.transport.close().catch(() => {});
      return;
    }
    if (!found) {
      this.setState('ERROR', 'No more candidates to test, and no working port/baudrate combination detected.');
      this.hooks.error?.(this.errorText, 'autodetect');
      this.setState('CLOSED_WITH_ERROR');
      return;
    }
    this.port = found.port;
    this.baudrate = found.baudrate;
    found.transport.on('line', this.onLine);
    found.transport.on('close', this.onClose);
    this.transport = found.transport;
    this.resetLink();
    this.lastRxAt = this.timers.now();
    this.scheduleTick();
    this.onConnected();
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

  /** Forgets every line queued, in flight, pulled ahead or kept for resends: numbering starts again at 1. */
  private clearLines(): void {
    this.inFlight.clear();
    this.activeFlags = 0;
    this.history.clear();
    this.nextNumber = 1;
    this.queue.length = 0;
    this.queueHead = 0;
    this.pollPending = false;
    this.holding = false;
    this.resendCursor = this.resendEnd = -1;
    this.staged = null;
    this.outbox = '';
  }

  private resetLink(): void {
    this.clearLines();
    this.hellosSent = 0;
    this.sawStart = false;
    this.consecutiveTimeouts = 0;
    this.firmwareInfoReceived = false;
    this.autoreportTemp = false;
    this.autoreportSd = false;
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
    this.clearLines();
    const autoreport = this.autoreportTemp;
    this.hooks.printerReset?.();
    this.sendHello();
    this.enqueue('M110 N0');
    // The firmware forgot what it was told: the autoreports and the keepalive interval are asked for again.
    if (autoreport) this.enqueue(`M155 S${this.settings.timeout.temperatureAutoreport}`);
    if (this.autoreportSd) this.enqueue(`M27 S${this.settings.timeout.sdStatusAutoreport}`);
    if (this.busyConfirmed) this.enqueue(`M113 S${Math.max(this.settings.timeout.communicationBusy - 1, 1)}`);
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

  // ---------------------------------------------------------------- receiving

  private onLine = (raw: string): void => {
    let line = raw;
    const last = line.charCodeAt(line.length - 1);
    const first = line.charCodeAt(0);
    if (last <= 32 || last === 127 || first <= 32 || first >= 127) line = line.replace(EDGE_NOISE, '');
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
        // Nothing is queued in the firmware: whatever we count as in flight was acknowledged (lost oks). Only lines it
        // could have seen, though: lines written in this turn left after the `wait` was read.
        if (this.jobActive && this.inFlight.count > 0 && !this.holding) {
          let dropped = false;
          while (this.inFlight.count > 0 && this.inFlight.peekEpoch() < this.epoch) {
            this.inFlight.shift();
            dropped = true;
          }
          if (!dropped) return;
          this.activeFlags = this.inFlight.flagsInFlight();
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
    if (adv && adv.line >= 0) {
      // ADVANCED_OK names its line: an ok for a line older than the oldest in flight is stale (already counted).
      const head = this.inFlight.peekNumber();
      if (head >= 0 && adv.line < head) return;
    }
    // An ok read in the turn its line was written in was sent before the firmware could see that line: it is one more
    // than the lines in flight (a duplicate, noise, a reset's greeting). Counting it would let one more line out each
    // time, beyond the window and the firmware's receive buffer; like OctoPrint's credit cap, it is dropped.
    if (this.inFlight.count > 0 && this.inFlight.peekEpoch() >= this.epoch) {
      this.strayOks++;
      return;
    }
    if (line.length > 4 && this.inFlight.has(FLAG_TEMP_QUERY) && isTemperatureLine(line)) {
      // `ok T:` answers an M105: plain oks of lines before it were lost (a timeout's probe, see sendProbe).
      let cleared = 0;
      while (this.inFlight.count > 0 && this.inFlight.peekEpoch() < this.epoch) {
        const f = this.inFlight.shift();
        cleared |= f;
        if ((f & FLAG_TEMP_QUERY) !== 0) break;
      }
      if (cleared !== 0) this.activeFlags = this.inFlight.flagsInFlight();
      this.pump();
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
    if (cleared !== 0) this.activeFlags = this.inFlight.flagsInFlight();
    this.pump();
  }

  /** Oks dropped because nothing the firmware could have seen was waiting for them (tests and diagnostics). */
  strayOks = 0;

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
          this.hooks.cancelOnError?.(text);
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
    } else if (name === 'AUTOREPORT_SD_STATUS' && this.settings.capabilities.autoreport_sdstatus) {
      this.enqueue(`M27 S${this.settings.timeout.sdStatusAutoreport}`);
      this.autoreportSd = true;
    } else if (name === 'EMERGENCY_PARSER' && this.settings.capabilities.emergency_parser) {
      this.emergencyParser = true;
    }
  }

  /** The firmware reports SD progress by itself (M27 S<n> sent): SD jobs need not poll M27. */
  autoreportSd = false;

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

  /** Effective communication timeout in ms (docs/reference/serial-protocol.md §8.2). */
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
      // The ok may be lost or only late: granting a credit now would leave one line too many in flight for the rest
      // of the print if it was late. An M105 outside the window decides (handleOk). A probe still unanswered means
      // neither reply is coming: what was in flight up to it is taken as acknowledged.
      if (this.inFlight.has(FLAG_PROBE)) {
        while (this.inFlight.count > 0 && (this.inFlight.shift() & FLAG_PROBE) === 0);
        this.activeFlags = this.inFlight.flagsInFlight();
      }
      this.lastPollAt = this.timers.now();
      this.sendProbe();
      this.pump();
    } else if (this.inFlight.count > 0) {
      this.inFlight.clear();
      this.pump();
    }
  }

  protected linkFailed(err: Error): void {
    this.onClose(err);
  }
}
