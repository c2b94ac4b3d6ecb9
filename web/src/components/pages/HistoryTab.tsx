// History & statistics: every finished, failed or cancelled print from the server's print history, with success rate,
// time and filament (from each file's analysis) per file and per day.
import { useEffect, useState } from 'preact/hooks';
import { encodePath, get, post } from '../../lib/api.ts';
import { duration } from '../../lib/format.ts';
import { attempt, can, files, historyVersion, printerState } from '../../lib/store.ts';
import type { FileEntry, HistoryEntry } from '../../lib/types.ts';

const RESULT = { success: 'done', failed: 'failed', cancelled: 'cancelled' };

/** Metres of filament a whole print of this file uses, from its analysis (all tools). */
function filamentOf(all: FileEntry[], path: string): number {
  for (const e of all) {
    if (e.type === 'folder') {
      const m = filamentOf(e.children ?? [], path);
      if (m) return m;
    } else if (e.origin === 'local' && e.path === path) {
      return Object.values(e.gcodeAnalysis?.filament ?? {}).reduce((sum, t) => sum + (t?.length ?? 0), 0) / 1000;
    }
  }
  return 0;
}

interface Group { key: string; prints: number; ok: number; time: number; metres: number }
function group(list: HistoryEntry[], keyOf: (h: HistoryEntry) => string, all: FileEntry[]): Group[] {
  const map = new Map<string, Group>();
  for (const h of list) {
    const key = keyOf(h);
    const g = map.get(key) ?? { key, prints: 0, ok: 0, time: 0, metres: 0 };
    g.prints++;
    g.time += h.duration;
    if (h.result === 'success') {
      g.ok++;
      // A print that stopped part-way used an unknown part of the filament: only completed prints count.
      if (h.origin === 'local') g.metres += filamentOf(all, h.path);
    }
    map.set(key, g);
  }
  return [...map.values()];
}

const day = (h: HistoryEntry) => new Date(h.end * 1000).toISOString().slice(0, 10);
const rate = (g: { prints: number; ok: number }) => (g.prints ? `${Math.round((g.ok / g.prints) * 100)} %` : '–');

export function HistoryTab() {
  const [list, setList] = useState<HistoryEntry[] | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    get<{ prints: HistoryEntry[] }>('/plugin/gantry/history').then((r) => setList(r.prints), (e: Error) => setError(e.message));
  }, [historyVersion.value]);
  if (error) return <p class="error">History unavailable: {error}</p>;
  if (!list) return <p class="muted">Loading…</p>;
  const all = files.value?.files ?? [];
  const total = group(list, () => 'all', all)[0] ?? { key: 'all', prints: 0, ok: 0, time: 0, metres: 0 };
  const table = (title: string, rows: Group[], label: string) => (
    <section class="section wide" aria-label={title}>
      <h3>{title}</h3>
      <div class="scroll"><table>
        <thead><tr><th>{label}</th><th>Prints</th><th>Success</th><th>Time</th><th>Filament</th></tr></thead>
        <tbody>{rows.map((g) => <tr key={g.key}><td>{g.key}</td><td>{g.prints}</td><td>{rate(g)}</td><td>{duration(g.time)}</td><td>{g.metres.toFixed(2)} m</td></tr>)}</tbody>
      </table></div>
    </section>
  );
  return (
    <div class="pages">
      <dl class="stats" data-testid="history-stats">
        <div><dt>Prints</dt><dd data-testid="stat-prints">{total.prints}</dd></div>
        <div><dt>Succeeded</dt><dd data-testid="stat-ok">{total.ok}</dd></div>
        <div><dt>Success rate</dt><dd data-testid="stat-rate">{rate(total)}</dd></div>
        <div><dt>Print time</dt><dd>{duration(total.time)}</dd></div>
        <div><dt>Filament</dt><dd data-testid="stat-filament">{total.metres.toFixed(2)} m</dd></div>
      </dl>
      {list.length === 0 ? <p class="muted">No prints yet.</p> : <>
        {table('Per file', group(list, (h) => h.path, all).sort((a, b) => b.prints - a.prints), 'File')}
        {table('Per day', group(list, day, all).sort((a, b) => b.key.localeCompare(a.key)), 'Day')}
        <section class="section wide" aria-label="Recent prints">
          <h3>Recent prints</h3>
          <div class="scroll"><table>
            <thead><tr><th>Ended</th><th>File</th><th>Result</th><th>Time</th><th>User</th><th aria-label="Actions" /></tr></thead>
            <tbody>{[...list].reverse().slice(0, 50).map((h) => (
              <tr key={`${h.end}-${h.path}`}><td>{new Date(h.end * 1000).toLocaleString()}</td><td>{h.name}</td>
                <td class={h.result === 'success' ? '' : 'error'} title={h.error}>{RESULT[h.result]}</td><td>{duration(h.duration)}</td><td>{h.user ?? '–'}</td>
                <td>{h.origin === 'local' && can('PRINT') && can('FILES_SELECT') && (
                  <button class="small" disabled={!printerState.value.flags.ready} aria-label={`Print ${h.name} again`}
                    onClick={() => void attempt('Print', () => post(`/api/files/local/${encodePath(h.path)}`, { command: 'select', print: true }))}>Print again</button>
                )}</td></tr>
            ))}</tbody>
          </table></div>
        </section>
      </>}
    </div>
  );
}
