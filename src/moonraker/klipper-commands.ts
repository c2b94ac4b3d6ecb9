// Klipper's extended commands that Mainsail and Fluidd send, carried out with Gantry's job and printer commands
// (docs/reference/moonraker.md §5): scripts run line by line, Marlin's own G/M/T codes go to the firmware through the
// same queue as /api/printer/command, a Klipper command Gantry has no meaning for is refused in Klipper's words
// (`Unknown command:"FOO"`) and never sent to Marlin.
import { commandCode } from '../gcode/line.ts';
import { splitLines } from '../gcode/line-breaks.ts';
import type { Identity } from '../access/identity.ts';
import { RpcError, forbiddenRpc } from './rpc-errors.ts';

export interface MacroInfo { name: string; help: string }

/** What the commands below do, by name (printer.gcode.help, the `gcode` object, `gcode_macro` objects). */
export const MACROS: readonly MacroInfo[] = [
  { name: 'PAUSE', help: 'Pauses the current print' },
  { name: 'RESUME', help: 'Resumes the print from a pause' },
  { name: 'CANCEL_PRINT', help: 'Cancel the current print' },
];

export const COMMANDS: readonly MacroInfo[] = [
  ...MACROS,
  { name: 'SDCARD_PRINT_FILE', help: 'Loads a file and starts the print (FILENAME=)' },
  { name: 'SDCARD_RESET_FILE', help: 'Clears the finished job (print_stats back to standby)' },
  { name: 'SET_HEATER_TEMPERATURE', help: 'Sets a heater temperature (HEATER= TARGET=)' },
  { name: 'TURN_OFF_HEATERS', help: 'Turn off all heaters' },
  { name: 'SET_ACTIVE_SPOOL', help: 'Sets the Spoolman spool of a tool (ID= [TOOL=])' },
  { name: 'CLEAR_ACTIVE_SPOOL', help: 'Clears the Spoolman spool of a tool ([TOOL=])' },
  { name: 'FIRMWARE_RESTART', help: 'Reconnects the printer (Gantry closes and reopens its serial link)' },
  { name: 'RESTART', help: 'Reconnects the printer (as FIRMWARE_RESTART)' },
  { name: 'SAVE_GCODE_STATE', help: 'Save G-Code coordinate state (NAME=)' },
  { name: 'RESTORE_GCODE_STATE', help: 'Restore a previously saved G-Code state (NAME=)' },
  { name: 'M112', help: 'Emergency stop' },
  { name: 'EXCLUDE_OBJECT', help: 'Cancels an object of the print (NAME=, or CURRENT=1); with no arguments lists the excluded ones' },
  { name: 'HELP', help: 'Report the list of available extended G-Code commands' },
];

/** A command another feature adds (the bed mesh's): its help, the permission it needs besides CONTROL, what it does. */
export interface ExtraCommand {
  help: string;
  need?: string;
  run(params: Map<string, string>, who: Identity): Promise<void> | void;
}

/** The host actions the commands need (built by the Moonraker service from the job runner and the printer). */
export interface CommandHost {
  /** Lines for the firmware, through the API's queue and its checks (throws when not operational or full). */
  send(lines: string[]): void;
  /** Resolves once what was sent has been acknowledged (or after a while). */
  settled(): Promise<void>;
  pause(user: string | undefined): Promise<void>;
  resume(user: string | undefined): Promise<void>;
  cancel(user: string | undefined): Promise<void>;
  printFile(filename: string, user: string | undefined): Promise<void>;
  resetFile(): void;
  setHeater(heater: string, target: number): void;
  heaterKeys(): string[];
  reconnect(): Promise<void>;
  emergencyStop(): void;
  /** A console line (notify_gcode_response and the G-code store). */
  respond(line: string): void;
  /** G-code state kept by SAVE/RESTORE_GCODE_STATE. */
  saveState(name: string): Promise<void>;
  restoreState(name: string): string[] | undefined;
  /** Commands of the features this printer has, by name. */
  extra?: ReadonlyMap<string, ExtraCommand>;
  /** EXCLUDE_OBJECT: cancels the object of that (Klipper, upper-cased) name, or the current one; the excluded names. */
  excludeObject?(name: string | null, current: boolean): Promise<string[]>;
}

/** `KEY=value KEY2="quoted value"` → upper-case keys. */
export function klipperParams(rest: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /(?<![A-Za-z0-9_])([A-Za-z_]\w*)=("[^"]*"|'[^']*'|\S*)/g;
  for (const m of rest.matchAll(re)) {
    let v = m[2];
    if ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))) v = v.slice(1, -1);
    out.set(m[1].toUpperCase(), v);
  }
  return out;
}

/** The permission each extended command needs besides CONTROL. */
const NEEDS: Record<string, string> = {
  PAUSE: 'PRINT', RESUME: 'PRINT', CANCEL_PRINT: 'PRINT', SDCARD_PRINT_FILE: 'PRINT', SDCARD_RESET_FILE: 'PRINT',
  FIRMWARE_RESTART: 'CONNECTION', RESTART: 'CONNECTION', EXCLUDE_OBJECT: 'CONTROL',
};

/** Whether a line is for Marlin (a G, M or T code) rather than a Klipper command word. */
const isFirmwareLine = (line: string): boolean => commandCode(line) !== null && /^[GMTgmt]\d/.test(line);

/**
 * Runs a script (printer.gcode.script). Resolves when every line is done; the first failing line stops the script and
 * its error is reported in the console (`!! …`) and thrown.
 */
export async function runScript(script: string, who: Identity, host: CommandHost): Promise<void> {
  const lines = splitLines(script).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith(';'));
  if (!who.has('CONTROL')) throw forbiddenRpc();
  let batch: string[] = [];
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const out = batch;
    batch = [];
    host.send(out);
    await host.settled();
  };
  try {
    for (const line of lines) {
      if (isFirmwareLine(line)) {
        const code = commandCode(line);
        if (code === 'M112') {
          await flush();
          host.emergencyStop();
          continue;
        }
        batch.push(line);
        continue;
      }
      await flush();
      await extended(line, who, host);
    }
    await flush();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    host.respond(`!! ${message}`);
    throw err;
  }
}

async function extended(line: string, who: Identity, host: CommandHost): Promise<void> {
  const sp = line.search(/\s/);
  const word = (sp < 0 ? line : line.slice(0, sp)).toUpperCase();
  const rest = sp < 0 ? '' : line.slice(sp + 1);
  const need = NEEDS[word];
  if (need && !who.has(need)) throw forbiddenRpc();
  const params = klipperParams(rest);
  const user = who.name;
  const more = host.extra?.get(word);
  if (more) {
    if (more.need && !who.has(more.need)) throw forbiddenRpc();
    return more.run(params, who);
  }
  switch (word) {
    case 'PAUSE': return host.pause(user);
    case 'RESUME': return host.resume(user);
    case 'CANCEL_PRINT': return host.cancel(user);
    case 'SDCARD_PRINT_FILE': {
      const name = params.get('FILENAME');
      if (!name) throw new RpcError(400, 'Error on \'SDCARD_PRINT_FILE\': missing FILENAME');
      return host.printFile(name.replace(/^\/+/, ''), user);
    }
    case 'SDCARD_RESET_FILE': return host.resetFile();
    case 'SET_HEATER_TEMPERATURE': {
      const heater = params.get('HEATER');
      const target = Number(params.get('TARGET') ?? '0');
      if (!heater) throw new RpcError(400, 'Error on \'SET_HEATER_TEMPERATURE\': missing HEATER');
      if (!Number.isFinite(target) || target < 0 || target > 500) throw new RpcError(400, `Error on 'SET_HEATER_TEMPERATURE': TARGET must be between 0 and 500`);
      host.setHeater(heater, target);
      return host.settled();
    }
    case 'TURN_OFF_HEATERS':
      for (const key of host.heaterKeys()) host.setHeater(key, 0);
      return host.settled();
    case 'FIRMWARE_RESTART': case 'RESTART': return host.reconnect();
    case 'SAVE_GCODE_STATE': return host.saveState(params.get('NAME') ?? 'default');
    case 'RESTORE_GCODE_STATE': {
      const name = params.get('NAME') ?? 'default';
      const lines = host.restoreState(name);
      if (!lines) throw new RpcError(400, `Unknown g-code state: ${name}`);
      host.send(lines);
      return host.settled();
    }
    case 'SET_ACTIVE_SPOOL':
    case 'CLEAR_ACTIVE_SPOOL':
      // Host words of Gantry's Spoolman client (src/spools/): the printer service answers them, Marlin never sees them.
      host.send([line]);
      return host.settled();
    case 'EXCLUDE_OBJECT': {
      if (!host.excludeObject) throw new RpcError(400, `Unknown command:"${word}"`);
      const name = params.get('NAME') ?? null;
      const current = params.get('CURRENT') === '1';
      const excluded = await host.excludeObject(name, current);
      if (name === null && !current) host.respond(`// Excluded objects: ${excluded.join(' ')}`);
      return;
    }
    case 'HELP':
      host.respond('// Available extended commands:');
      for (const c of COMMANDS) host.respond(`// ${c.name.padEnd(24)}: ${c.help}`);
      for (const [name, c] of host.extra ?? []) host.respond(`// ${name.padEnd(24)}: ${c.help}`);
      return;
    default:
      throw new RpcError(400, `Unknown command:"${word}"`);
  }
}
