// The host words Moonraker's Spoolman macros use (docs/reference/plugins.md §5.4), answered by Gantry and never sent to
// the firmware: `SET_ACTIVE_SPOOL ID=<n> [TOOL=<t>]` and `CLEAR_ACTIVE_SPOOL [TOOL=<t>]` (TOOL is Gantry's: default 0).

export type SpoolWord = { kind: 'set'; tool: number; id: number } | { kind: 'clear'; tool: number } | { kind: 'bad'; message: string };

export const SPOOL_WORDS = ['SET_ACTIVE_SPOOL', 'CLEAR_ACTIVE_SPOOL'] as const;

function params(cmd: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of cmd.matchAll(/(?<![A-Za-z0-9_])([A-Za-z_]\w*)=("[^"]*"|\S*)/g)) out.set(m[1].toUpperCase(), m[2].replace(/^"|"$/g, ''));
  return out;
}

const wholeNumber = (s: string | undefined): number | null => (s !== undefined && /^\d{1,9}$/.test(s) ? Number(s) : null);

export function parseSpoolWord(cmd: string): SpoolWord {
  const word = cmd.trim().split(/\s+/)[0].toUpperCase();
  const p = params(cmd.trim().slice(word.length));
  const toolText = p.get('TOOL');
  const tool = toolText === undefined ? 0 : wholeNumber(toolText);
  if (tool === null || tool > 63) return { kind: 'bad', message: `${word}: TOOL must be a tool number, not ${toolText}` };
  if (word === 'CLEAR_ACTIVE_SPOOL') return { kind: 'clear', tool };
  const id = wholeNumber(p.get('ID'));
  if (id === null || id < 1) return { kind: 'bad', message: `SET_ACTIVE_SPOOL needs ID=<spool id>${p.has('ID') ? `, not ${p.get('ID')}` : ''}` };
  return { kind: 'set', tool, id };
}
