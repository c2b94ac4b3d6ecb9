// Motion settings commands: M201/M203/M204/M205 set them, M503 reports them the way Marlin prints its settings.
import type { HandlerTable, Position } from './registry.ts';
import { num } from './registry.ts';

const AXES = ['x', 'y', 'z', 'e'] as const;

function setAxes(target: Position, cmd: Parameters<typeof num>[0]): void {
  for (const a of AXES) {
    const v = num(cmd, a.toUpperCase());
    if (v !== null && Number.isFinite(v) && v > 0) target[a] = v;
  }
}

const f2 = (v: number): string => v.toFixed(2);

export const settingsHandlers: HandlerTable = {
  M201: { description: 'Max acceleration per axis (mm/s²)', run: (fw, cmd) => setAxes(fw.state.motion.maxAcceleration, cmd) },
  M203: { description: 'Max feedrate per axis (mm/s)', run: (fw, cmd) => setAxes(fw.state.motion.maxFeedrate, cmd) },
  M204: {
    description: 'Default accelerations: P print, R retract, T travel (S sets print and travel)',
    run: (fw, cmd) => {
      const m = fw.state.motion;
      const pick = (l: string): number | null => { const v = num(cmd, l); return v !== null && Number.isFinite(v) && v > 0 ? v : null; };
      const s = pick('S');
      if (s !== null) m.printAcceleration = m.travelAcceleration = s;
      m.printAcceleration = pick('P') ?? m.printAcceleration;
      m.retractAcceleration = pick('R') ?? m.retractAcceleration;
      m.travelAcceleration = pick('T') ?? m.travelAcceleration;
    },
  },
  M205: {
    description: 'Advanced motion: B min segment time, S/T min feedrates, J junction deviation',
    run: (fw, cmd) => {
      const m = fw.state.motion;
      const pick = (l: string): number | null => { const v = num(cmd, l); return v !== null && Number.isFinite(v) && v >= 0 ? v : null; };
      m.minSegmentTime = pick('B') ?? m.minSegmentTime;
      m.minFeedrate = pick('S') ?? m.minFeedrate;
      m.minTravelFeedrate = pick('T') ?? m.minTravelFeedrate;
      const j = pick('J');
      if (j !== null && j > 0) m.junctionDeviation = j;
    },
  },
  M503: {
    description: 'Report settings (motion part), each as the command that sets it',
    run: (fw) => {
      const m = fw.state.motion;
      const axes = (p: Position): string => `X${f2(p.x)} Y${f2(p.y)} Z${f2(p.z)} E${f2(p.e)}`;
      fw.send('echo:; Max feedrates (units/s):');
      fw.send(`echo:  M203 ${axes(m.maxFeedrate)}`);
      fw.send('echo:; Max Acceleration (units/s2):');
      fw.send(`echo:  M201 ${axes(m.maxAcceleration)}`);
      fw.send('echo:; Acceleration (units/s2) (P<print-accel> R<retract-accel> T<travel-accel>):');
      fw.send(`echo:  M204 P${f2(m.printAcceleration)} R${f2(m.retractAcceleration)} T${f2(m.travelAcceleration)}`);
      fw.send('echo:; Advanced (B<min_segment_time_us> S<min_feedrate> T<min_travel_feedrate> J<junc_dev>):');
      fw.send(`echo:  M205 B${f2(m.minSegmentTime)} S${f2(m.minFeedrate)} T${f2(m.minTravelFeedrate)} J${m.junctionDeviation.toFixed(3)}`);
    },
  },
};
