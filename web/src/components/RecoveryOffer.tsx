// The offer to resume an interrupted print (GET/POST /api/plugin/recovery): file, layer, when and why it stopped, and
// Resume / Discard, each asked for in a dialog before anything moves.
import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { get, post } from '../lib/api.ts';
import { confirmDialog } from '../lib/dialogs.ts';
import { date } from '../lib/format.ts';
import { attempt, can, recoveryVersion } from '../lib/store.ts';

interface Offer {
  available: boolean;
  path?: string;
  line?: number;
  layer?: number | null;
  z?: number | null;
  time?: number;
  cause?: string | null;
  temperatures?: Record<string, number | null>;
  reconnect?: { outcome: string; reason: string } | null;
}

const CAUSES: Record<string, string> = {
  'port-vanished': 'The printer’s port went away (cable or USB power)',
  'printer-reset': 'The printer restarted during the print',
  'printer-halted': 'The printer stopped with an error',
  'host-restarted': 'The server stopped during the print (crash or power cut)',
  disconnected: 'The printer was disconnected during the print',
  'link-error': 'The connection to the printer failed',
  'power-off': 'The printer’s power was switched off during the print',
};

const offer = signal<Offer | null>(null);

async function load(): Promise<void> {
  offer.value = await get<Offer>('/api/plugin/recovery').catch(() => null);
}

export function RecoveryOffer() {
  const version = recoveryVersion.value;
  useEffect(() => { void load(); }, [version]);
  const o = offer.value;
  if (!o?.available) return null;
  const where = `line ${o.line}${o.layer !== null && o.layer !== undefined ? `, layer ${o.layer}` : ''}${o.z !== null && o.z !== undefined ? ` (Z ${o.z} mm)` : ''}`;
  const heat = Object.entries(o.temperatures ?? {}).filter(([, v]) => typeof v === 'number' && v > 0).map(([k, v]) => `${k} ${v} °C`).join(', ');

  const resume = async () => {
    const ok = await confirmDialog('Resume the print?',
      `The printer heats up${heat ? ` (${heat})` : ''}, homes X and Y only (Z keeps its place), then prints ${o.path} from ${where}. `
      + 'Check that the part is still on the bed and nothing is in the way of the nozzle.', 'Resume print', { cancel: 'Not now' });
    if (ok) await attempt('Resume', () => post('/api/plugin/recovery', { command: 'resume' }));
    await load();
  };
  const discard = async () => {
    const ok = await confirmDialog('Discard the interrupted print?', `${o.path} can no longer be resumed from ${where}.`, 'Discard', { cancel: 'Keep it', danger: true });
    if (ok) await attempt('Discard', () => post('/api/plugin/recovery', { command: 'discard' }));
    await load();
  };

  return (
    <section class="panel recovery" aria-label="Interrupted print" data-testid="recovery-offer">
      <h2>Interrupted print</h2>
      <dl class="facts">
        <dt>File</dt><dd data-testid="recovery-file">{o.path}</dd>
        <dt>Stopped at</dt><dd data-testid="recovery-where">{where}</dd>
        <dt>When</dt><dd>{date(o.time)}</dd>
        <dt>Why</dt><dd data-testid="recovery-cause" class="error">{CAUSES[o.cause ?? ''] ?? o.cause ?? 'unknown'}</dd>
        {o.reconnect ? <><dt>Reconnect</dt><dd data-testid="recovery-reconnect">{o.reconnect.reason}</dd></> : null}
      </dl>
      {can('PRINT') && (
        <div class="buttons">
          <button class="primary" onClick={resume}>Resume…</button>
          <button class="danger" onClick={discard}>Discard…</button>
        </div>
      )}
    </section>
  );
}
