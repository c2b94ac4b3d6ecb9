// The beforeToolChange/afterToolChange scripts, loaded ahead of time so the link can put them around a `T<n>` at once.
import type { ToolChangeLines } from './printer-line-rules.ts';
import { loadTemplate, renderTemplate, type ScriptSource } from '../job/job-scripts.ts';

const NAMES = ['beforeToolChange', 'afterToolChange'] as const;
type Name = (typeof NAMES)[number];
const NONE: string[] = [];

export interface ToolChangeScriptsDeps {
  source: ScriptSource;
  /** last_position, last_temperature… at the moment of the change. */
  context: () => Record<string, unknown>;
  /** A non-empty script was rendered for a change (GcodeScript<Name>Running/Finished). */
  ran?: (name: Name, payload: Record<string, unknown>) => void;
}

export class ToolChangeScripts {
  /**
   * Templates with their snippets expanded; '' for an empty script. Loading reads files, but the link asks in the
   * middle of a send, so only the rendering (synchronous) is left for the moment of the change.
   */
  private readonly templates: Record<Name, string> = { beforeToolChange: '', afterToolChange: '' };
  private loads = 0;

  constructor(private readonly deps: ToolChangeScriptsDeps) {}

  /** Reloads both scripts (settings, scripts folder, snippets). */
  async refresh(): Promise<void> {
    const load = ++this.loads;
    const texts = await Promise.all(NAMES.map((n) => loadTemplate(n, this.deps.source)));
    // Two reloads racing (a settings change during a connect): the later one's view wins.
    if (load !== this.loads) return;
    NAMES.forEach((n, i) => { this.templates[n] = texts[i]?.trim() ? texts[i]! : ''; });
  }

  /** The rendered lines for a change from `oldTool` to `newTool`; null when there are none (the default). */
  lines(oldTool: number, newTool: number): ToolChangeLines | null {
    const { beforeToolChange, afterToolChange } = this.templates;
    if (beforeToolChange === '' && afterToolChange === '') return null;
    const tool = { old: oldTool, new: newTool };
    const ctx = { ...this.deps.context(), tool };
    const profile = this.deps.source.profile();
    const before = beforeToolChange === '' ? NONE : renderTemplate('beforeToolChange', beforeToolChange, profile, ctx);
    const after = afterToolChange === '' ? NONE : renderTemplate('afterToolChange', afterToolChange, profile, ctx);
    for (const n of NAMES) if (this.templates[n] !== '') this.deps.ran?.(n, { tool });
    return before.length === 0 && after.length === 0 ? null : { before, after };
  }
}
