// Identity and housekeeping commands: M115 with capabilities, M110, M112 kill, messages, busy interval.
import type { HandlerTable } from './registry.ts';
import { num, rest } from './registry.ts';
import { DEFAULT_CAPABILITIES } from '../options.ts';

export const infoHandlers: HandlerTable = {
  M115: {
    description: 'Firmware name and capabilities',
    run: (fw) => {
      fw.send(`FIRMWARE_NAME:${fw.opts.firmwareName} SOURCE_CODE_URL:https://github.com/MarlinFirmware/Marlin PROTOCOL_VERSION:1.0 ` +
        `MACHINE_TYPE:Gantry Virtual EXTRUDER_COUNT:${fw.opts.numExtruders} UUID:cede2a2f-41a2-4748-9b12-c55c62f367ff`);
      const caps = { ...DEFAULT_CAPABILITIES, SDCARD: fw.sd ? 1 : 0, CHAMBER_TEMPERATURE: fw.thermal.chamber ? 1 : 0 } as Record<string, number>;
      for (const [k, v] of Object.entries(caps)) fw.send(`Cap:${k}:${v}`);
    },
  },
  // The line-number reset itself happens at intake (it needs the N of the line); here it is only acknowledged.
  M110: { description: 'Set the current line number', run: () => {} },
  M112: { description: 'Emergency stop: halt the firmware', run: (fw) => { fw.kill('Printer halted. kill() called!'); return { noOk: true }; } },
  M117: { description: 'Show a message on the display', run: (fw, cmd) => fw.send(`echo:${rest(cmd)}`) },
  M118: {
    description: 'Print a message to the host (A1: as //action, E1: as echo)',
    run: (fw, cmd) => {
      const words = rest(cmd).split(' ');
      let prefix = '';
      while (words.length && /^(A1|E1|P\d)$/i.test(words[0])) {
        const w = words.shift()!.toUpperCase();
        if (w === 'A1') prefix = '//';
        if (w === 'E1') prefix = 'echo:';
      }
      fw.send(prefix + words.join(' '));
    },
  },
  M113: {
    description: 'Host keep-alive interval in seconds (report without S)',
    run: (fw, cmd) => {
      const s = num(cmd, 'S');
      if (s !== null && s >= 0 && s <= 60) fw.opts.busyInterval = s;
      else fw.send(`echo:M113 S${fw.opts.busyInterval}`);
    },
  },
  M999: { description: 'Restart after a stop (answers with a resend of line 1, like Marlin)', run: () => {} },
  M84: { description: 'Disable steppers', run: () => {} },
  M18: { description: 'Disable steppers', run: () => {} },
  M106: { description: 'Fan speed', run: () => {} },
  M107: { description: 'Fan off', run: () => {} },
  M80: { description: 'Power supply on', run: () => {} },
  M81: { description: 'Power supply off', run: () => {} },
};
