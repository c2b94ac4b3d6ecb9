// Watches the link: the connect handshake (hellos, `start`), communication timeouts, probes and temperature polling.
import { HeaterTargets } from './heater-targets.ts';
import type { EngineSettings, Timers } from './settings.ts';
import type { EnqueueOptions } from './line-sender.ts';

/** The engine side the supervisor calls into. */
export interface SupervisorHost {
  /** Waiting for the firmware's first answer (Connecting). */
  connecting(): boolean;
  operational(): boolean;
  /** The handshake timed out. */
  giveUp(): void;
  fail(text: string, reason: string): void;
  message(text: string): void;
}

/** What the sender did about a communication timeout (LineSender.recoverFromTimeout), so the supervisor can say it. */
export type TimeoutRemedy =
  /** A resend was held waiting for the firmware: the requested line goes out now. */
  | 'resend'
  /** A heat-up's silence: expected once, the next timeout counts. */
  | 'heating'
  /** A long-running command (G28, M400 …) is in flight: keep waiting. */
  | 'long'
  /** Printing: an M105 probe outside the window decides whether the ok was lost or late. */
  | 'probe'
  /** Idle: what was in flight is given up. */
  | 'dropped'
  /** Nothing was in flight. */
  | 'none';

/** The sender as the supervisor sees it (LineSender implements it): whether the link is open, what is in flight, the
 * hello, the temperature poll and the timeout's remedy — never its window or its writer. */
export interface SupervisedSender {
  /** A transport is attached (the link is open). */
  readonly attached: boolean;
  readonly jobActive: boolean;
  /** Lines written and not yet acknowledged. */
  readonly linesInFlight: number;
  /** A long-running command is in flight: its silence is expected (no ok-lost timeout, no temperature poll). */
  readonly longRunning: boolean;
  enqueue(cmd: string, opts?: EnqueueOptions): void;
  /** The handshake's hello, written at once as line 0 (outside the queue and the window). */
  writeHello(command: string): void;
  /** A communication timeout: the sender's remedy for what is in flight. */
  recoverFromTimeout(): TimeoutRemedy;
}

export class LinkSupervisor {
  private lastRxAt = 0;
  private lastOkAt = 0;
  private lastPollAt = 0;
  private consecutiveTimeouts = 0;
  private tickTimer: unknown = null;
  private connectStartedAt = 0;
  private hellosSent = 0;
  private sawStartLine = false;
  /** The firmware sent `start` (it booted) since the link was opened or last reset. */
  private startSeen = false;
  /** The firmware reports temperatures by itself (M155 S<n> sent). */
  autoreportTemp = false;
  /** M113 was sent: `busy:` keepalives come every communicationBusy seconds. */
  busyConfirmed = false;
  /** The heaters' targets as the replies and commands tell them (polls come faster while idle and one is set). */
  readonly targets = new HeaterTargets();

  constructor(private readonly settings: () => EngineSettings, private readonly timers: Timers, private readonly sender: SupervisedSender,
    private readonly host: SupervisorHost) {}

  /** A new link (or a reset one): handshake and timeout counters start over. */
  reset(): void {
    this.hellosSent = 0;
    this.sawStartLine = false;
    this.startSeen = false;
    this.consecutiveTimeouts = 0;
    this.autoreportTemp = false;
    this.busyConfirmed = false;
  }

  /** Connecting: the hellos go out now unless the firmware's `start` is awaited. */
  beginHandshake(): void {
    this.connectStartedAt = this.timers.now();
    this.lastRxAt = this.connectStartedAt;
    if (!this.settings().waitForStartOnConnect) {
      this.sendHello();
      this.sendHello();
    }
    this.schedule();
  }

  /** Detection already had its answer: only the timers. */
  beginDetected(): void {
    this.lastRxAt = this.timers.now();
    this.schedule();
  }

  connected(): void {
    this.lastOkAt = this.lastRxAt = this.lastPollAt = this.timers.now();
  }

  stop(): void {
    if (this.tickTimer !== null) this.timers.clearTimeout(this.tickTimer);
    this.tickTimer = null;
  }

  sendHello(): void {
    this.hellosSent++;
    this.sender.writeHello(this.settings().helloCommand);
  }

  lineReceived(): void {
    this.lastRxAt = this.timers.now();
    this.consecutiveTimeouts = 0;
  }

  okReceived(): void {
    this.lastOkAt = this.lastRxAt;
  }

  /** `start` while connecting: the firmware booted, one more hello (once). False when it was already answered. */
  startWhileConnecting(): boolean {
    this.startSeen = true;
    if (this.sawStartLine) return false;
    this.sawStartLine = true;
    this.sendHello();
    return true;
  }

  /** `start` while operational (handled by the engine as a reset); remembered for recovery. */
  startReceived(): void {
    this.startSeen = true;
  }

  get sawStart(): boolean { return this.startSeen; }

  /** Effective communication timeout in ms: the busy interval once confirmed, never shorter than the poll interval. */
  communicationTimeoutMs(): number {
    const t = this.settings().timeout;
    const comm = this.busyConfirmed ? t.communicationBusy : t.communication;
    const temp = this.autoreportTemp ? t.temperatureAutoreport : this.pollInterval();
    return Math.max(comm, temp + 1) * 1000;
  }

  private pollInterval(): number {
    const t = this.settings().timeout;
    return !this.sender.jobActive && this.targets.active ? t.temperatureTargetSet : t.temperature;
  }

  private schedule(): void {
    if (this.tickTimer !== null) this.timers.clearTimeout(this.tickTimer);
    this.tickTimer = this.timers.setTimeout(() => {
      this.tickTimer = null;
      if (!this.sender.attached) return;
      this.tick();
      if (this.sender.attached) this.schedule();
    }, 250);
  }

  private tick(): void {
    const now = this.timers.now();
    const s = this.settings();
    if (this.host.connecting()) {
      if (now - this.connectStartedAt < s.timeout.communication * 1000) return;
      if (this.hellosSent < 3 && !s.waitForStartOnConnect) {
        this.sendHello();
        this.connectStartedAt = now;
        return;
      }
      this.host.message('Timeout while trying to connect');
      this.host.giveUp();
      return;
    }
    if (!this.host.operational()) return;
    const sender = this.sender;
    const timeout = this.communicationTimeoutMs();
    const silent = now - this.lastRxAt >= timeout;
    const okLost = sender.jobActive && sender.linesInFlight > 0 && !sender.longRunning && now - this.lastOkAt >= timeout;
    if (silent || okLost) {
      this.lastRxAt = this.lastOkAt = now;
      this.timedOut();
      if (!sender.attached) return;
    }
    if (!this.autoreportTemp && !sender.longRunning && now - this.lastPollAt >= this.pollInterval() * 1000) {
      this.lastPollAt = now;
      this.sender.enqueue('M105', { poll: true });
    }
  }

  private timedOut(): void {
    const jobActive = this.sender.jobActive;
    this.consecutiveTimeouts++;
    const limits = this.settings().maxCommunicationTimeouts;
    const limit = this.sender.longRunning ? limits.long : jobActive ? limits.printing : limits.idle;
    if (limit > 0 && this.consecutiveTimeouts > limit) {
      this.host.fail('Too many consecutive timeouts, printer still connected and alive?', 'timeout');
      return;
    }
    const remedy = this.sender.recoverFromTimeout();
    if (remedy === 'resend') this.host.message('Communication timeout during an active resend, resending requested line');
    else if (remedy === 'probe') {
      this.host.message('Communication timeout while printing, trying to trigger response from printer');
      // The probe is this interval's temperature poll.
      this.lastPollAt = this.timers.now();
    }
  }
}
