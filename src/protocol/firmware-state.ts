// What the link knows of the firmware: its name and the settings it needs (quirks), the tool it has selected, and the
// capabilities in use (emergency parser, SD status autoreport), learnt from M115, `Cap:` lines and the commands written.
import type { EngineHooks } from './hooks.ts';
import type { EngineSettings } from './settings.ts';
import { withFirmwareQuirks } from './firmware-quirks.ts';
import type { ReplyFirmware } from './reply-handler.ts';

export class FirmwareState implements ReplyFirmware {
  name = '';
  known = false;
  tool = 0;
  /** The firmware acts on emergency commands while its queue is full (Cap:EMERGENCY_PARSER). */
  parser = false;
  /** The firmware reports SD progress by itself (M27 S<n> sent). */
  sdAutoreport = false;
  /** The configured settings plus what the detected firmware needs. */
  effective: EngineSettings;

  constructor(private readonly base: EngineSettings, private readonly hooks: EngineHooks, private readonly enqueue: (cmd: string) => void) {
    this.effective = base;
  }

  /** A new link: nothing known yet (the name stays until the next M115 report). */
  reset(): void {
    this.known = false;
    this.effective = this.base;
    this.sdAutoreport = false;
    this.parser = false;
  }

  detected(name: string): void {
    if (this.known) return;
    this.known = true;
    this.name = name;
    this.effective = withFirmwareQuirks(this.base, name);
  }

  /** A `T<n>` was written. Announced even when it names the current tool, as OctoPrint does (the firmware re-selects it). */
  toolSelected(cmd: string): void {
    const n = Number(cmd.trim().slice(1).split(' ')[0]);
    if (!Number.isInteger(n)) return;
    const old = this.tool;
    this.tool = n;
    this.hooks.toolChanged?.(n, old);
  }

  capabilityEnabled(name: string): void {
    const s = this.effective;
    if (name === 'AUTOREPORT_TEMP' && s.capabilities.autoreport_temp) {
      this.enqueue(`M155 S${s.timeout.temperatureAutoreport}`);
    } else if (name === 'AUTOREPORT_SD_STATUS' && s.capabilities.autoreport_sdstatus) {
      this.enqueue(`M27 S${s.timeout.sdStatusAutoreport}`);
      this.sdAutoreport = true;
    } else if (name === 'EMERGENCY_PARSER' && s.capabilities.emergency_parser) {
      this.parser = true;
    }
  }

  /** Tool the firmware refused: fall back to the first. */
  invalidTool(): void {
    const bad = this.tool;
    const fallback = 0;
    this.tool = fallback;
    this.hooks.invalidTool?.(bad, fallback);
    if (bad !== fallback) this.enqueue(`T${fallback}`);
  }
}
