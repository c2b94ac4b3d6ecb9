// Heater commands: targets, waits with once-a-second reports, M105 and M155 auto-report, M108 to break a wait.
import type { Firmware, HandlerTable, Command } from './registry.ts';
import { num } from './registry.ts';
import type { Heater } from '../thermal-model.ts';

function toolHeater(fw: Firmware, cmd: Command): Heater | null {
  const t = num(cmd, 'T');
  const index = t === null || Number.isNaN(t) ? fw.state.tool : Math.trunc(t);
  if (fw.opts.sharedNozzle) return fw.thermal.tools[0];
  return fw.thermal.tools[index] ?? null;
}

function setTarget(heater: Heater | null, cmd: Command): boolean {
  if (!heater) return false;
  const s = num(cmd, 'S') ?? num(cmd, 'R');
  if (s === null || Number.isNaN(s)) return false;
  heater.target = Math.max(0, s);
  return true;
}

/** Blocks like Marlin's M109/M190: reports temperatures every second until within the window or M108. */
async function waitFor(fw: Firmware, heater: Heater | null, cmd: Command): Promise<void> {
  if (!heater || !setTarget(heater, cmd)) return;
  const heatingOnly = num(cmd, 'R') === null;
  if (heatingOnly && heater.target <= heater.actual) return;
  fw.state.abortWait = false;
  let lastReport = performance.now();
  for (;;) {
    fw.thermal.update();
    if (heater.reached(heatingOnly) || fw.state.abortWait || fw.scheduler.isStopped) break;
    if (performance.now() - lastReport >= 1000) {
      lastReport = performance.now();
      fw.send(fw.temperatureReport().trimStart());
    }
    await fw.scheduler.sleepReal(fw.opts.timeScale === 0 ? 0 : 20);
  }
  fw.state.abortWait = false;
}

export const temperatureHandlers: HandlerTable = {
  M104: { description: 'Set hotend target temperature (S, optional T)', run: (fw, cmd) => void setTarget(toolHeater(fw, cmd), cmd) },
  M109: { description: 'Set hotend target and wait (S: heating only, R: both ways)', keepAlive: false, run: (fw, cmd) => waitFor(fw, toolHeater(fw, cmd), cmd) },
  M140: { description: 'Set bed target temperature', run: (fw, cmd) => void setTarget(fw.thermal.bed, cmd) },
  M190: { description: 'Set bed target and wait', keepAlive: false, run: (fw, cmd) => waitFor(fw, fw.thermal.bed, cmd) },
  M141: { description: 'Set chamber target temperature', run: (fw, cmd) => void setTarget(fw.thermal.chamber, cmd) },
  M191: { description: 'Set chamber target and wait', keepAlive: false, run: (fw, cmd) => waitFor(fw, fw.thermal.chamber, cmd) },
  M105: { description: 'Report temperatures on the ok line', run: (fw) => ({ okSuffix: fw.temperatureReport() }) },
  M155: {
    description: 'Auto-report temperatures every S seconds (S0 stops)',
    run: (fw, cmd) => {
      fw.state.stopTempReport?.();
      fw.state.stopTempReport = null;
      const s = num(cmd, 'S');
      if (s !== null && s > 0) fw.state.stopTempReport = fw.scheduler.every(s * 1000, () => fw.send(fw.temperatureReport().trimStart()));
    },
  },
  M108: { description: 'Break out of a heating wait (emergency parser)', run: (fw) => { fw.state.abortWait = true; } },
};
