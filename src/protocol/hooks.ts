// What the protocol engine tells its owner (the printer service); every hook is optional and must not throw.
import type { LinkStateId } from './connection-state.ts';
import type { CanonicalTemperatures } from './replies/temperature.ts';
import type { FirmwareInfo } from './replies/firmware-info.ts';
import type { ParsedPosition } from './replies/position.ts';
import type { SdListEntry, SdReply } from './replies/sd-card.ts';

export interface EngineHooks {
  stateChanged?(state: LinkStateId, error: string): void;
  /** Every line written, in wire form (`N12 G1 X1*34`). */
  sent?(wire: string): void;
  /** Every line received, trimmed. */
  received?(line: string): void;
  connected?(port: string, baudrate: number): void;
  disconnected?(): void;
  temperatures?(temps: CanonicalTemperatures, fromOk: boolean): void;
  /** Repetier `TargetExtr0:200` / `TargetBed:60`. */
  targetReported?(heater: number | 'bed', target: number): void;
  firmware?(info: FirmwareInfo): void;
  capability?(name: string, enabled: boolean): void;
  position?(position: ParsedPosition): void;
  sdReply?(reply: SdReply): void;
  sdList?(entries: SdListEntry[]): void;
  /** A known command other than G0/G1 was written (targets, tool changes, homing, fan...). */
  commandSent?(cmd: string, code: string): void;
  toolChanged?(tool: number, old: number): void;
  /** `//action:` lines; the job handles pause/resume/cancel itself when a job runs. */
  action?(name: string, params: string): void;
  /** A firmware error that leaves the link up (serial.disconnectOnErrors off): the job is cancelled because of it. */
  cancelOnError?(error: string): void;
  /** Firmware error: `fatal` ones also move to Error; others are command failures reported for the UI. */
  firmwareError?(text: string, fatal: boolean): void;
  /** Error moves with a reason (`firmware`, `timeout`, `resend_loop`, `connection`, `autodetect`). */
  error?(text: string, reason: string): void;
  /** Commands dropped by blockedCommands / ignoredCommands / profile checks. */
  commandSuppressed?(cmd: string, reason: string): void;
  printerReset?(): void;
  emergencyStop?(): void;
  /** The link's own notices (timeouts, port detection, internal errors); firmware lines come through `received`. */
  message?(text: string): void;
  invalidTool?(tool: number, fallback: number): void;
}
