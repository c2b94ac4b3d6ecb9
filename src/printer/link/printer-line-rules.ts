// The printer's rules on the link's line path: temperature offsets on a job's heater commands, tool-change scripts
// around a `T<n>`, and the Z height and feed rate the moves leave the head at.
import type { LineContext, LineRules } from '../../protocol/engine.ts';
import { commandCode, param, stripComment, toolNumber } from '../../gcode/line.ts';

/** Script lines put around a tool change (beforeToolChange / afterToolChange, already rendered). */
export interface ToolChangeLines {
  before: string[];
  after: string[];
}

export interface LineRulesEvents {
  /**
   * Asked, synchronously, when a `T<n>` that changes the tool is queued or fed from a job: the lines to send around it,
   * or null for none (the usual answer: both scripts are empty by default). Never asked for the lines it returned.
   */
  toolChangeLines?(oldTool: number, newTool: number): ToolChangeLines | null;
  zChanged?(z: number, old: number | null): void;
}

const OFFSET_CODES: ReadonlySet<string> = new Set(['M104', 'M109', 'M140', 'M190']);
const TOOL_CODES: ReadonlySet<string> = new Set(['T']);

export class PrinterLineRules implements LineRules {
  readonly rewriteCodes = OFFSET_CODES;
  readonly expandCodes: ReadonlySet<string>;
  /** Offsets by heater (`tool0`, `bed`), added to a job's non-zero targets. */
  private offsets: Record<string, number> = {};
  private z: number | null = null;
  private f: number | null = null;

  constructor(private readonly events: LineRulesEvents = {}) {
    this.expandCodes = events.toolChangeLines ? TOOL_CODES : new Set();
  }

  get currentZ(): number | null { return this.z; }
  get currentF(): number | null { return this.f; }

  setOffsets(offsets: Record<string, number>): void {
    this.offsets = { ...offsets };
  }

  rewrite(cmd: string, code: string, ctx: LineContext): string {
    const isBed = code === 'M140' || code === 'M190';
    let key = 'bed';
    if (!isBed) {
      const t = param(cmd, 'T');
      key = `tool${t !== null && Number.isFinite(t) ? t : ctx.tool}`;
    }
    const offset = this.offsets[key];
    if (!offset || !ctx.jobActive) return cmd;
    return cmd.replace(/(\s)([SR])([-+]?\d*\.?\d+)/, (m, sp: string, letter: string, value: string) => {
      const v = Number(value);
      return v === 0 ? m : `${sp}${letter}${v + offset}`;
    });
  }

  expand(cmd: string, _code: string, ctx: LineContext & { plannedTool: number }): string[] | null {
    const around = this.toolChange(cmd, ctx.plannedTool);
    return around === null ? null : [...around.before, cmd, ...around.after];
  }

  /**
   * The beforeToolChange/afterToolChange lines for a line about to be queued or fed from a job, when it is a `T<n>`
   * that changes the tool the firmware will have by the time it runs (`plannedTool`); null otherwise.
   */
  toolChange(line: string, plannedTool: number): ToolChangeLines | null {
    const hook = this.events.toolChangeLines;
    if (hook === undefined) return null;
    const cmd = stripComment(line);
    if (commandCode(cmd) !== 'T') return null;
    const tool = toolNumber(cmd);
    if (tool === null || tool === plannedTool) return null;
    return hook(plannedTool, tool);
  }

  moveSent(cmd: string): void {
    // One pass over the parameters for Z and F.
    for (let i = 2; i < cmd.length; i++) {
      const c = cmd.charCodeAt(i);
      if (cmd.charCodeAt(i - 1) !== 32 || (c !== 90 && c !== 70 && c !== 122 && c !== 102)) continue;
      let j = i + 1;
      while (j < cmd.length && cmd.charCodeAt(j) !== 32) j++;
      const v = Number(cmd.slice(i + 1, j));
      if (!Number.isFinite(v)) continue;
      if (c === 70 || c === 102) this.f = v;
      else if (v !== this.z) {
        const old = this.z;
        this.z = v;
        this.events.zChanged?.(v, old);
      }
    }
  }
}
