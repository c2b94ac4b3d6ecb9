// The engine's hooks for the printer, by responsibility: the terminal, the readings with their events, and what the
// firmware asks of the job (actions, errors, resets).
import type { EventBus } from '../../core/event-bus.ts';
import type { ConnectionStateId } from '../printer-state.ts';
import type { EngineLink } from './engine-link.ts';
import type { EngineHooks } from '../../protocol/hooks.ts';
import type { JobStreamer } from '../job/job-stream.ts';
import type { PrinterReadings } from '../readings/printer-readings.ts';
import type { SerialLog } from '../readings/serial-log.ts';
import type { FirmwareJobAction, LinkProfile, PrinterListener, Position } from '../types.ts';

/** The terminal: every line both ways (watchers see each received line at once), the link's notices. */
export function terminalHooks(log: SerialLog, replyWatchers: ReadonlySet<(line: string) => void>): EngineHooks {
  return {
    sent: (wire) => log.sent(wire),
    received: (line) => {
      log.received(line);
      if (replyWatchers.size !== 0) for (const watch of replyWatchers) watch(line);
    },
    // The link's own notices belong in the terminal; `current.messages` carries only what the firmware sent.
    message: (text) => log.info(text),
    firmwareError: (text, fatal) => log.info(fatal ? `Firmware error: ${text}` : `Command failed: ${text}`),
  };
}

/** What the reading hooks update and tell. */
export interface ReadingsSink {
  readonly readings: PrinterReadings;
  readonly events: EventBus;
  engine(): EngineLink | null;
  stateId(): ConnectionStateId;
  profile(): LinkProfile;
  /** The feed rate of the last move written (printer/line-rules.ts). */
  currentF(): number | null;
  sdLowerCase(): boolean;
  notify(fn: (l: PrinterListener) => void): void;
  notifyState(): void;
  runScript(name: string, context: Record<string, unknown>): Promise<boolean>;
}

/** Readings (temperatures, position, SD card, capabilities) and the OctoPrint events that go with them. */
export function readingHooks(h: ReadingsSink): EngineHooks {
  const events = h.events;
  const readings = h.readings;
  return {
    connected: (port, baudrate) => {
      events.emit('Connected', { port, baudrate });
      void h.runScript('afterPrinterConnected', {});
    },
    disconnected: () => events.emit('Disconnected', {}),
    temperatures: (t) => {
      const entry = readings.applyReport(t, h.profile(), Date.now());
      h.notify((l) => l.temperature?.(entry));
    },
    targetReported: (heater, target) => readings.setTarget(heater === 'bed' ? 'bed' : `tool${heater}`, target),
    firmware: (info) => events.emit('FirmwareData', { name: info.name, data: info.data }),
    capability: (name, enabled) => {
      if (name === 'CHAMBER_TEMPERATURE') readings.chamberCapability = enabled;
      else if (name === 'LFN_WRITE') readings.lfnWrite = enabled;
    },
    position: (p) => {
      const e = h.engine();
      const pos: Position = { x: p.x, y: p.y, z: p.z, e: p.e ?? p.es[e?.currentTool ?? 0] ?? null, t: e?.currentTool ?? null, f: e ? h.currentF() : null };
      readings.position = pos;
      const state = h.stateId();
      events.emit('PositionUpdate', { ...pos, reason: state === 'PAUSING' ? 'pause' : state === 'CANCELLING' ? 'cancel' : null });
    },
    sdReply: (r) => {
      if (r.kind === 'cardOk') {
        const first = !readings.sdReady;
        readings.sdReady = true;
        if (first) h.engine()?.enqueue('M20', { once: true });
        h.notifyState();
      } else if (r.kind === 'cardFail' || r.kind === 'cardReleased') {
        readings.sdReady = false;
        readings.sdFiles = [];
        h.notifyState();
      }
    },
    sdList: (entries) => {
      // Only a listing that changed is news: a client that answers UpdatedFiles with `GET /api/files?force=true`
      // (which asks for M20 again) would otherwise keep the printer listing its card forever.
      if (readings.sdList(entries, h.sdLowerCase())) events.emit('UpdatedFiles', { type: 'printables' });
    },
    commandSent: (cmd, code) => {
      const engine = h.engine();
      readings.commandSent(cmd, code, engine?.currentTool ?? 0);
      const triggered = GCODE_EVENTS.get(code);
      if (triggered) events.emit(triggered, {});
    },
    toolChanged: (tool, old) => events.emit('ToolChange', { old, new: tool }),
    error: (text, reason) => events.emit('Error', { error: text, reason }),
    commandSuppressed: (cmd, reason) => events.emit('CommandSuppressed', {
      command: cmd, message: `Not sending ${cmd} to the printer, it is ${reason === 'blocked' ? 'blocked' : 'ignored'} by the settings`,
      severity: reason === 'blocked' ? 'warn' : 'info',
    }),
    emergencyStop: () => events.emit('EStop', {}),
    invalidTool: (tool, fallback) => events.emit('InvalidToolReported', { tool, fallback }),
  };
}

/** What the firmware's requests act on. */
export interface ActionSink {
  readonly readings: PrinterReadings;
  readonly events: EventBus;
  engine(): EngineLink | null;
  job(): JobStreamer | null;
  /** Hands a firmware job action to the job owner (a cancel with the firmware error behind it); false when nobody listens. */
  jobAction(action: FirmwareJobAction, firmwareError?: string): boolean;
  notifyState(): void;
  disconnect(): Promise<void>;
  sdRefresh(): void;
}

/** `//action:` lines, a firmware error that cancels the job, a printer that reset itself. */
export function actionHooks(h: ActionSink): EngineHooks {
  return {
    action: (name) => onAction(h, name),
    cancelOnError: (error) => {
      if (!h.jobAction('cancel', error)) streamAction(h.job(), 'cancel');
    },
    printerReset: () => {
      h.events.emit('PrinterReset', { idle: h.job() === null });
      h.job()?.abort('The printer was reset');
    },
  };
}

/** Commands whose sending is itself an event (OctoPrint's G-code-triggered events, all without a payload). */
const GCODE_EVENTS: ReadonlyMap<string, 'Home' | 'PowerOn' | 'PowerOff' | 'Dwelling' | 'Waiting' | 'Cooling' | 'Alert' | 'Conveyor' | 'Eject' | 'FilamentChange'> = new Map([
  ['G28', 'Home'], ['M80', 'PowerOn'], ['M81', 'PowerOff'], ['G4', 'Dwelling'], ['M0', 'Waiting'], ['M1', 'Waiting'],
  ['M226', 'Waiting'], ['M245', 'Cooling'], ['M300', 'Alert'], ['M240', 'Conveyor'], ['M40', 'Eject'],
  ['M600', 'FilamentChange'], ['M701', 'FilamentChange'], ['M702', 'FilamentChange'],
] as const);

const JOB_ACTIONS: ReadonlySet<string> = new Set<FirmwareJobAction>(['pause', 'paused', 'resume', 'resumed', 'cancel']);

/** Other actions (notifications, prompts) reach clients as the raw line in `current.messages`. */
function onAction(h: ActionSink, name: string): void {
  if (JOB_ACTIONS.has(name)) {
    // The job owner runs the same bookkeeping, events and scripts as for the API; a bare stream acts alone.
    if (!h.jobAction(name as FirmwareJobAction)) streamAction(h.job(), name as FirmwareJobAction);
    return;
  }
  switch (name) {
    case 'disconnect': void h.disconnect(); break;
    case 'sd_inserted': h.engine()?.enqueue('M21', { once: true }); break;
    case 'sd_ejected': h.readings.sdReady = false; h.readings.sdFiles = []; h.notifyState(); break;
    case 'sd_updated': h.sdRefresh(); break;
  }
}

function streamAction(job: JobStreamer | null, action: FirmwareJobAction): void {
  switch (action) {
    case 'pause': void job?.pause(); break;
    case 'paused': job?.markPaused(); break;
    case 'resume': job?.resume(); break;
    case 'resumed': job?.resume(false); break;
    case 'cancel': void job?.cancel(); break;
  }
}
