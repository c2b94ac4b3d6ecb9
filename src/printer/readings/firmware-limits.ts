// The motion limits the connected firmware reported about itself (its M201/M203/M204/M205 lines), for the analyser.

/**
 * Marlin and Prusa firmware print their settings as the commands that would set them (`echo:  M203 X300.00 Y300.00
 * Z5.00 E25.00`), at boot when the board resets on connect and in answer to M503. Returns such a line as the bare
 * command, or null for anything else. Per-extruder lines of a second tool (`M203 T1 E40`) are skipped: the analyser
 * models one E axis, and tool 0's figures are the ones a single-extruder print uses.
 */
export function limitReportCommand(line: string): string | null {
  // Cheap rejection first: this runs for every line the firmware sends while printing.
  const c0 = line.charCodeAt(0);
  if (c0 !== 0x65 /* e */ && c0 !== 0x4d /* M */) return null;
  let s = line.startsWith('echo:') ? line.slice(5) : line;
  s = s.trim();
  if (!/^M20[1345] [A-Z]/.test(s)) return null;
  const tool = /(?:^| )T(\d+)/.exec(s);
  // M204's T is the travel acceleration, not a tool.
  if (tool && !s.startsWith('M204') && tool[1] !== '0') return null;
  // Nothing but parameter words: a comment or free text after the code is not a report line.
  if (!/^M20[1345](?: [A-Z]-?\d+(?:\.\d*)?)+$/.test(s)) return null;
  return s;
}

/** Keeps the newest report line of each command; a report survives a disconnect (it describes the machine). */
export class FirmwareLimits {
  /** Keyed by code, plus `T0` for a per-extruder line (Marlin prints `M203 T0 E25.00` after the main M203). */
  private readonly latest = new Map<string, string>();

  /** Feeds one received line (printer.watchReplies). */
  observe(line: string): void {
    const cmd = limitReportCommand(line);
    if (cmd === null) return;
    const code = cmd.slice(0, 4);
    this.latest.set(code !== 'M204' && / T0(?: |$)/.test(cmd) ? `${code}T0` : code, cmd);
  }

  /** The report as commands (each main line before its per-extruder line); empty when none was seen. */
  report(): string[] {
    return ['M201', 'M201T0', 'M203', 'M203T0', 'M204', 'M205'].flatMap((key) => this.latest.get(key) ?? []);
  }
}
