// The status card at the top of every screen: the job's thumbnail, a progress ring, the finish clock time and time left
// with its source, layer n/N, Z, speed and flow, filament used of total, the estimates, and print/pause/resume/stop.
import { at } from '../lib/base.ts';
import { post } from '../lib/api.ts';
import { confirmDialog } from '../lib/dialogs.ts';
import { bytes, duration, leftOrigin } from '../lib/format.ts';
import { attempt, can, currentZ, factors, job, lastOutcome, lastPrinted, layerInfo, printerState, progress, settings } from '../lib/store.ts';
import { fileEstimate, findEntry, finishClock } from '../lib/job-status.ts';
import './status-card.css';

const OUTCOME = { done: 'Finished', cancelled: 'Cancelled', failed: 'Failed' };
const FROM_HISTORY = { success: 'done', cancelled: 'cancelled', failed: 'failed' } as const;

/** Millimetres of filament per tool summed (the analysis' figure), or null. */
function metres(map: Record<string, unknown> | null | undefined): number | null {
  if (!map) return null;
  let sum = 0;
  let any = false;
  for (const v of Object.values(map)) {
    const len = v && typeof v === 'object' ? (v as { length?: unknown }).length : undefined;
    if (typeof len === 'number') { sum += len; any = true; }
  }
  return any ? sum / 1000 : null;
}

function Ring({ value, paused }: { value: number | null; paused: boolean }) {
  const r = 42;
  const c = 2 * Math.PI * r;
  const v = Math.max(0, Math.min(100, value ?? 0));
  return (
    <div class="ring" role="progressbar" aria-label="Print progress" aria-valuemin={0} aria-valuemax={100} aria-valuenow={value === null ? undefined : Math.round(v * 10) / 10}>
      <svg viewBox="0 0 100 100" aria-hidden="true">
        <circle cx="50" cy="50" r={r} class="ring-track" />
        <circle cx="50" cy="50" r={r} class={`ring-bar${paused ? ' paused' : ''}`} stroke-dasharray={`${(c * v) / 100} ${c}`} transform="rotate(-90 50 50)" />
      </svg>
      <span class="ring-text" data-testid="job-progress">{value === null ? '' : `${value.toFixed(1)} %`}</span>
    </div>
  );
}

export function StatusCard() {
  const j = job.value;
  const p = progress.value;
  const f = printerState.value.flags;
  const file = j?.file;
  const hasFile = !!file?.name;
  const active = f.printing || f.paused || f.pausing || f.cancelling;
  const entry = findEntry(file?.origin, file?.path ?? file?.name);
  // A stopped print's last progress is history, not a live figure: shown with how it ended and without time left. After a
  // reload the live end event is gone; the print history tells how the selected file's last print ended.
  const fromHistory = lastPrinted.value && file && lastPrinted.value.origin === file.origin && lastPrinted.value.path === (file.path ?? file.name)
    ? FROM_HISTORY[lastPrinted.value.result] : null;
  const ended = active ? null : lastOutcome.value ?? fromHistory;
  const completion = active || ended === 'done' ? (p?.completion ?? (ended === 'done' ? 100 : null)) : null;
  const allowed = can('PRINT');
  const left = active ? p?.printTimeLeft ?? null : null;
  const layer = active ? layerInfo.value : null;
  const totalMetres = metres(j?.filament as Record<string, unknown>);
  // Used so far: the share of the file's extrusion done, by the job's progress through the file.
  const usedMetres = totalMetres !== null && completion !== null ? (totalMetres * completion) / 100 : null;
  const estimate = fileEstimate(entry);
  const analysed = entry?.gcodeAnalysis?.estimatedPrintTime;
  const slicer = entry?.gcodeAnalysis?.gantry?.slicer;
  const z = active ? currentZ.value ?? layer?.height ?? null : null;
  const speed = factors.value.speed;
  const flow = factors.value.flow;

  const start = async () => {
    if (settings.value?.feature?.printStartConfirmation && !(await confirmDialog('Start print', `Start printing ${file?.display ?? file?.name}?`, 'Print'))) return;
    await attempt('Start', () => post('/api/job', { command: 'start' }));
  };
  const pause = () => attempt('Pause', () => post('/api/job', { command: 'pause', action: 'pause' }));
  const resume = () => attempt('Resume', () => post('/api/job', { command: 'pause', action: 'resume' }));
  const cancel = async () => {
    const ask = settings.value?.feature?.printCancelConfirmation ?? true;
    if (ask && !(await confirmDialog('Stop the print?', 'The print stops and cannot be resumed.', 'Stop print', { cancel: 'Keep printing', danger: true }))) return;
    await attempt('Cancel', () => post('/api/job', { command: 'cancel' }));
  };

  return (
    <section class="panel status-card" aria-label="Job" data-testid="status-card">
      <div class="status-thumb">
        {entry?.thumbnail ? <img src={at(`/${entry.thumbnail}`)} alt="" data-testid="status-thumb" /> : <span class="thumb-none" aria-hidden="true">▢</span>}
      </div>
      <Ring value={completion} paused={f.paused || f.pausing} />
      <div class="status-main">
        <h2 class="status-file" data-testid="job-file" title={file?.path ?? undefined}>{hasFile ? (file?.display || file?.name) : 'No file selected'}{hasFile && file?.origin === 'sdcard' ? ' (SD)' : ''}</h2>
        <p class="status-finish">
          {active && left !== null ? <>Done at <strong data-testid="finish-time">{finishClock(left)}</strong></> : ended ? (
            <span data-testid="job-outcome" class={ended === 'done' ? '' : 'error'}>{OUTCOME[ended]}{ended !== 'done' && p?.completion ? ` at ${p.completion.toFixed(1)} %` : ''}</span>
          ) : <span class="muted">{active ? 'Working out the time left…' : hasFile ? 'Ready to print' : 'Select a file to print'}</span>}
        </p>
        <dl class="status-facts">
          <div><dt>Left</dt><dd data-testid="job-left">{active ? duration(left) : '–'}
            {active && p?.printTimeLeftOrigin ? <span class="muted small" title="How the remaining time was worked out"> ({leftOrigin(p.printTimeLeftOrigin)})</span> : null}</dd></div>
          <div><dt>Elapsed</dt><dd data-testid="job-elapsed">{duration(p?.printTime)}</dd></div>
          <div><dt>Layer</dt><dd data-testid="job-layer">{layer?.current !== null && layer?.current !== undefined ? `${layer.current} / ${layer.total ?? '?'}` : '–'}</dd></div>
          <div><dt>Z</dt><dd data-testid="job-z">{z !== null ? `${z.toFixed(2)}${layer?.totalHeight ? ` / ${layer.totalHeight.toFixed(1)}` : ''} mm` : '–'}</dd></div>
          <div><dt>Speed</dt><dd data-testid="job-speed" title="Speed factor (M220) and the file's feed rate">{speed === null ? '100 %' : `${speed} %`}{layer?.feedrate ? <span class="muted small"> · {Math.round(layer.feedrate / 60)} mm/s</span> : null}</dd></div>
          <div><dt>Flow</dt><dd data-testid="job-flow" title="Flow factor (M221)">{flow === null ? '100 %' : `${flow} %`}</dd></div>
          <div><dt>Filament</dt><dd data-testid="job-filament">{totalMetres === null ? '–' : `${usedMetres !== null ? `${usedMetres.toFixed(2)} / ` : ''}${totalMetres.toFixed(2)} m`}</dd></div>
          <div><dt>Estimated</dt><dd data-testid="job-estimate">{estimate ? <>{duration(estimate.seconds)} <span class="muted small">({estimate.source})</span></> : j?.estimatedPrintTime ? duration(j.estimatedPrintTime) : '–'}</dd></div>
          {analysed && estimate?.source !== 'file analysis' ? <div><dt>File analysis</dt><dd>{duration(analysed)}</dd></div> : null}
          {slicer?.estimatedPrintTime ? <div><dt>Slicer{slicer.name ? ` (${slicer.name.split(' ')[0]})` : ''}</dt><dd data-testid="job-slicer-estimate">{duration(slicer.estimatedPrintTime)}</dd></div> : null}
          {hasFile ? <div><dt>Size</dt><dd>{bytes(file?.size)}</dd></div> : null}
          {j?.user ? <div><dt>User</dt><dd>{j.user}</dd></div> : null}
        </dl>
        {allowed && (
          <div class="buttons">
            <button class="primary" disabled={!f.ready || !hasFile} onClick={start}>Print</button>
            {f.paused
              ? <button disabled={!f.paused} onClick={resume}>Resume</button>
              : <button disabled={!f.printing || f.pausing || f.cancelling} onClick={pause}>Pause</button>}
            <button class="danger" disabled={!active || f.cancelling} onClick={cancel}>Stop…</button>
          </div>
        )}
      </div>
    </section>
  );
}
