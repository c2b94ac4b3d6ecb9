// Temperature tab: the live graph, current/target per heater, target inputs and the temperature profiles from settings.
import { useState } from 'preact/hooks';
import { post } from '../lib/api.ts';
import { heaterLabel, temp } from '../lib/format.ts';
import { attempt, can, printerState, settings, temps, tempsVersion, notify } from '../lib/store.ts';
import { TempGraph, heaterKeys } from './TempGraph.tsx';

async function setOffset(heater: string, value: number): Promise<boolean> {
  if (heater.startsWith('tool')) {
    return attempt('Set offset', () => post('/api/printer/tool', { command: 'offset', offsets: { [heater]: value } }));
  }
  return attempt('Set offset', () => post(`/api/printer/${heater}`, { command: 'offset', offset: value }));
}

async function setTarget(heater: string, value: number): Promise<boolean> {
  if (heater.startsWith('tool')) {
    return attempt(`Set ${heaterLabel(heater)}`, () => post('/api/printer/tool', { command: 'target', targets: { [heater]: value } }));
  }
  return attempt(`Set ${heaterLabel(heater)}`, () => post(`/api/printer/${heater}`, { command: 'target', target: value }));
}

function HeaterRow({ heater }: { heater: string }) {
  const [input, setInput] = useState('');
  const [offset, setOffsetInput] = useState('');
  const last = temps[temps.length - 1];
  const h = last?.[heater];
  const cur = h && typeof h === 'object' ? h : null;
  const profiles = settings.value?.temperature?.profiles ?? [];
  const allowed = can('CONTROL') && printerState.value.flags.operational;
  const profileValue = (p: { extruder: number; bed: number; chamber?: number }) =>
    heater.startsWith('tool') ? p.extruder : heater === 'bed' ? p.bed : heater === 'chamber' ? (p.chamber ?? 0) : undefined;

  const apply = async (v: number) => {
    if (await setTarget(heater, v)) {
      setInput('');
      notify(`${heaterLabel(heater)} target set to ${v}°C`);
    }
  };
  const submit = (e: Event) => {
    e.preventDefault();
    const v = Number(input);
    if (input.trim() === '' || !Number.isFinite(v) || v < 0) return;
    void apply(v);
  };

  return (
    <tr data-heater={heater}>
      <th scope="row">{heaterLabel(heater)}</th>
      <td data-testid={`actual-${heater}`} data-label="Actual">{temp(cur?.actual)}</td>
      <td data-testid={`target-${heater}`} data-label="Target">{cur?.target ? temp(cur.target) : 'off'}</td>
      <td class="set-target">
        {can('CONTROL') && (
          <form class="inline" onSubmit={submit}>
            <input type="number" min="0" max="500" step="1" inputMode="numeric" placeholder="°C" aria-label={`${heaterLabel(heater)} target`}
              value={input} disabled={!allowed} onInput={(e) => setInput(e.currentTarget.value)} />
            <button type="submit" disabled={!allowed}>Set</button>
            <button type="button" disabled={!allowed} onClick={() => void apply(0)}>Off</button>
            {profiles.length > 0 && (
              <select aria-label={`${heaterLabel(heater)} profile`} disabled={!allowed} value=""
                onChange={(e) => { const p = profiles.find((x) => x.name === e.currentTarget.value); const v = p && profileValue(p); if (v !== undefined) void apply(v); }}>
                <option value="">Profile…</option>
                {profiles.map((p) => <option key={p.name} value={p.name}>{p.name} ({profileValue(p)}°)</option>)}
              </select>
            )}
          </form>
        )}
      </td>
      <td class="offset" data-label="Offset">
        {/* An offset is added to every target sent to this heater (-50…50 °C, as the API allows). */}
        {can('CONTROL') && (
          <form class="inline" onSubmit={(e) => { e.preventDefault(); const v = Number(offset); if (offset.trim() !== '' && Number.isFinite(v) && Math.abs(v) <= 50) void setOffset(heater, v).then((ok) => ok && notify(`${heaterLabel(heater)} offset ${v}°C`)); }}>
            <input type="number" min="-50" max="50" step="1" placeholder={String(cur?.offset ?? 0)} aria-label={`${heaterLabel(heater)} offset`}
              value={offset} disabled={!allowed} onInput={(e) => setOffsetInput(e.currentTarget.value)} />
            <button type="submit" disabled={!allowed} aria-label={`Apply ${heaterLabel(heater)} offset`}>Apply</button>
          </form>
        )}
      </td>
    </tr>
  );
}

export function TemperatureTab() {
  void tempsVersion.value; // re-render on new samples
  const keys = heaterKeys();
  return (
    <div class="temperature">
      {settings.value?.feature?.temperatureGraph !== false && <TempGraph />}
      <div class="scroll"><table class="heaters">
        <thead><tr><th /><th>Actual</th><th>Target</th><th /><th>Offset</th></tr></thead>
        <tbody>
          {keys.map((k) => <HeaterRow key={k} heater={k} />)}
          {keys.length === 0 && <tr><td colSpan={5} class="muted">No heaters reported yet.</td></tr>}
        </tbody>
      </table></div>
    </div>
  );
}
