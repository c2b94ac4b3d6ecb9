// Job panel: selected file, progress, elapsed and remaining time, filament, and start/pause/resume/cancel.
import { post } from '../lib/api.ts';
import { confirmDialog } from '../lib/dialogs.ts';
import { duration, filament, leftOrigin, bytes } from '../lib/format.ts';
import { attempt, can, job, lastOutcome, printerState, progress, settings, currentZ } from '../lib/store.ts';

const OUTCOME = { done: 'Finished', cancelled: 'Cancelled', failed: 'Failed' };

export function JobPanel() {
  const j = job.value;
  const p = progress.value;
  const f = printerState.value.flags;
  const file = j?.file;
  const hasFile = !!file?.name;
  const active = f.printing || f.paused || f.pausing || f.cancelling;
  // A stopped print's last progress is history, not a live figure: shown with how it ended and without time left.
  const ended = !active && !f.printing ? lastOutcome.value : null;
  const completion = active || ended === 'done' ? (p?.completion ?? null) : null;
  const allowed = can('PRINT');

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
    <section class="panel" aria-label="Job">
      <h2>Job</h2>
      <dl class="facts">
        <dt>File</dt><dd data-testid="job-file">{hasFile ? (file?.display || file?.name) : 'none selected'}{hasFile && file?.origin === 'sdcard' ? ' (SD)' : ''}</dd>
        {hasFile && <><dt>Size</dt><dd>{bytes(file?.size)}</dd></>}
        {j?.estimatedPrintTime ? <><dt>Estimated</dt><dd>{duration(j.estimatedPrintTime)}</dd></> : null}
        {hasFile && filament(j?.filament as Record<string, unknown>) !== '–' ? <><dt>Filament</dt><dd>{filament(j?.filament as Record<string, unknown>)}</dd></> : null}
        <dt>Elapsed</dt><dd data-testid="job-elapsed">{duration(p?.printTime)}</dd>
        <dt>Left</dt>
        <dd data-testid="job-left">{active ? duration(p?.printTimeLeft) : '–'}
          {active && p?.printTimeLeftOrigin ? <span class="muted" title="How the remaining time was worked out"> ({leftOrigin(p.printTimeLeftOrigin)})</span> : null}</dd>
        {ended && <><dt>Last print</dt><dd data-testid="job-outcome" class={ended === 'done' ? '' : 'error'}>{OUTCOME[ended]}{ended !== 'done' && p?.completion ? ` at ${p.completion.toFixed(1)} %` : ''}</dd></>}
        {active && currentZ.value !== null ? <><dt>Height</dt><dd>{currentZ.value.toFixed(2)} mm</dd></> : null}
        {j?.user ? <><dt>User</dt><dd>{j.user}</dd></> : null}
      </dl>
      <div class="progress" role="progressbar" aria-label="Print progress" aria-valuemin={0} aria-valuemax={100} aria-valuenow={completion ?? 0}>
        <div class="bar" style={{ width: `${Math.min(100, completion ?? 0)}%` }} />
        <span data-testid="job-progress">{completion === null ? '' : `${completion.toFixed(1)} %`}</span>
      </div>
      {allowed && (
        <div class="buttons">
          <button class="primary" disabled={!f.ready || !hasFile} onClick={start}>Print</button>
          {f.paused
            ? <button disabled={!f.paused} onClick={resume}>Resume</button>
            : <button disabled={!f.printing || f.pausing || f.cancelling} onClick={pause}>Pause</button>}
          <button class="danger" disabled={!active || f.cancelling} onClick={cancel}>Stop…</button>
        </div>
      )}
    </section>
  );
}
