// Printing from the simulated SD card: reads the selected file line by line through the handlers, pausable and seekable.
import { commandCode, stripComment } from '../gcode/line.ts';
import type { Firmware } from './handlers/registry.ts';

/** Starts (or resumes) the reader loop for the selected file; returns at once. */
export function runSdPrint(fw: Firmware): void {
  const entry = fw.state.selected;
  if (!entry || !fw.sd) return;
  let job = fw.state.sdJob;
  if (job?.running) {
    // M25 then M24 before the reader noticed the pause: the running loop simply carries on.
    job.stopRequested = false;
    return;
  }
  if (!job || job.entry.longName !== entry.longName) {
    job = { entry, pos: 0, size: entry.size, running: false, stopRequested: false };
    fw.state.sdJob = job;
  }
  job.running = true;
  job.stopRequested = false;
  const current = job;
  void (async () => {
    try {
      const data = await fw.sd!.storage.read(entry.longName);
      while (current.pos < data.length && !current.stopRequested && !fw.scheduler.isStopped) {
        let end = data.indexOf(0x0a, current.pos);
        if (end === -1) end = data.length;
        const text = stripComment(data.toString('latin1', current.pos, end));
        current.pos = Math.min(end + 1, data.length);
        if (text) await fw.execute({ code: commandCode(text) ?? text.split(' ')[0].toUpperCase(), text }, 'sd');
      }
      if (!current.stopRequested && !fw.scheduler.isStopped) {
        await fw.planner.drained();
        if (fw.state.sdJob === current) fw.state.sdJob = null;
        fw.send('Done printing file');
      }
    } catch (err) {
      fw.send(`echo:SD read error: ${(err as Error).message}`);
      if (fw.state.sdJob === current) fw.state.sdJob = null;
    } finally {
      current.running = false;
    }
  })();
}
