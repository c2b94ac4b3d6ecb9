// The farm dashboard: every printer as a card (state, job, progress, time left, temperatures, thumbnail, webcam), the
// print queue (add, reorder, remove, release, pause) with its bed-clear buttons, and bulk actions on selected printers.
import { useEffect, useState } from 'preact/hooks';
import { get, post, patch, del, encodePath, messageOf } from '../../lib/api.ts';
import { at } from '../../lib/base.ts';
import { duration, temp } from '../../lib/format.ts';
import { confirmDialog } from '../../lib/dialogs.ts';

interface FarmPrinter {
  name: string;
  prefix: string;
  state: { text: string; flags: Record<string, boolean> };
  job: { job?: { file?: { name?: string | null; path?: string | null; origin?: string | null } }; progress?: { completion?: number | null; printTimeLeft?: number | null } } | null;
  temperatures: Record<string, { actual?: number | null; target?: number | null }>;
  webcam?: { snapshot: string | null };
}
interface QueueJob { id: string; path: string; copies: number; done: number; printing: string[]; held: { reason: string } | null; waiting: string | null; constraint: { kind: string; printer?: string } }
interface Queue { paused: boolean; jobs: QueueJob[]; printers: Array<{ name: string; waitingForBedClear: boolean; autoClear: boolean }> }

/** The printer's own API: the default printer is the main port's, the others are under their prefix. */
const apiOf = (p: FarmPrinter, path: string): string => (p.name === 'default' ? path : `${p.prefix.replace(/\/$/, '')}${path}`);

function Thumbnail({ path }: { path: string | null | undefined }) {
  const [src, setSrc] = useState<string | null>(null);
  useEffect(() => {
    setSrc(null);
    if (!path) return;
    void get<{ thumbnail?: string }>(`/api/files/local/${encodePath(path)}`).then((f) => setSrc(f.thumbnail ? at(`/${f.thumbnail.replace(/^\//, '')}`) : null), () => {});
  }, [path]);
  return src ? <img src={src} alt={`Thumbnail of ${path}`} /> : null;
}

function PrinterCard({ p, selected, toggle, bedClear }: { p: FarmPrinter; selected: boolean; toggle: () => void; bedClear: (() => void) | null }) {
  const progress = p.job?.progress?.completion ?? null;
  const file = p.job?.job?.file;
  return (
    <li class="card-item" aria-label={`Printer ${p.name}`}>
      <label><input type="checkbox" checked={selected} onChange={toggle} /> <strong>{p.name}</strong></label>
      <span class="state">{p.state.text}</span>
      {file?.name ? <span>{file.name}</span> : <span class="muted">No job</span>}
      {progress !== null && (
        <div class="progress" role="progressbar" aria-valuenow={Math.round(progress)}>
          <div class="bar" style={{ width: `${progress}%` }} /><span>{progress.toFixed(1)} %</span>
        </div>
      )}
      {p.job?.progress?.printTimeLeft != null && <span class="small">{duration(p.job.progress.printTimeLeft)} left</span>}
      <span class="small">
        {Object.entries(p.temperatures).filter(([k]) => k !== 'time').map(([k, v]) => `${k} ${temp(v.actual)}/${temp(v.target)}`).join(' · ')}
      </span>
      <Thumbnail path={file?.origin === 'local' ? file.path : null} />
      {p.webcam?.snapshot && <img src={p.webcam.snapshot} alt={`Webcam of ${p.name}`} loading="lazy" />}
      {bedClear && <button type="button" onClick={bedClear}>Bed clear</button>}
      <a href={at(`/printer/${encodeURIComponent(p.name)}/`)}>Open {p.name}</a>
    </li>
  );
}

export function FarmPage() {
  const [printers, setPrinters] = useState<FarmPrinter[]>([]);
  const [queue, setQueue] = useState<Queue | null>(null);
  const [files, setFiles] = useState<string[]>([]);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [error, setError] = useState<string | null>(null);
  const [form, setForm] = useState({ path: '', copies: 1, constraint: 'any' });
  const [heat, setHeat] = useState({ tool: 200, bed: 60 });

  const refresh = async () => {
    try {
      const [p, q] = await Promise.all([get<{ printers: FarmPrinter[] }>('/api/farm/printers'), get<Queue>('/api/farm/queue')]);
      setPrinters(p.printers);
      setQueue(q);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  useEffect(() => {
    void refresh();
    void get<{ files: Array<{ path: string; type: string; children?: unknown[] }> }>('/api/files/local?recursive=true').then((r) => {
      const out: string[] = [];
      const walk = (list: Array<{ path: string; type: string; children?: unknown[] }>) => {
        for (const f of list) {
          if (f.type === 'folder') walk((f.children ?? []) as typeof list);
          else if (f.type === 'machinecode') out.push(f.path);
        }
      };
      walk(r.files);
      setFiles(out);
    }, () => {});
    const timer = setInterval(() => void refresh(), 2000);
    return () => clearInterval(timer);
  }, []);

  const act = async (fn: () => Promise<unknown>) => {
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError(messageOf(err));
    }
    await refresh();
  };
  const chosen = () => printers.filter((p) => selected.has(p.name));
  const toggle = (name: string) => setSelected((s) => { const n = new Set(s); if (n.has(name)) n.delete(name); else n.add(name); return n; });
  const waiting = new Set(queue?.printers.filter((p) => p.waitingForBedClear).map((p) => p.name));
  const constraintOf = (c: string) => (c.startsWith('printer:') ? { kind: 'printer', printer: c.slice(8) } : { kind: c });

  return (
    <section class="section" aria-label="Farm">
      <h2>Printers</h2>
      {error && <p class="error" role="alert">{error}</p>}
      <div class="buttons">
        <button type="button" onClick={() => act(() => Promise.all(printers.filter((p) => p.state.flags.printing).map((p) => post(apiOf(p, '/api/job'), { command: 'pause', action: 'pause' }))))}>Pause all</button>
        <label>Tool <input type="number" value={heat.tool} min={0} max={400} onInput={(e) => setHeat({ ...heat, tool: Number(e.currentTarget.value) })} style={{ width: '5em' }} /></label>
        <label>Bed <input type="number" value={heat.bed} min={0} max={150} onInput={(e) => setHeat({ ...heat, bed: Number(e.currentTarget.value) })} style={{ width: '4.5em' }} /></label>
        <button type="button" disabled={selected.size === 0} onClick={() => act(() => Promise.all(chosen().flatMap((p) => [
          post(apiOf(p, '/api/printer/tool'), { command: 'target', targets: { tool0: heat.tool } }),
          post(apiOf(p, '/api/printer/bed'), { command: 'target', target: heat.bed }),
        ])))}>Preheat selected</button>
        <button type="button" disabled={selected.size === 0} onClick={async () => {
          const names = chosen().map((p) => p.name);
          if (await confirmDialog('Cancel prints', `Cancel the prints on ${names.join(', ')}?`, 'Cancel prints')) {
            await act(() => Promise.all(chosen().filter((p) => p.state.flags.printing || p.state.flags.paused).map((p) => post(apiOf(p, '/api/job'), { command: 'cancel' }))));
          }
        }}>Cancel selected</button>
      </div>
      <ul class="cards">
        {printers.map((p) => (
          <PrinterCard key={p.name} p={p} selected={selected.has(p.name)} toggle={() => toggle(p.name)}
            bedClear={waiting.has(p.name) ? () => void act(() => post(`/api/farm/printers/${encodeURIComponent(p.name)}/bedclear`)) : null} />
        ))}
      </ul>

      <h2>Queue {queue?.paused && <span class="muted">(paused)</span>}</h2>
      <div class="buttons">
        {queue && <button type="button" onClick={() => act(() => patch('/api/farm/queue', { command: queue.paused ? 'resume' : 'pause' }))}>{queue.paused ? 'Resume queue' : 'Pause queue'}</button>}
      </div>
      <form class="form" aria-label="Add to queue" onSubmit={(e) => {
        e.preventDefault();
        void act(() => post('/api/farm/queue', { path: form.path, copies: form.copies, constraint: constraintOf(form.constraint) }));
      }}>
        <label>File <input list="farm-files" value={form.path} required onInput={(e) => setForm({ ...form, path: e.currentTarget.value })} /></label>
        <datalist id="farm-files">{files.map((f) => <option key={f} value={f} />)}</datalist>
        <label>Copies <input type="number" min={1} max={1000} value={form.copies} onInput={(e) => setForm({ ...form, copies: Number(e.currentTarget.value) })} style={{ width: '5em' }} /></label>
        <label>On <select value={form.constraint} onChange={(e) => setForm({ ...form, constraint: e.currentTarget.value })}>
          <option value="any">any printer</option>
          <option value="profile">a printer matching the file's profile</option>
          {printers.map((p) => <option key={p.name} value={`printer:${p.name}`}>{p.name}</option>)}
        </select></label>
        <button type="submit">Add to queue</button>
      </form>
      {queue && queue.jobs.length === 0 && <p class="muted">The queue is empty.</p>}
      <ol class="file-list" aria-label="Queued jobs">
        {queue?.jobs.map((j, i) => (
          <li key={j.id} class="file">
            <span><strong>{j.path}</strong> · {j.done}/{j.copies} done
              {j.printing.length > 0 && ` · printing on ${j.printing.join(', ')}`}
              {j.constraint.kind === 'printer' && ` · on ${j.constraint.printer}`}{j.constraint.kind === 'profile' && ' · profile match'}
              {j.waiting && <span class="muted"> · {j.waiting}</span>}</span>
            <span class="buttons">
              <button type="button" aria-label={`Move ${j.path} up`} disabled={i === 0} onClick={() => act(() => patch('/api/farm/queue', { command: 'move', id: j.id, position: i - 1 }))}>↑</button>
              <button type="button" aria-label={`Move ${j.path} down`} disabled={i === queue.jobs.length - 1} onClick={() => act(() => patch('/api/farm/queue', { command: 'move', id: j.id, position: i + 1 }))}>↓</button>
              {j.held && <button type="button" onClick={() => act(() => patch('/api/farm/queue', { command: 'release', id: j.id }))}>Release</button>}
              <button type="button" aria-label={`Remove ${j.path}`} disabled={j.printing.length > 0} onClick={() => act(() => del(`/api/farm/queue/${j.id}`))}>Remove</button>
            </span>
          </li>
        ))}
      </ol>
    </section>
  );
}
