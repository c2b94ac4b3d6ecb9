// The Spools page: Spoolman's link, the active spool of each tool with what it has left, and choosing one from
// Spoolman's list (/api/plugin/spoolman, src/spools/); the use waiting for Spoolman while it is away.
import { useEffect, useState } from 'preact/hooks';
import { get, post } from '../../lib/api.ts';
import { attempt, can, notify, profiles, settings } from '../../lib/store.ts';
import { saveSettings } from '../settings/SettingsTab.tsx';
import { Section, Text } from '../settings/fields.tsx';

interface Spool {
  id: number; remaining_weight?: number; remaining_length?: number; archived?: boolean;
  filament?: { name?: string; material?: string; color_hex?: string; vendor?: { name?: string } };
}
interface Status {
  enabled: boolean; server: string; spoolman_connected: boolean; active: Record<string, number>;
  spools: Record<string, Spool | null>; pending_reports: Array<{ spool_id: number; filament_used: number }>; error: string | null;
}

const label = (s: Spool): string => [`#${s.id}`, s.filament?.vendor?.name, s.filament?.name ?? s.filament?.material].filter(Boolean).join(' ');
const left = (s: Spool | null | undefined): string => {
  if (!s) return '—';
  const parts = [];
  if (typeof s.remaining_length === 'number') parts.push(`${(s.remaining_length / 1000).toFixed(1)} m`);
  if (typeof s.remaining_weight === 'number') parts.push(`${Math.round(s.remaining_weight)} g`);
  return parts.join(' · ') || '—';
};

interface SpoolmanSettings { server?: string; syncInterval?: number; lowFilament?: 'off' | 'warn' | 'refuse' }

/** plugins.spoolman: the server, the sync interval, what too little filament does. */
function SpoolmanSettingsForm({ saved }: { saved(): void }) {
  const stored = ((settings.value?.plugins as Record<string, unknown> | undefined)?.spoolman ?? {}) as SpoolmanSettings;
  const [server, setServer] = useState(stored.server ?? '');
  const [interval, setInterval_] = useState(String(stored.syncInterval ?? 5));
  const [low, setLow] = useState(stored.lowFilament ?? 'warn');
  const ro = !can('SETTINGS');
  const save = () => {
    const syncInterval = Number(interval);
    if (!(syncInterval >= 0.2 && syncInterval <= 3600)) return notify('Sync interval: 0.2 to 3600 seconds', 'error');
    if (server !== '' && !/^https?:\/\/\S+$/.test(server)) return notify('Spoolman URL: http://host:port', 'error');
    void saveSettings({ plugins: { spoolman: { server, syncInterval, lowFilament: low } } } as never).then(saved);
  };
  return (
    <Section title="Spoolman" disabled={ro} onSave={save}>
      <Text label="Spoolman URL" type="url" value={server} onChange={setServer} disabled={ro} placeholder="http://spoolman.local:7912" />
      <Text label="Report use every (s)" type="number" value={interval} onChange={setInterval_} disabled={ro} />
      <label>Too little filament on the spool
        <select value={low} disabled={ro} onChange={(e) => setLow((e.target as HTMLSelectElement).value as 'off' | 'warn' | 'refuse')}>
          <option value="off">print anyway</option><option value="warn">warn</option><option value="refuse">refuse the print</option>
        </select>
      </label>
    </Section>
  );
}

export function SpoolsTab() {
  const [status, setStatus] = useState<Status | null>(null);
  const [list, setList] = useState<Spool[]>([]);
  const [choice, setChoice] = useState<Record<number, string>>({});
  const refresh = () => {
    void get<Status>('/api/plugin/spoolman').then((s) => {
      setStatus(s);
      if (s.spoolman_connected) void get<{ spools: Spool[] }>('/api/plugin/spoolman/spools').then((r) => setList(r.spools), () => {});
    }, () => {});
  };
  useEffect(() => {
    refresh();
    const timer = setInterval(refresh, 5000);
    return () => clearInterval(timer);
  }, []);
  const profile = Object.values(profiles.value).find((p) => p.current) ?? Object.values(profiles.value).find((p) => p.default);
  const tools = Math.max(1, profile?.extruder?.count ?? 1);
  const select = (tool: number, id: number | null) => void attempt(id === null ? 'Clear the spool' : 'Choose the spool', async () => {
    setStatus(await post<Status>('/api/plugin/spoolman', { command: 'select', tool, spool_id: id }));
  });

  if (!status) return <p class="muted">Loading…</p>;
  const form = can('SETTINGS_READ') ? <SpoolmanSettingsForm saved={refresh} /> : null;
  if (!status.enabled) return <section class="spools"><h2>Spools</h2><p class="muted">Spoolman is not set up: give its URL below (plugins.spoolman.server).</p>{form}</section>;
  return (
    <section class="spools">
      <h2>Spools</h2>
      <p class={status.spoolman_connected ? '' : 'error'}>
        Spoolman at {status.server}: {status.spoolman_connected ? 'connected' : `not reachable${status.error ? ` (${status.error})` : ''}`}
      </p>
      <table>
        <thead><tr><th>Tool</th><th>Active spool</th><th>Left</th><th>Choose</th></tr></thead>
        <tbody>
          {Array.from({ length: tools }, (_, tool) => {
            const id = status.active[String(tool)];
            const spool = status.spools[String(tool)];
            return (
              <tr key={tool}>
                <td>T{tool}</td>
                <td>{id === undefined ? <span class="muted">none</span> : spool ? (
                  <span>{spool.filament?.color_hex ? <span class="swatch" style={{ background: `#${spool.filament.color_hex}` }} aria-hidden="true" /> : null}{label(spool)}</span>
                ) : `#${id}`}</td>
                <td>{left(spool)}</td>
                <td>
                  <select aria-label={`Spool for tool ${tool}`} value={choice[tool] ?? ''} disabled={!can('CONTROL') || list.length === 0}
                    onChange={(e) => setChoice({ ...choice, [tool]: (e.target as HTMLSelectElement).value })}>
                    <option value="">—</option>
                    {list.filter((s) => !s.archived).map((s) => <option key={s.id} value={String(s.id)}>{label(s)} ({left(s)})</option>)}
                  </select>
                  <button type="button" aria-label={`Use the chosen spool for tool ${tool}`} disabled={!can('CONTROL') || !choice[tool]} onClick={() => select(tool, Number(choice[tool]))}>Use</button>
                  <button type="button" aria-label={`Clear the spool of tool ${tool}`} disabled={!can('CONTROL') || id === undefined} onClick={() => select(tool, null)}>Clear</button>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {status.pending_reports.length > 0 ? (
        <p class="muted">Waiting to be reported: {status.pending_reports.map((p) => `${(p.filament_used / 1000).toFixed(2)} m for #${p.spool_id}`).join(', ')}</p>
      ) : null}
      {form}
    </section>
  );
}
