// SD card commands (M20–M30): listing, select/start/pause/seek/status, upload by M28/M29, delete.
import type { Firmware, HandlerTable, Command } from './registry.ts';
import { num, rest } from './registry.ts';
import { safeSdName } from '../sd-card.ts';

/** Runs `fn` when a card is present and initialised, else says so like Marlin. */
function withCard(fn: (fw: Firmware, cmd: Command) => void | Promise<void>) {
  return (fw: Firmware, cmd: Command): void | Promise<void> => {
    if (!fw.sd || !fw.sd.ready) {
      fw.send('echo:No SD card');
      return;
    }
    return fn(fw, cmd);
  };
}

function sdStatus(fw: Firmware): string {
  const job = fw.state.sdJob;
  return job ? `SD printing byte ${job.pos}/${job.size}` : 'Not SD printing';
}

export const sdHandlers: HandlerTable = {
  M20: {
    description: 'List the SD card (L: long names)',
    run: withCard(async (fw, cmd) => {
      const long = rest(cmd).toUpperCase().includes('L');
      const entries = await fw.sd!.entries();
      fw.send('Begin file list');
      for (const e of entries) fw.send(`${e.dosName} ${e.size}${long ? ` ${e.longName}` : ''}`);
      fw.send('End file list');
    }),
  },
  M21: {
    description: 'Initialise the SD card',
    run: (fw) => {
      if (!fw.sd) {
        fw.send('echo:No SD card');
        return;
      }
      fw.sd.ready = true;
      fw.send('echo:SD card ok');
    },
  },
  M22: {
    description: 'Release the SD card',
    run: (fw) => {
      if (!fw.sd) return;
      fw.sd.ready = false;
      fw.state.selected = null;
      fw.send('echo:SD card released');
    },
  },
  M23: {
    description: 'Select a file for printing',
    run: withCard(async (fw, cmd) => {
      const name = rest(cmd).replace(/^\/+/, '');
      const entry = await fw.sd!.find(name);
      if (!entry) {
        fw.send(`open failed, File: ${name}.`);
        return;
      }
      fw.state.selected = entry;
      fw.state.sdJob = null;
      fw.send(`File opened: ${entry.dosName} Size: ${entry.size}`);
      fw.send('File selected');
    }),
  },
  M24: {
    description: 'Start or resume printing the selected file',
    run: withCard((fw) => {
      if (!fw.state.selected) return;
      fw.startSdPrint();
    }),
  },
  M25: {
    description: 'Pause the SD print',
    run: (fw) => {
      if (fw.state.sdJob) fw.state.sdJob.stopRequested = true;
    },
  },
  M26: {
    description: 'Set the SD read position (S bytes)',
    run: withCard((fw, cmd) => {
      const s = num(cmd, 'S');
      const job = fw.state.sdJob;
      if (job && s !== null && s >= 0) job.pos = Math.min(Math.trunc(s), job.size);
    }),
  },
  M27: {
    description: 'Report SD print progress (S<n>: auto-report every n seconds, S0 stops; C: file name)',
    run: (fw, cmd) => {
      const s = num(cmd, 'S');
      if (s !== null && !Number.isNaN(s)) {
        fw.state.stopSdReport?.();
        fw.state.stopSdReport = null;
        if (s > 0) fw.state.stopSdReport = fw.scheduler.every(s * 1000, () => { if (fw.state.sdJob?.running) fw.send(sdStatus(fw)); });
        return;
      }
      if (rest(cmd).toUpperCase() === 'C') {
        fw.send(fw.state.selected ? `Current file: ${fw.state.selected.dosName} ${fw.state.selected.longName}` : 'Current file: (no file)');
        return;
      }
      fw.send(sdStatus(fw));
    },
  },
  M28: {
    description: 'Start writing a file: the following lines go to the card until M29',
    run: withCard((fw, cmd) => {
      const name = safeSdName(rest(cmd));
      if (!name || fw.sd?.writeProtected) {
        fw.send(`open failed, File: ${rest(cmd)}.`);
        return;
      }
      fw.state.sdWrite = { name, lines: [] };
      fw.send(`Writing to file: ${name}`);
    }),
  },
  M29: {
    description: 'Stop writing the file opened by M28',
    run: async (fw) => {
      const w = fw.state.sdWrite;
      if (!w || !fw.sd) return;
      fw.state.sdWrite = null;
      await fw.sd.storage.write(w.name, Buffer.from(w.lines.map((l) => l + '\n').join(''), 'latin1'));
      fw.send('Done saving file.');
    },
  },
  M30: {
    description: 'Delete a file',
    run: withCard(async (fw, cmd) => {
      const name = rest(cmd).replace(/^\/+/, '');
      const entry = await fw.sd!.find(name);
      if (!entry || fw.state.sdJob?.entry.longName === entry.longName) {
        fw.send(`Deletion failed, File: ${name}.`);
        return;
      }
      await fw.sd!.storage.remove(entry.longName);
      if (fw.state.selected?.longName === entry.longName) fw.state.selected = null;
      fw.send(`File deleted:${name}`);
    }),
  },
  M524: {
    description: 'Abort the SD print',
    run: (fw) => {
      if (fw.state.sdJob) {
        fw.state.sdJob.stopRequested = true;
        fw.state.sdJob = null;
      }
    },
  },
};
