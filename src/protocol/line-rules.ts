// The seam for rules the owner installs on the line path (temperature offsets, tool-change scripts, Z tracking): what
// they are told and may do. The protocol itself rewrites nothing.

/** What a line rule knows about the moment a line is queued or written. */
export interface LineContext {
  jobActive: boolean;
  /** The tool selected by the last T written. */
  tool: number;
}

/**
 * Rules the owner installs on the line path (the printer's temperature offsets, tool-change scripts, Z tracking): the
 * protocol itself rewrites nothing.
 */
export interface LineRules {
  /** Codes `rewrite` is asked about; such lines are never framed ahead, their rewrite belongs to their turn. */
  readonly rewriteCodes: ReadonlySet<string>;
  rewrite(cmd: string, code: string, ctx: LineContext): string;
  /** Codes `expand` is asked about when a command is queued. */
  readonly expandCodes: ReadonlySet<string>;
  /** The lines to queue in place of `cmd` (including it), or null to queue it alone; its lines are never asked again. */
  expand(cmd: string, code: string, ctx: LineContext & { plannedTool: number }): string[] | null;
  /** A plain G0/G1 was written (called per move, so keep it cheap). */
  moveSent?(cmd: string): void;
}

export const NO_RULES: LineRules = { rewriteCodes: new Set(), rewrite: (cmd) => cmd, expandCodes: new Set(), expand: () => null };
