// Settings → Notifications: the targets (URL, events, snapshot), the progress step, a test message per target and the
// last deliveries (plugins.notifications; /api/plugin/notifications for the test and the delivery log).
import { useEffect, useState } from 'preact/hooks';
import { get, post } from '../../lib/api.ts';
import { attempt, can, notify, settings } from '../../lib/store.ts';
import { saveSettings } from './SettingsTab.tsx';
import { Check, Section, Text } from './fields.tsx';

interface Target { name?: string; url: string; events?: string[]; snapshot?: boolean; enabled?: boolean }
interface Delivery { time: number; event: string; target: string; ok: boolean; attempts: number; error?: string }
interface Status { apprise: boolean; targets: { name: string; url: string; kind: string | null; problem: string | null; waiting: number }[]; recent: Delivery[] }

const EVENTS = ['PrintStarted', 'PrintDone', 'PrintFailed', 'PrintCancelled', 'PrintPaused', 'PrintResumed', 'FilamentChange',
  'PrintProgress', 'PrintLayer', 'PrintRecoveryAvailable', 'Error', 'Disconnected', 'MovieDone', 'QueueWaitingForBedClear'];
const DEFAULT_EVENTS = ['PrintStarted', 'PrintDone', 'PrintFailed', 'PrintCancelled', 'PrintPaused', 'FilamentChange', 'PrintRecoveryAvailable', 'Error'];

export function NotificationsSection() {
  const stored = ((settings.value?.plugins?.notifications ?? {}) as { targets?: Target[]; progressStep?: number; layers?: number[]; layerStep?: number });
  const [targets, setTargets] = useState<Target[]>(structuredClone(stored.targets ?? []));
  const [step, setStep] = useState(String(stored.progressStep ?? 25));
  const [layers, setLayers] = useState((stored.layers ?? []).join(', '));
  const [layerStep, setLayerStep] = useState(String(stored.layerStep ?? 0));
  const [status, setStatus] = useState<Status | null>(null);
  const ro = !can('SETTINGS');
  const refresh = () => { if (can('SETTINGS')) void get<Status>('/api/plugin/notifications').then(setStatus, () => {}); };
  useEffect(refresh, []);

  const change = (i: number, part: Partial<Target>) => setTargets(targets.map((t, j) => (j === i ? { ...t, ...part } : t)));
  const toggleEvent = (i: number, ev: string, on: boolean) => {
    const now = targets[i].events ?? DEFAULT_EVENTS;
    change(i, { events: on ? [...now.filter((e) => e !== ev), ev] : now.filter((e) => e !== ev) });
  };
  const test = (i: number) => void attempt('Send a test notification', async () => {
    const { results } = await post<{ results: { ok: boolean; error?: string }[] }>('/api/plugin/notifications', { command: 'test', target: i });
    const r = results[0];
    notify(r?.ok ? 'Test notification sent' : `Test notification failed: ${r?.error ?? 'unknown error'}`, r?.ok ? 'info' : 'error');
    refresh();
  });
  const save = () => {
    const progressStep = Number(step);
    if (!Number.isInteger(progressStep) || progressStep < 0 || progressStep > 100) return notify('Progress step: a whole number from 0 to 100', 'error');
    if (targets.some((t) => t.url.trim() === '')) return notify('Every target needs a URL', 'error');
    const layerList = layers.split(/[\s,]+/).filter(Boolean).map(Number);
    if (layerList.some((n) => !Number.isInteger(n) || n < 1)) return notify('Layers: whole numbers from 1, separated by commas', 'error');
    const every = Number(layerStep);
    if (!Number.isInteger(every) || every < 0) return notify('Layer step: a whole number (0: never)', 'error');
    void saveSettings({ plugins: { notifications: { targets, progressStep, layers: layerList, layerStep: every } } } as never).then(refresh);
  };

  return (
    <Section title="Notifications" disabled={ro} onSave={save}>
      <p class="muted">
        Apprise URLs (tgram://, discord://, pover://, mailto://, …) go through the <code>apprise</code> command
        {status && !status.apprise ? ' — not installed on this server (apt-get install apprise)' : ''}; http(s):// URLs get a JSON POST; ntfy:// works either way.
      </p>
      {targets.map((t, i) => (
        <fieldset key={i} class="notify-target">
          <legend>{t.name || `Target ${i + 1}`}</legend>
          <Text label="Name" value={t.name ?? ''} onChange={(v) => change(i, { name: v })} disabled={ro} />
          <Text label="URL" value={t.url} onChange={(v) => change(i, { url: v })} disabled={ro} placeholder="tgram://bot-token/chat-id" />
          <Check label="Attach a webcam snapshot" value={t.snapshot ?? false} onChange={(v) => change(i, { snapshot: v })} disabled={ro} />
          <Check label="Enabled" value={t.enabled ?? true} onChange={(v) => change(i, { enabled: v })} disabled={ro} />
          <div class="notify-events" role="group" aria-label={`Events for ${t.name || `target ${i + 1}`}`}>
            {EVENTS.map((ev) => (
              <Check key={ev} label={ev} value={(t.events ?? DEFAULT_EVENTS).includes(ev)} onChange={(on) => toggleEvent(i, ev, on)} disabled={ro} />
            ))}
          </div>
          {status?.targets[i]?.problem && <p class="error">{status.targets[i].problem}</p>}
          <div class="buttons spaced">
            <button type="button" onClick={() => test(i)} disabled={ro}>Send test</button>
            <button type="button" class="danger" onClick={() => setTargets(targets.filter((_, j) => j !== i))} disabled={ro}>Remove</button>
          </div>
        </fieldset>
      ))}
      <div class="buttons">
        <button type="button" onClick={() => setTargets([...targets, { url: '', events: DEFAULT_EVENTS, snapshot: true }])} disabled={ro}>Add target</button>
      </div>
      <Text label="Progress message every (%)" type="number" value={step} onChange={setStep} disabled={ro} />
      <Text label="Layer message at layers (PrintLayer)" value={layers} onChange={setLayers} disabled={ro} placeholder="2, 10" />
      <Text label="Layer message every (layers, 0: never)" type="number" value={layerStep} onChange={setLayerStep} disabled={ro} />
      {status && status.recent.length > 0 && (
        <table class="notify-log" aria-label="Recent notifications">
          <thead><tr><th>Time</th><th>Event</th><th>Target</th><th>Result</th></tr></thead>
          <tbody>
            {status.recent.slice(0, 10).map((d, k) => (
              <tr key={k}><td>{new Date(d.time).toLocaleTimeString()}</td><td>{d.event}</td><td>{d.target}</td>
                <td>{d.ok ? `sent${d.attempts > 1 ? ` (try ${d.attempts})` : ''}` : d.error}</td></tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}
