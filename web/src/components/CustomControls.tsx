// Custom controls from settings (`controls`): containers with buttons that send commands or scripts, with inputs.
import { useState } from 'preact/hooks';
import { post } from '../lib/api.ts';
import { confirmDialog } from '../lib/dialogs.ts';
import { attempt } from '../lib/store.ts';
import type { CustomControl } from '../lib/types.ts';

function Control({ c, enabled }: { c: CustomControl; enabled: boolean }) {
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries((c.input ?? []).map((i) => [i.parameter, String(i.default ?? '')])));
  const run = async () => {
    if (c.confirm && !(await confirmDialog(c.name ?? 'Confirm', c.confirm, 'Run'))) return;
    const parameters: Record<string, string | number> = {};
    for (const [k, v] of Object.entries(values)) parameters[k] = v !== '' && Number.isFinite(Number(v)) ? Number(v) : v;
    const body: Record<string, unknown> = c.script ? { script: c.script, parameters }
      : c.commands ? { commands: c.commands, parameters } : { command: c.command, parameters };
    await attempt(c.name ?? 'Command', () => post('/api/printer/command', body));
  };
  // `javascript` controls run code from settings in OctoPrint's UI; this UI does not evaluate settings as code.
  const runnable = !!(c.command || c.commands || c.script);
  return (
    <div class="custom-control">
      {(c.input ?? []).map((i) => (
        <label key={i.parameter}>{i.name}
          {i.slider ? (
            <input type="range" min={i.slider.min ?? 0} max={i.slider.max ?? 255} step={i.slider.step ?? 1} value={values[i.parameter]}
              onInput={(e) => setValues({ ...values, [i.parameter]: e.currentTarget.value })} />
          ) : (
            <input value={values[i.parameter]} onInput={(e) => setValues({ ...values, [i.parameter]: e.currentTarget.value })} />
          )}
        </label>
      ))}
      {runnable && <button disabled={!enabled} onClick={() => void run()}>{c.name ?? 'Run'}</button>}
    </div>
  );
}

function Container({ c, enabled }: { c: CustomControl; enabled: boolean }) {
  return (
    <fieldset class={`custom-container ${c.layout === 'horizontal' ? 'horizontal' : 'vertical'}`}>
      {c.name && <legend>{c.name}</legend>}
      {(c.children ?? []).map((child, i) => child.children ? <Container key={i} c={child} enabled={enabled} /> : <Control key={i} c={child} enabled={enabled} />)}
    </fieldset>
  );
}

export function CustomControls({ controls, enabled }: { controls: CustomControl[]; enabled: boolean }) {
  return (
    <section class="box custom" aria-label="Custom controls">
      <h3>Custom controls</h3>
      {controls.map((c, i) => c.children ? <Container key={i} c={c} enabled={enabled} /> : <Control key={i} c={c} enabled={enabled} />)}
    </section>
  );
}
