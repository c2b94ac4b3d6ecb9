// Settings a firmware needs whatever the configuration says (found by its M115 name): a new settings object, never a
// change to the configured one.
import type { EngineSettings } from './settings.ts';

export function withFirmwareQuirks(base: EngineSettings, firmwareName: string): EngineSettings {
  if (!base.firmwareDetection) return base;
  const n = firmwareName.toLowerCase();
  const s = { ...base };
  if (n.includes('repetier') || n.includes('anet_a8') || n.includes('malyan')) s.alwaysSendChecksum = true;
  if (n.includes('klipper')) s.unknownCommandsNeedAck = true;
  if (n.includes('prusa-firmware')) {
    s.sendChecksumWithUnknownCommands = true;
    s.unknownCommandsNeedAck = true;
  }
  return s;
}
