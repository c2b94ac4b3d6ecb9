// Handles firmware lines: control replies (ok, resend, errors, busy, wait, start) go to the engine's narrow interface,
// informational ones (temperatures, positions, M115, capabilities, SD, actions) through the parsers to the hooks.
import type { HeaterTargets } from './heater-targets.ts';
import type { EngineHooks } from './hooks.ts';
import { ReplyKind, replyKind, classifyError } from './replies/control.ts';
import type { Timers } from './settings.ts';
import { isTemperatureLine, parseTemperatureLine, canonicalTemperatures, parseRepetierTarget } from './replies/temperature.ts';
import { isPositionLine, parsePosition } from './replies/position.ts';
import { isFirmwareLine, parseFirmwareLine, parseCapability } from './replies/firmware-info.ts';
import { parseSdReply, parseSdListEntry, type SdListEntry } from './replies/sd-card.ts';
import { parseAction } from './replies/control.ts';

/** The link's side of a reply: its state and what a control reply does to it (the engine gives it). */
export interface ReplyLink {
  /** Waiting for the handshake's answer. */
  connecting(): boolean;
  operational(): boolean;
  /** Already in Error (or Offline after error): further errors are noise. */
  failed(): boolean;
  /** The handshake was answered: Operational. */
  handshakeAnswered(): void;
  /** `start` while connecting; false when one was already seen (then it is handled like any `start`). */
  startWhileConnecting(): boolean;
  /** `start` while operational: the firmware rebooted under us. */
  externalReset(): void;
  ok(line: string): void;
  busy(): void;
  fail(text: string, reason: string, emergencyStop: boolean): void;
}

/** The acknowledgement side (the line sender implements it). */
export interface ReplyAcks {
  resendRequested(line: string): void;
  /** `wait`: the firmware's queue is empty. */
  waitReceived(): void;
  /** A line that is neither ok nor resend (resend-without-ok detection). */
  otherLine(isReport: boolean): void;
}

/** What the replies say about the firmware, and what reading them needs of it (firmware-state.ts implements it). */
export interface ReplyFirmware {
  readonly tool: number;
  readonly name: string;
  detected(name: string): void;
  capabilityEnabled(name: string): void;
  invalidTool(): void;
}

/** Who a reply goes to: three small interfaces instead of one bag of callbacks. */
export interface ReplyHost {
  link: ReplyLink;
  acks: ReplyAcks;
  firmware: ReplyFirmware;
}

/** One to three characters that are no word or field of a reply (no letters run into `ok`, no `:`), then an ok. */
const GLUED_OK = /^(?=[^\s:]{1,3}ok(?: |$))(?![a-z]+ok)[^\s:]{1,3}(ok(?: .*)?)$/i;

/** Capabilities kept at most (`Cap:NAME:0|1` lines). */
export const MAX_CAPABILITIES = 256;

/** Files one SD listing holds at most (a card of more is cut, and said so in the terminal). */
export const MAX_SD_LISTING = 10_000;

/**
 * Lines that interrupt an SD listing without being an entry: reports by how they start (`T:`, `B:`, `T0:`, `X:`,
 * `echo:`, `SD printing`). An entry starts with the file's name, and no FAT name holds a `:`.
 */
const LISTING_INTERRUPTION = /^(?:[TBC]\d*:|X:|echo:|SD printing)/;

/** Firmware errors announcing a kill, whose consequence follows on a second line. */
const KILL_CAUSE = /Heating failed|Thermal Runaway|Thermal Malfunction|MAXTEMP triggered|MINTEMP triggered|Invalid extruder number|Watchdog barked|KILL caused/i;

export interface ErrorPolicy {
  ignoreErrorsFromFirmware: boolean;
  disconnectOnErrors: boolean;
  sendM112OnError: boolean;
}

export class ReplyHandler {
  private caps = new Map<string, boolean>();
  private sdListing: SdListEntry[] | null = null;
  private pendingKill: string | null = null;

  constructor(private readonly host: ReplyHost, private readonly hooks: EngineHooks, private readonly timers: Timers,
    private readonly policy: () => ErrorPolicy, private readonly targets: HeaterTargets) {}

  reset(): void {
    this.caps.clear();
    this.sdListing = null;
  }

  /** One trimmed, non-empty line from the firmware. */
  handle(line: string): void {
    const kind = replyKind(line);
    const { link: host, acks } = this.host;
    if (host.connecting()) {
      if (kind === ReplyKind.Ok || kind === ReplyKind.Wait) {
        host.handshakeAnswered();
        return;
      }
      if (kind === ReplyKind.Start && host.startWhileConnecting()) return;
    }
    switch (kind) {
      case ReplyKind.Ok:
        host.ok(line);
        if (line.length > 3) this.route(line, true);
        return;
      case ReplyKind.Resend:
        acks.resendRequested(line);
        return;
      case ReplyKind.Error:
        this.error(line);
        return;
      case ReplyKind.Busy:
        host.busy();
        return;
      case ReplyKind.Wait:
        acks.waitReceived();
        return;
      case ReplyKind.Start:
        if (host.operational()) host.externalReset();
        return;
      case ReplyKind.Action:
        this.route(line, false);
        return;
      default: {
        // Printable line noise glued in front of an ok (`5Qok`) is an ok: waiting for a timeout and a probe costs seconds.
        const ok = GLUED_OK.exec(line);
        if (ok !== null) return this.handle(ok[1]);
        acks.otherLine(this.isReport(line));
        this.route(line, false);
      }
    }
  }

  private error(line: string): void {
    // Marlin's kill messages come as two lines; join them so the UI shows the cause and the consequence.
    if (this.pendingKill !== null) {
      const joined = `${this.pendingKill} - ${line.replace(/^error:\s*/i, '')}`;
      this.pendingKill = null;
      this.firmwareError(joined);
      return;
    }
    if (KILL_CAUSE.test(line)) {
      this.pendingKill = line;
      this.timers.setTimeout(() => {
        if (this.pendingKill === line) {
          this.pendingKill = null;
          this.firmwareError(line);
        }
      }, 200);
      return;
    }
    this.firmwareError(line);
  }

  private firmwareError(line: string): void {
    const { text, cls } = classifyError(line, this.host.firmware.name);
    switch (cls) {
      case 'resendFollows':
      case 'sd':
      case 'unknownCommand':
        return;
      case 'recoverable':
        this.host.link.ok('ok');
        return;
      case 'commandFailed':
        this.hooks.firmwareError?.(text, false);
        return;
      default: {
        if (this.host.link.failed()) return;
        const policy = this.policy();
        if (policy.ignoreErrorsFromFirmware) {
          this.hooks.firmwareError?.(text, false);
          return;
        }
        this.hooks.firmwareError?.(text, true);
        if (policy.disconnectOnErrors || /kill\(\) called|fatal:/i.test(text)) {
          this.host.link.fail(text, 'firmware', policy.sendM112OnError);
        } else {
          this.hooks.cancelOnError?.(text);
        }
      }
    }
  }

  hasCapability(name: string): boolean {
    return this.caps.get(name) === true;
  }

  capabilities(): Record<string, boolean> {
    return Object.fromEntries(this.caps);
  }

  /** Periodic reports that may arrive between a resend request and its ok. */
  isReport(line: string): boolean {
    return isTemperatureLine(line) || isPositionLine(line) || line.startsWith('echo:busy') || line.startsWith('SD printing');
  }

  private endSdListing(): void {
    const entries = this.sdListing ?? [];
    this.sdListing = null;
    this.hooks.sdList?.(entries);
  }

  private route(line: string, fromOk: boolean): void {
    // A listing's lines are its entries, up to its end; a report in between (a temperature autoreport, an echo) is read
    // as what it is. Without an end (a line lost to noise) the listing would otherwise take every later report for a
    // file, for good, and grow with each.
    if (this.sdListing !== null && !fromOk && !LISTING_INTERRUPTION.test(line)) {
      if (line === 'End file list') return this.endSdListing();
      const entry = parseSdListEntry(line);
      if (entry) this.sdListing.push(entry);
      if (this.sdListing.length >= MAX_SD_LISTING) {
        this.hooks.message?.(`SD card listing cut at ${MAX_SD_LISTING} files (no "End file list" came before)`);
        this.endSdListing();
      }
      return;
    }
    if (this.sdListing !== null && line === 'echo:End file list') return this.endSdListing();
    if (isPositionLine(line)) {
      const pos = parsePosition(line);
      if (pos) this.hooks.position?.(pos);
      return;
    }
    if (isTemperatureLine(line)) {
      const raw = parseTemperatureLine(line);
      if (raw.size === 0) return;
      const temps = canonicalTemperatures(raw, this.host.firmware.tool);
      this.targets.report(temps);
      this.hooks.temperatures?.(temps, fromOk);
      return;
    }
    if (fromOk) return;
    const c0 = line.charCodeAt(0);
    if ((c0 === 67 || c0 === 99) && line.length > 4) {
      const cap = parseCapability(line);
      if (cap) {
        // Marlin reports about 30; a board that makes up names without end (noise in the right shape) stops being heard.
        if (this.caps.size >= MAX_CAPABILITIES && !this.caps.has(cap[0])) return;
        this.caps.set(cap[0], cap[1]);
        this.hooks.capability?.(cap[0], cap[1]);
        if (cap[1]) this.host.firmware.capabilityEnabled(cap[0]);
        return;
      }
    }
    if (isFirmwareLine(line)) {
      const info = parseFirmwareLine(line);
      if (info) {
        this.host.firmware.detected(info.name);
        this.hooks.firmware?.(info);
        return;
      }
    }
    if (line.startsWith('//')) {
      if (/^\/\/\s*action:/.test(line)) {
        const a = parseAction(line);
        this.hooks.action?.(a.name, a.params);
      }
      return;
    }
    if (line.startsWith('Target')) {
      const t = parseRepetierTarget(line);
      if (t) {
        this.targets.reported(t.heater, t.target);
        this.hooks.targetReported?.(t.heater, t.target);
        return;
      }
    }
    const sd = parseSdReply(line);
    if (sd) {
      if (sd.kind === 'listBegin') this.sdListing = [];
      this.hooks.sdReply?.(sd);
      return;
    }
    if (/invalid extruder/i.test(line)) this.host.firmware.invalidTool();
  }
}
