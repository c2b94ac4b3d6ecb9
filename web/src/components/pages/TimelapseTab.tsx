// Timelapse: the capture settings, the rendered movies (thumbnail, download, delete) and the unrendered frame sets
// (render, delete), with the render's progress from the push channel.
import { useEffect, useState } from 'preact/hooks';
import { del, get, post, encodePath } from '../../lib/api.ts';
import { confirmDialog } from '../../lib/dialogs.ts';
import { attempt, can, renderProgress, timelapseVersion } from '../../lib/store.ts';
import type { TimelapseConfig, TimelapseList } from '../../lib/types.ts';

export function TimelapseTab() {
  const [data, setData] = useState<TimelapseList | null>(null);
  const [error, setError] = useState('');
  const [cfg, setCfg] = useState<TimelapseConfig>({ type: 'off' });
  const [fieldError, setFieldError] = useState('');
  const reload = () => get<TimelapseList>('/api/timelapse?unrendered=true').then((r) => { setData(r); setCfg(r.config); setError(''); }, (e: Error) => setError(e.message));
  useEffect(() => void reload(), [timelapseVersion.value]);
  if (error) return <p class="error">Timelapse unavailable: {error}</p>;
  if (!data) return <p class="muted">Loading…</p>;

  const admin = can('TIMELAPSE_ADMIN');
  const num = (k: keyof TimelapseConfig, label: string, step = '1') => (
    <label>{label}<input type="number" step={step} min="0" value={cfg[k] as number | undefined ?? ''} disabled={!admin}
      onInput={(e) => setCfg({ ...cfg, [k]: e.currentTarget.value === '' ? undefined : Number(e.currentTarget.value) })} /></label>
  );
  const save = async (e: Event) => {
    e.preventDefault();
    setFieldError('');
    try {
      await post('/api/timelapse', { ...cfg, save: true });
      await reload();
    } catch (err) {
      setFieldError((err as Error).message);
    }
  };
  const removeMovie = async (name: string) => {
    if (!(await confirmDialog('Delete timelapse', `Delete ${name}?`, 'Delete', { cancel: 'Keep', danger: true }))) return;
    if (await attempt('Delete', () => del(`/api/timelapse/${encodePath(name)}`))) void reload();
  };
  const render = async (name: string) => {
    if (await attempt('Render', () => post(`/api/timelapse/unrendered/${encodePath(name)}`, { command: 'render' }))) void reload();
  };
  const removeFrames = async (name: string) => {
    if (!(await confirmDialog('Delete frames', `Delete the frames of ${name}?`, 'Delete', { cancel: 'Keep', danger: true }))) return;
    if (await attempt('Delete', () => del(`/api/timelapse/unrendered/${encodePath(name)}`))) void reload();
  };
  const progress = renderProgress.value;

  return (
    <div class="pages">
      <form class="section form" aria-label="Timelapse settings" onSubmit={save}>
        <h3>Settings</h3>
        {!data.enabled && <p class="muted">Timelapses are turned off in the webcam settings.</p>}
        <label>Mode<select value={cfg.type} disabled={!admin} onChange={(e) => setCfg({ ...cfg, type: e.currentTarget.value as TimelapseConfig['type'] })}>
          <option value="off">Off</option><option value="zchange">On layer change</option><option value="timed">Timed</option>
        </select></label>
        {cfg.type === 'timed' && num('interval', 'Interval (s)')}
        {cfg.type === 'zchange' && <>{num('retractionZHop', 'Retraction Z-hop (mm)', '0.1')}{num('minDelay', 'Minimum delay (s)', '0.1')}</>}
        {cfg.type !== 'off' && <>{num('fps', 'Frame rate (fps)')}{num('postRoll', 'Post-roll (s)')}</>}
        {fieldError && <p class="error" role="alert">{fieldError}</p>}
        {admin && <div class="buttons"><button class="primary" type="submit">Save</button></div>}
      </form>
      {progress !== null && (
        <div class="progress" role="progressbar" aria-label="Rendering" aria-valuenow={Math.round(progress)}>
          <div class="bar" style={{ width: `${progress}%` }} /><span>Rendering: {Math.round(progress)} %</span>
        </div>
      )}
      <section class="section wide" aria-label="Timelapses">
        <h3>Timelapses</h3>
        {data.files.length === 0 ? <p class="muted">No timelapses yet.</p> : (
          <ul class="cards">
            {[...data.files].sort((a, b) => (b.timestamp ?? 0) - (a.timestamp ?? 0)).map((f) => (
              <li key={f.name} class="card-item">
                {f.thumbnail ? <img src={f.thumbnail} alt="" loading="lazy" /> : <span class="thumb-none" aria-hidden="true">🎞</span>}
                <span class="name">{f.name}</span>
                <span class="muted small">{f.date} · {f.size}</span>
                <span class="buttons">
                  {can('TIMELAPSE_DOWNLOAD') && <a class="button small" href={f.url} download>Download</a>}
                  {can('TIMELAPSE_DELETE') && <button class="small danger" onClick={() => void removeMovie(f.name)}>Delete</button>}
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
      {(data.unrendered?.length ?? 0) > 0 && (
        <section class="section wide" aria-label="Unrendered timelapses">
          <h3>Unrendered</h3>
          <table><tbody>
            {data.unrendered!.map((u) => (
              <tr key={u.name}><td>{u.name}</td><td class="muted">{u.count} frames · {u.size}</td>
                <td class="actions">{can('TIMELAPSE_MANAGE_UNRENDERED') && <>
                  <button class="small" disabled={u.processing} onClick={() => void render(u.name)}>{u.rendering ? 'Rendering…' : 'Render'}</button>
                  <button class="small danger" disabled={u.processing} onClick={() => void removeFrames(u.name)}>Delete</button>
                </>}</td></tr>
            ))}
          </tbody></table>
        </section>
      )}
    </div>
  );
}
