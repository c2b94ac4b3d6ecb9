// Routes informational firmware lines (temperatures, positions, M115, capabilities, SD, actions) to parsers and hooks.
import type { EngineHooks } from './hooks.ts';
import { isTemperatureLine, parseTemperatureLine, canonicalTemperatures, parseRepetierTarget } from './replies/temperature.ts';
import { isPositionLine, parsePosition } from './replies/position.ts';
import { isFirmwareLine, parseFirmwareLine, parseCapability } from './replies/firmware-info.ts';
import { parseSdReply, parseSdListEntry, type SdListEntry } from './replies/sd-card.ts';
import { parseAction } from './replies/control.ts';

/** The engine-side callbacks the router needs (kept narrow so the router is testable alone). */
export interface RouterHost {
  currentTool: number;
  firmwareDetected(name: string): void;
  capabilityEnabled(name: string): void;
  invalidTool(): void;
}

export class ReplyRouter {
  private caps = new Map<string, boolean>();
  private sdListing: SdListEntry[] | null = null;

  constructor(private readonly host: RouterHost, private readonly hooks: EngineHooks) {}

  reset(): void {
    this.caps.clear();
    this.sdListing = null;
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

  route(line: string, fromOk: boolean): void {
    if (this.sdListing !== null && !fromOk) {
      if (line === 'End file list' || line === 'echo:End file list') {
        const entries = this.sdListing;
        this.sdListing = null;
        this.hooks.sdList?.(entries);
        return;
      }
      const entry = parseSdListEntry(line);
      if (entry) this.sdListing.push(entry);
      return;
    }
    if (isPositionLine(line)) {
      const pos = parsePosition(line);
      if (pos) this.hooks.position?.(pos);
      return;
    }
    if (isTemperatureLine(line)) {
      const raw = parseTemperatureLine(line);
      if (raw.size > 0) this.hooks.temperatures?.(canonicalTemperatures(raw, this.host.currentTool), fromOk);
      return;
    }
    if (fromOk) return;
    const c0 = line.charCodeAt(0);
    if ((c0 === 67 || c0 === 99) && line.length > 4) {
      const cap = parseCapability(line);
      if (cap) {
        this.caps.set(cap[0], cap[1]);
        this.hooks.capability?.(cap[0], cap[1]);
        if (cap[1]) this.host.capabilityEnabled(cap[0]);
        return;
      }
    }
    if (isFirmwareLine(line)) {
      const info = parseFirmwareLine(line);
      if (info) {
        this.host.firmwareDetected(info.name);
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
    if (/invalid extruder/i.test(line)) this.host.invalidTool();
  }
}
