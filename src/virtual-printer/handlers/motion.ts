// Motion commands: moves through the planner with simulated duration, homing, dwell, modes, position, feed/flow factors, tools.
import type { Firmware, HandlerTable, Command } from './registry.ts';
import { num, has } from './registry.ts';

const AXES = ['x', 'y', 'z', 'e'] as const;

/** Simulated milliseconds a move takes at the current feedrate and factors. */
function plan(fw: Firmware, cmd: Command): number {
  const s = fw.state;
  const f = num(cmd, 'F');
  if (f !== null && f > 0) s.feedrate = f;
  const delta = { x: 0, y: 0, z: 0, e: 0 };
  for (const a of AXES) {
    const v = num(cmd, a.toUpperCase());
    if (v === null || Number.isNaN(v)) continue;
    const absolute = a === 'e' ? s.absoluteE : s.absolute;
    const target = absolute ? v : s.pos[a] + v;
    delta[a] = target - s.pos[a];
    s.pos[a] = target;
  }
  let length = Math.hypot(delta.x, delta.y, delta.z);
  // Arcs run longer than their chord; a half circle is about 1.6 times its chord.
  if (cmd.code === 'G2' || cmd.code === 'G3') length *= 1.6;
  const speed = s.feedrate * (length > 0 ? s.feedFactor : s.flowFactor) / 100;
  if (length === 0) length = Math.abs(delta.e);
  return speed > 0 ? (length / speed) * 60_000 : 0;
}

const move = { description: 'Linear move (queued in the planner)', run: (fw: Firmware, cmd: Command) => fw.planner.add(plan(fw, cmd)) };
const arc = { description: 'Arc move (queued in the planner)', run: (fw: Firmware, cmd: Command) => fw.planner.add(plan(fw, cmd)) };

export const motionHandlers: HandlerTable = {
  G0: { ...move, description: 'Rapid move (queued in the planner)' },
  G1: move,
  G2: arc,
  G3: { ...arc, description: 'Counter-clockwise arc (queued in the planner)' },
  G4: {
    description: 'Dwell P milliseconds or S seconds, after the planner is empty',
    run: async (fw, cmd) => {
      await fw.planner.drained();
      const ms = num(cmd, 'P') ?? ((num(cmd, 'S') ?? 0) * 1000);
      if (ms > 0) await fw.scheduler.sleep(ms);
    },
  },
  G28: {
    description: 'Home the named axes (all when none named); takes a few simulated seconds',
    run: async (fw, cmd) => {
      await fw.planner.drained();
      const named = (['X', 'Y', 'Z'] as const).filter((a) => has(cmd, a));
      const axes = named.length ? named : ['X', 'Y', 'Z'];
      await fw.scheduler.sleep(1500 * axes.length);
      for (const a of axes) fw.state.pos[a.toLowerCase() as 'x' | 'y' | 'z'] = 0;
    },
  },
  G90: { description: 'Absolute positioning (XYZ and E)', run: (fw) => { fw.state.absolute = true; fw.state.absoluteE = true; } },
  G91: { description: 'Relative positioning (XYZ and E)', run: (fw) => { fw.state.absolute = false; fw.state.absoluteE = false; } },
  M82: { description: 'Absolute extrusion', run: (fw) => { fw.state.absoluteE = true; } },
  M83: { description: 'Relative extrusion', run: (fw) => { fw.state.absoluteE = false; } },
  G92: {
    description: 'Set the current position (all axes to 0 when none named)',
    run: (fw, cmd) => {
      const named = AXES.filter((a) => has(cmd, a.toUpperCase()));
      for (const a of named.length ? named : AXES) fw.state.pos[a] = num(cmd, a.toUpperCase()) || 0;
    },
  },
  M114: {
    description: 'Report the position (Marlin layout, ok on its own line)',
    run: (fw) => {
      const p = fw.state.pos;
      fw.send(`X:${p.x.toFixed(2)} Y:${p.y.toFixed(2)} Z:${p.z.toFixed(2)} E:${p.e.toFixed(2)} Count X:${Math.round(p.x * 80)} Y:${Math.round(p.y * 80)} Z:${Math.round(p.z * 400)}`);
    },
  },
  M119: {
    description: 'Report the endstops (Marlin layout): a min endstop is triggered while its axis is at 0',
    run: (fw) => {
      fw.send('Reporting endstop status');
      for (const a of ['x', 'y', 'z'] as const) fw.send(`${a}_min: ${fw.state.pos[a] <= 0 ? 'TRIGGERED' : 'open'}`);
    },
  },
  M400: { description: 'Wait until every queued move has finished', run: (fw) => fw.planner.drained() },
  M410: { description: 'Quick stop: discard queued moves (emergency parser)', run: (fw) => fw.planner.clear() },
  M220: {
    description: 'Feedrate factor in percent (report without S)',
    run: (fw, cmd) => {
      const s = num(cmd, 'S');
      if (s !== null && s > 0) fw.state.feedFactor = s;
      else fw.send(`FR:${fw.state.feedFactor}%`);
    },
  },
  M221: {
    description: 'Flow factor in percent (report without S)',
    run: (fw, cmd) => {
      const s = num(cmd, 'S');
      if (s !== null && s > 0) fw.state.flowFactor = s;
      else fw.send(`echo:E${fw.state.tool} Flow: ${fw.state.flowFactor}%`);
    },
  },
  T: {
    description: 'Select tool n',
    run: (fw, cmd) => {
      const n = parseInt(cmd.text.slice(1), 10);
      if (Number.isInteger(n) && n >= 0 && n < fw.opts.numExtruders) {
        fw.state.tool = n;
        fw.send(`echo:Active Extruder: ${n}`);
      } else {
        fw.send(`echo:T${Number.isNaN(n) ? '' : n} Invalid extruder`);
      }
    },
  },
};
