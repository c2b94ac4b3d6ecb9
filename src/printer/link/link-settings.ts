// config.yaml's serial section → the protocol engine's settings, and the connect plan (direct or auto-detection).
import type { Config } from '../../config/schema.ts';
import type { EngineSettings } from '../../protocol/settings.ts';
import type { DetectionCandidate } from '../../protocol/detection.ts';

export function engineSettingsFrom(s: Config['serial']): Partial<EngineSettings> {
  return {
    helloCommand: s.helloCommand, waitForStartOnConnect: s.waitForStartOnConnect, alwaysSendChecksum: s.alwaysSendChecksum,
    neverSendChecksum: s.neverSendChecksum, sendChecksumWithUnknownCommands: s.sendChecksumWithUnknownCommands,
    unknownCommandsNeedAck: s.unknownCommandsNeedAck, checksumRequiringCommands: [...s.checksumRequiringCommands],
    longRunningCommands: [...s.longRunningCommands], blockedCommands: [...s.blockedCommands], ignoredCommands: [...s.ignoredCommands],
    pausingCommands: [...s.pausingCommands], emergencyCommands: [...s.emergencyCommands], disconnectOnErrors: s.disconnectOnErrors,
    ignoreErrorsFromFirmware: s.ignoreErrorsFromFirmware, sendM112OnError: s.sendM112OnError, lastLineBufferSize: s.lastLineBufferSize,
    supportResendsWithoutOk: s.supportResendsWithoutOk, swallowOkAfterResend: s.swallowOkAfterResend,
    ignoreIdenticalResends: s.ignoreIdenticalResends, identicalResendsCountdown: s.identicalResendsCountdown,
    abortHeatupOnCancel: s.abortHeatupOnCancel, logPositionOnPause: s.logPositionOnPause, firmwareDetection: s.firmwareDetection,
    sdAlwaysAvailable: s.sdAlwaysAvailable, capabilities: { ...s.capabilities }, timeout: { ...s.timeout },
    maxCommunicationTimeouts: { ...s.maxCommunicationTimeouts }, rxBufferSize: s.rxBufferSize, advancedOk: s.advancedOk,
    maxLinesInFlight: s.sendAheadMaxLines, resendDrainMs: s.resendDrainMs, maxConsecutiveResends: s.maxConsecutiveResends,
  };
}

export type ConnectPlan =
  | { kind: 'direct'; port: string; baudrate: number }
  | { kind: 'detect'; candidates: DetectionCandidate[] };

/**
 * VIRTUAL (or a port and baudrate both given) connects directly; otherwise the real ports (or the one given) are
 * tried with the likely baudrates (or the one given).
 */
export function planConnection(port: string | undefined, baudrate: number | undefined, ports: string[],
  detectionBaudrates: (portCount: number) => number[]): ConnectPlan {
  const virtual = port === 'VIRTUAL' || (port === undefined && ports.length === 1 && ports[0] === 'VIRTUAL');
  if (virtual) return { kind: 'direct', port: 'VIRTUAL', baudrate: baudrate ?? 115200 };
  if (port !== undefined && baudrate !== undefined) return { kind: 'direct', port, baudrate };
  const candidatePorts = port !== undefined ? [port] : ports.filter((p) => p !== 'VIRTUAL');
  const bauds = baudrate !== undefined ? [baudrate] : detectionBaudrates(candidatePorts.length);
  return { kind: 'detect', candidates: candidatePorts.flatMap((p) => bauds.map((b) => ({ port: p, baudrate: b }))) };
}
