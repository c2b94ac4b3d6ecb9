// The control panel: header with state and user, sidebar (connection, job, files) and the main tabs; on phones the job
// and the temperatures come first and the tabs sit in a bar at the bottom.
import { at, pagePath } from '../lib/base.ts';
import { useEffect, useState } from 'preact/hooks';
import { signal } from '@preact/signals';
import { can, link, loadAll, logout, printerState, refreshSession, settings, startPush, userName } from '../lib/store.ts';
import { messageOf } from '../lib/api.ts';
import { cycleTheme, theme } from '../lib/theme.ts';
import { ConnectionPanel } from './ConnectionPanel.tsx';
import { JobPanel } from './JobPanel.tsx';
import { RecoveryOffer } from './RecoveryOffer.tsx';
import { PowerControls } from './PowerControls.tsx';
import { FilesPanel } from './FilesPanel.tsx';
import { TemperatureTab } from './TemperatureTab.tsx';
import { ControlTab } from './ControlTab.tsx';
import { TerminalTab } from './TerminalTab.tsx';
import { PreviewTab } from './PreviewTab.tsx';
import { SettingsTab } from './settings/SettingsTab.tsx';
import { HistoryTab } from './pages/HistoryTab.tsx';
import { TimelapseTab } from './pages/TimelapseTab.tsx';
import { LazyBedMeshTab } from './bed-mesh/LazyBedMeshTab.tsx';
import { LogsTab } from './pages/LogsTab.tsx';
import { AppKeysPrompt } from './AppKeysPrompt.tsx';
import { DialogHost, Notices } from './Dialogs.tsx';
import { LinkOverlay } from './LinkOverlay.tsx';
import { SystemMenu } from './SystemMenu.tsx';

type Tab = 'temperature' | 'control' | 'terminal' | 'preview' | 'history' | 'timelapse' | 'bedmesh' | 'logs' | 'settings';
export const activeTab = signal<Tab>('temperature');

const TABS: { id: Tab; label: string; perm: string; view: () => preact.JSX.Element }[] = [
  { id: 'temperature', label: 'Temperature', perm: 'STATUS', view: TemperatureTab },
  { id: 'control', label: 'Control', perm: 'CONTROL', view: ControlTab },
  { id: 'terminal', label: 'Terminal', perm: 'MONITOR_TERMINAL', view: TerminalTab },
  { id: 'preview', label: 'G-code', perm: 'FILES_DOWNLOAD', view: PreviewTab },
  { id: 'history', label: 'History', perm: 'FILES_LIST', view: HistoryTab },
  { id: 'timelapse', label: 'Timelapse', perm: 'TIMELAPSE_LIST', view: TimelapseTab },
  { id: 'bedmesh', label: 'Bed mesh', perm: 'STATUS', view: LazyBedMeshTab },
  { id: 'logs', label: 'Logs', perm: 'ADMIN', view: LogsTab },
  { id: 'settings', label: 'Settings', perm: 'SETTINGS_READ', view: SettingsTab },
];

const LINK_TEXT = { connecting: 'Connecting…', reconnecting: 'Reconnecting…', offline: 'Server offline', expired: 'Login expired', online: '' };

function stateClass(): string {
  if (link.value !== 'online') return 'off';
  const f = printerState.value.flags;
  if (f.error) return 'bad';
  if (f.printing || f.paused || f.pausing || f.cancelling) return 'busy';
  if (f.operational) return 'good';
  return 'off';
}

/** Arrow keys, Home and End move between tabs (and show them), as the WAI-ARIA tabs pattern has it. */
function tabKeys(e: KeyboardEvent, ids: Tab[], current: Tab): void {
  const i = ids.indexOf(current);
  const to = e.key === 'ArrowRight' ? (i + 1) % ids.length : e.key === 'ArrowLeft' ? (i - 1 + ids.length) % ids.length
    : e.key === 'Home' ? 0 : e.key === 'End' ? ids.length - 1 : -1;
  if (to < 0) return;
  e.preventDefault();
  activeTab.value = ids[to];
  const tab = document.getElementById(`tab-${ids[to]}`);
  tab?.focus();
  tab?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
}

export function App() {
  const [phase, setPhase] = useState<'loading' | 'ready' | 'failed'>('loading');
  const [failure, setFailure] = useState('');

  useEffect(() => {
    (async () => {
      const loggedIn = await refreshSession();
      if (!loggedIn && !can('STATUS')) {
        location.replace(`${at('/login')}?redirect=${encodeURIComponent(pagePath() + location.search)}`);
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

  const online = link.value === 'online';
  const stateText = online ? printerState.value.text : LINK_TEXT[link.value];
  useEffect(() => {
    const name = settings.value?.appearance?.name;
    document.title = `${name ? `${name} – ` : ''}${stateText} – Gantry`;
  }, [settings.value, stateText]);

  if (phase === 'loading') return <p class="loading">Loading…</p>;
  if (phase === 'failed') return <p class="loading error">Could not reach the server: {failure}</p>;

  const tabs = TABS.filter((t) => can(t.perm));
  const current = tabs.find((t) => t.id === activeTab.value) ?? tabs[0];
  const color = settings.value?.appearance?.color ?? 'default';
  const name = settings.value?.appearance?.name || 'Gantry';
  const View = current?.view;
  // While the server is away nothing can be used: the page stays visible but inert (no clicks, no focus).
  const inert = link.value === 'offline' || link.value === 'expired';

  return (
    <div class="app">
      <header class={`top color-${color}`} inert={inert}>
        <span class="brand">{name}</span>
        <span class={`state ${stateClass()}`} data-testid="printer-state" role="status" title={printerState.value.error || undefined}>{stateText}</span>
        <span class="spacer" />
        <PowerControls />
        <button class="icon" onClick={cycleTheme} title={`Theme: ${theme.value}`} aria-label={`Theme: ${theme.value}`}>{theme.value === 'dark' ? '☾' : theme.value === 'light' ? '☀' : '◐'}</button>
        <SystemMenu />
        <span class="user" data-testid="user-name">{userName.value ?? 'Guest'}</span>
        {userName.value ? <button class="icon text" onClick={() => void logout()}>Log out</button> : <a class="button icon text" href={at('/login')}>Log in</a>}
      </header>
      <div class={`layout${online ? '' : ' stale'}`} inert={inert} aria-busy={!online}>
        <aside class="sidebar">
          <ConnectionPanel />
          <RecoveryOffer />
          <JobPanel />
          {can('FILES_LIST') && <FilesPanel />}
        </aside>
        <main class="main">
          <nav class="tabs" role="tablist" aria-label="Pages" onKeyDown={(e) => current && tabKeys(e, tabs.map((t) => t.id), current.id)}>
            {tabs.map((t) => {
              const sel = t.id === current?.id;
              return (
                <button key={t.id} id={`tab-${t.id}`} role="tab" aria-selected={sel} aria-controls={`panel-${t.id}`} tabIndex={sel ? 0 : -1}
                  class={sel ? 'active' : ''} onClick={() => (activeTab.value = t.id)}>{t.label}</button>
              );
            })}
          </nav>
          {current && (
            <section class="tab-body" role="tabpanel" id={`panel-${current.id}`} aria-labelledby={`tab-${current.id}`}>
              {View && <View />}
            </section>
          )}
        </main>
      </div>
      <AppKeysPrompt />
      <DialogHost />
      <LinkOverlay />
      <Notices />
    </div>
  );
}
