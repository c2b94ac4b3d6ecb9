// The `recovery` GCODE script: Gantry's built-in default and its context (the state the file left at the resume line).
import { loadTemplate, renderTemplate, type ScriptSource } from '../printer/job/job-scripts.ts';
import type { MachineState } from './gcode-state.ts';

export type RecoveryScripts = ScriptSource;

/**
 * Heat and wait, home X and Y only (Z keeps its place: the nozzle is over the part), set Z from the journal with G92,
 * lift, go back over the last position, prime, lower, restore E (G92 E), extrusion mode, fan and feedrate.
 */
export const DEFAULT_RECOVERY_SCRIPT = [
  '; Gantry: resuming an interrupted print at line {{ recovery.line }}',
  '{% if recovery.bed %}', 'M140 S{{ recovery.bed }}', '{% endif %}',
  '{% if recovery.hotend %}', 'M104 S{{ recovery.hotend }}', '{% endif %}',
  '{% if recovery.bed %}', 'M190 S{{ recovery.bed }}', '{% endif %}',
  '{% if recovery.hotend %}', 'M109 S{{ recovery.hotend }}', '{% endif %}',
  '{% if recovery.tool %}', 'T{{ recovery.tool }}', '{% endif %}',
  'G28 X Y',
  '{% if recovery.has_z %}', 'G92 Z{{ recovery.z }}', 'G90', 'G1 Z{{ recovery.lift_z }} F600', '{% endif %}',
  'G90',
  '{% if recovery.has_xy %}', 'G1 X{{ recovery.x }} Y{{ recovery.y }} F3000', '{% endif %}',
  'M83',
  'G1 E{{ recovery.prime }} F300',
  '{% if recovery.has_z %}', 'G1 Z{{ recovery.z }} F600', '{% endif %}',
  'G92 E{{ recovery.e }}',
  '{{ recovery.extrusion_mode }}',
  '{% if recovery.fan %}', 'M106 S{{ recovery.fan }}', '{% else %}', 'M107', '{% endif %}',
  '{% if recovery.f %}', 'G1 F{{ recovery.f }}', '{% endif %}',
].join('\n');

const round = (v: number): number => Math.round(v * 100000) / 100000;

/** The template context: `recovery.*`. */
export function recoveryContext(s: MachineState, journalTemps: Record<string, number | null>): Record<string, unknown> {
  const hotend = s.tools[`tool${s.tool}`] ?? journalTemps[`tool${s.tool}`] ?? null;
  const bed = s.bed ?? journalTemps.bed ?? null;
  return {
    recovery: {
      line: s.line + 1, filepos: s.filepos, layer: s.layer >= 0 ? s.layer : null,
      x: s.x, y: s.y, z: s.z, has_xy: s.x !== null && s.y !== null, has_z: s.z !== null,
      lift_z: s.z !== null ? round(s.z + 2) : null, e: round(s.e), prime: 2,
      extrusion_mode: s.relativeE ? 'M83' : 'M82', f: s.f, fan: s.fan, tool: s.tool,
      hotend, bed, chamber: s.chamber ?? journalTemps.chamber ?? null, temperatures: { ...journalTemps, ...s.tools },
    },
  };
}

export async function renderRecoveryScript(src: RecoveryScripts, context: Record<string, unknown>): Promise<string[]> {
  const template = (await loadTemplate('recovery', src)) ?? DEFAULT_RECOVERY_SCRIPT;
  return renderTemplate('recovery', template, src.profile(), context);
}
