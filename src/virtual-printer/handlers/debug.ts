// `!!DEBUG:<name> [args]` commands for tests and demos: faults on demand (disconnect, kill, lost line, raw output).
import type { Firmware } from './registry.ts';

export interface DebugControl {
  fw: Firmware;
  /** The device vanishes (USB pulled): the transport closes with an error. */
  disconnect(): void;
  /** Drop the next received line without any answer. */
  dropNext(): void;
  /** The board reboots with the port open: it forgets everything and prints its boot banner (`start`). */
  reset(): void;
}

export const debugCommands: Record<string, { description: string; run(ctl: DebugControl, args: string): void }> = {
  disconnect: { description: 'Simulate a pulled USB cable', run: (ctl) => ctl.disconnect() },
  reset: { description: 'Reboot the board with the port open (prints start)', run: (ctl) => ctl.reset() },
  kill: { description: 'Firmware halts as after M112', run: (ctl) => ctl.fw.kill('Printer halted. kill() called!') },
  thermal_runaway: {
    description: 'Fatal heater error, then halt',
    run: (ctl) => {
      ctl.fw.send('Error:Thermal Runaway, system stopped! Heater_ID: 0');
      ctl.fw.kill('Printer halted. kill() called!');
    },
  },
  dont_answer: { description: 'Swallow the next line (no ok)', run: (ctl) => ctl.dropNext() },
  send: { description: 'Send the rest of the line verbatim', run: (ctl, args) => ctl.fw.send(args) },
  action: { description: 'Send //action:<args>', run: (ctl, args) => ctl.fw.send(`//action:${args}`) },
  sd_write_protect: {
    description: 'Slide the SD card\'s lock switch (on|off, default on): M28 then fails to open a file',
    run: (ctl, args) => {
      if (ctl.fw.sd) ctl.fw.sd.writeProtected = args.trim() !== 'off';
    },
  },
};
