// The Slice dialog for a model file (STL, 3MF, OBJ): slicer and profile choice, output name, progress while it runs.
import { useEffect, useRef, useState } from 'preact/hooks';
import { get, post, encodePath, messageOf } from '../lib/api.ts';
import { notify, slicingProgress } from '../lib/store.ts';
import type { FileEntry } from '../lib/types.ts';

interface Slicer { key: string; displayName: string; default: boolean; configured: boolean; profiles: Record<string, { key: string; displayName?: string | null; default: boolean }> }

export function SliceDialog({ file, onClose }: { file: FileEntry; onClose: () => void }) {
  const [slicers, setSlicers] = useState<Slicer[] | null>(null);
  const [slicer, setSlicer] = useState('');
  const [profile, setProfile] = useState('');
  const [dest, setDest] = useState(file.path.replace(/\.[^./]+$/, '') + '.gcode');
  const [error, setError] = useState('');
  const [running, setRunning] = useState(false);
  const back = useRef(document.activeElement);
  const first = useRef<HTMLSelectElement>(null);

  useEffect(() => {
    get<Record<string, Slicer>>('/api/slicing').then((r) => {
      const list = Object.values(r).filter((s) => s.configured);
      setSlicers(list);
      const s = list.find((x) => x.default) ?? list[0];
      if (s) { setSlicer(s.key); setProfile(Object.values(s.profiles).find((p) => p.default)?.key ?? Object.keys(s.profiles)[0] ?? ''); }
    }, (e: Error) => setError(e.message));
  }, []);
  useEffect(() => first.current?.focus(), [slicers]);
  const close = () => { onClose(); if (back.current instanceof HTMLElement) back.current.focus(); };
  const p = slicingProgress.value;
  useEffect(() => { if (running && p === null) { notify(`Sliced ${file.display ?? file.name}`); close(); } }, [p]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setError('');
    try {
      setRunning(true);
      slicingProgress.value = { source_path: file.path, progress: 0 };
      await post(`/api/files/local/${encodePath(file.path)}`, { command: 'slice', slicer, ...(profile ? { profile } : {}), destination: dest });
    } catch (err) {
      setRunning(false);
      slicingProgress.value = null;
      setError(messageOf(err));
    }
  };
  const current = slicers?.find((s) => s.key === slicer);
  return (
    <div class="overlay" role="dialog" aria-modal="true" aria-label="Slice" onKeyDown={(e) => { if (e.key === 'Escape' && !running) close(); }}>
      <form class="dialog" aria-label="Slice" onSubmit={submit}>
        <h2>Slice {file.display ?? file.name}</h2>
        {slicers === null && !error && <p class="muted">Loading slicers…</p>}
        {slicers?.length === 0 && <p class="error">No slicer is set up on the server.</p>}
        {slicers && slicers.length > 0 && <>
          <label>Slicer<select ref={first} value={slicer} disabled={running} onChange={(e) => setSlicer(e.currentTarget.value)}>
            {slicers.map((s) => <option key={s.key} value={s.key}>{s.displayName}</option>)}</select></label>
          <label>Profile<select value={profile} disabled={running} onChange={(e) => setProfile(e.currentTarget.value)}>
            <option value="">Slicer defaults</option>
            {Object.values(current?.profiles ?? {}).map((pr) => <option key={pr.key} value={pr.key}>{pr.displayName || pr.key}</option>)}</select></label>
          <label>Save as<input value={dest} disabled={running} onInput={(e) => setDest(e.currentTarget.value)} required /></label>
        </>}
        {running && (
          <div class="progress" role="progressbar" aria-label="Slicing progress" aria-valuenow={Math.round(p?.progress ?? 0)}>
            <div class="bar" style={{ width: `${p?.progress ?? 0}%` }} /><span>Slicing: {Math.round(p?.progress ?? 0)} %</span>
          </div>
        )}
        {error && <p class="error" role="alert">{error}</p>}
        <div class="buttons">
          <button type="button" onClick={close} disabled={running}>Close</button>
          <button type="submit" class="primary" disabled={running || !slicers?.length}>Slice</button>
        </div>
      </form>
    </div>
  );
}
