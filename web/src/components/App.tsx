// The control panel: header with state and user, sidebar (connection, job, files) and the main tabs.
import { useEffect, useState } from 'preact/hooks';
import { signal } from '@preact/signals';
import { can, loadAll, logout, printerState, pushOnline, refreshSession, settings, startPush, userName } from '../lib/store.ts';
import { messageOf } from '../lib/api.ts';
import { ConnectionPanel } from './ConnectionPanel.tsx';
import { JobPanel } from './JobPanel.tsx';
import { FilesPanel } from './FilesPanel.tsx';
import { TemperatureTab } from './TemperatureTab.tsx';
import { ControlTab } from './ControlTab.tsx';
import { TerminalTab } from './TerminalTab.tsx';
import { PreviewTab } from './PreviewTab.tsx';
import { SettingsTab } from './settings/SettingsTab.tsx';
import { AppKeysPrompt } from './AppKeysPrompt.tsx';
import { DialogHost, Notices } from './Dialogs.tsx';

type Tab = 'temperature' | 'control' | 'terminal' | 'preview' | 'settings';
export const activeTab = signal<Tab>('temperature');

const TABS: { id: Tab; label: string; perm: string }[] = [
  { id: 'temperature', label: 'Temperature', perm: 'STATUS' },
  { id: 'control', label: 'Control', perm: 'CONTROL' },
  { id: 'terminal', label: 'Terminal', perm: 'MONITOR_TERMINAL' },
  { id: 'preview', label: 'G-code', perm: 'FILES_DOWNLOAD' },
  { id: 'settings', label: 'Settings', perm: 'SETTINGS_READ' },
];

function stateClass(): string {
  const f = printerState.value.flags;
  if (f.error) return 'bad';
  if (f.printing || f.paused || f.pausing || f.cancelling) return 'busy';
  if (f.operational) return 'good';
  return 'off';
}

export function App() {
  const [phase, setPhase] = useState<'loading' | 'ready' | 'failed'>('loading');
  const [failure, setFailure] = useState('');

  useEffect(() => {
    (async () => {
      const loggedIn = await refreshSession();
      if (!loggedIn && !can('STATUS')) {
        location.replace(`/login?redirect=${encodeURIComponent(location.pathname + location.search)}`);
        return;
      }
      startPush();
      await loadAll();
      setPhase('ready');
    })().catch((err) => {
      setFailure(messageOf(err));
      setPhase('failed');
    });
  }, []);

  useEffect(() => {
    const name = settings.value?.appearance?.name;
    document.title = `${name ? `${name} – ` : ''}${printerState.value.text} – Gantry`;
  }, [settings.value, printerState.value.text]);

  if (phase === 'loading') return <p class="loading">Loading…</p>;
  if (phase === 'failed') return <p class="loading error">Could not reach the server: {failure}</p>;

  const tabs = TABS.filter((t) => can(t.perm));
  const tab = tabs.some((t) => t.id === activeTab.value) ? activeTab.value : tabs[0]?.id;
  const color = settings.value?.appearance?.color ?? 'default';
  const name = settings.value?.appearance?.name || 'Gantry';

  return (
    <div class="app">
      <header class={`top color-${color}`}>
        <span class="brand">{name}</span>
        <span class={`state ${stateClass()}`} data-testid="printer-state" title={printerState.value.error || undefined}>
          {printerState.value.text}
        </span>
        {!pushOnline.value && <span class="offline" title="Push channel disconnected, reconnecting">reconnecting…</span>}
        <span class="spacer" />
        <span class="user" data-testid="user-name">{userName.value ?? 'Guest'}</span>
        {userName.value ? <button class="link" onClick={() => void logout()}>Log out</button> : <a href="/login">Log in</a>}
      </header>
      <div class="layout">
        <aside class="sidebar">
          <ConnectionPanel />
          <JobPanel />
          {can('FILES_LIST') && <FilesPanel />}
        </aside>
        <main class="main">
          <nav class="tabs" role="tablist">
            {tabs.map((t) => (
              <button key={t.id} role="tab" aria-selected={t.id === tab} class={t.id === tab ? 'active' : ''} onClick={() => (activeTab.value = t.id)}>
                {t.label}
              </button>
            ))}
          </nav>
          <section class="tab-body">
            {tab === 'temperature' && <TemperatureTab />}
            {tab === 'control' && <ControlTab />}
            {tab === 'terminal' && <TerminalTab />}
            {tab === 'preview' && <PreviewTab />}
            {tab === 'settings' && <SettingsTab />}
          </section>
        </main>
      </div>
      <AppKeysPrompt />
      <DialogHost />
      <Notices />
    </div>
  );
}
