// The control panel: a one-row header with state and user; on a wide screen the sidebar (connection, job, files) and
// the pages as tabs, on a phone one page at a time with the navigation in a bar at the bottom.
import { at, pagePath } from '../lib/base.ts';
import { useEffect, useState } from 'preact/hooks';
import { can, link, loadAll, logout, printerState, refreshSession, settings, startPush, userName } from '../lib/store.ts';
import { messageOf } from '../lib/api.ts';
import { cycleTheme, theme } from '../lib/theme.ts';
import { ConnectionPanel } from './ConnectionPanel.tsx';
import { StatusCard } from './StatusCard.tsx';
import { RecentFiles } from './RecentFiles.tsx';
import { CancelObjects } from './CancelObjects.tsx';
import { RecoveryOffer } from './RecoveryOffer.tsx';
import { PowerControls } from './PowerControls.tsx';
import { AppKeysPrompt } from './AppKeysPrompt.tsx';
import { DialogHost, Notices } from './Dialogs.tsx';
import { LinkOverlay } from './LinkOverlay.tsx';
import { SystemMenu } from './SystemMenu.tsx';
import { BottomBar, TabRow } from './Nav.tsx';
import { activePage, allPages, narrow } from '../lib/pages.ts';
import { followInTab } from '../lib/job-status.ts';
import { setupOpen, setupPending } from '../lib/setup.ts';
import { LazySetupWizard } from './setup/LazySetupWizard.tsx';
import './pages/index.ts';

const LINK_TEXT = { connecting: 'Connecting…', reconnecting: 'Reconnecting…', offline: 'Server offline', expired: 'Login expired', online: '' };

function stateClass(): string {
  if (link.value !== 'online') return 'off';
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
        location.replace(`${at('/login')}?redirect=${encodeURIComponent(pagePath() + location.search)}`);
        return;
      }
      startPush();
      await loadAll();
      setPhase('ready');
      // The first start's admin, at its first login: the setup wizard (skippable; Settings opens it again).
      if (setupPending()) setupOpen.value = true;
    })().catch((err) => {
      setFailure(messageOf(err));
      setPhase('failed');
    });
  }, []);

  const online = link.value === 'online';
  const stateText = online ? printerState.value.text : LINK_TEXT[link.value];
  // The tab's title and icon follow the print (its progress) or the state; read through a signal-tracking effect.
  useEffect(() => followInTab(() => (link.value === 'online' ? printerState.value.text : LINK_TEXT[link.value])), []);

  if (phase === 'loading') return <p class="loading">Loading…</p>;
  if (phase === 'failed') return <p class="loading error">Could not reach the server: {failure}</p>;

  const phone = narrow.value;
  const pages = allPages.value.filter((p) => can(p.perm) && (phone || !p.phoneOnly));
  const current = pages.find((p) => p.id === activePage.value) ?? pages[0];
  const color = settings.value?.appearance?.color ?? 'default';
  const name = settings.value?.appearance?.name || 'Gantry';
  const View = current?.view;
  // While the server is away nothing can be used: the page stays visible but inert (no clicks, no focus).
  const inert = link.value === 'offline' || link.value === 'expired';
  const body = current && (
    <section class="tab-body" role={phone ? 'region' : 'tabpanel'} id={`panel-${current.id}`}
      aria-labelledby={phone ? undefined : `tab-${current.id}`} aria-label={phone ? `${current.label} page` : undefined}>
      {View && <View />}
    </section>
  );

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
        {userName.value ? <button class={phone ? 'icon' : 'icon text'} aria-label="Log out" title="Log out" onClick={() => void logout()}>{phone ? '⎋' : 'Log out'}</button> : <a class="button icon text" href={at('/login')}>Log in</a>}
      </header>
      {phone ? (
        <main class={`layout phone${online ? '' : ' stale'}`} inert={inert} aria-busy={!online}>{body}</main>
      ) : (
        <>
        <div class={online ? 'card-row' : 'card-row stale'} inert={inert}><StatusCard /></div>
        <div class={`layout${online ? '' : ' stale'}`} inert={inert} aria-busy={!online}>
          <aside class="sidebar">
            <ConnectionPanel />
            <RecoveryOffer />
            <CancelObjects />
            {can('FILES_LIST') && <RecentFiles />}
          </aside>
          <main class="main">
            {current && <TabRow pages={pages} current={current.id} />}
            {body}
          </main>
        </div>
        </>
      )}
      {phone && current && <div inert={inert}><BottomBar pages={pages} current={current.id} /></div>}
      <LazySetupWizard />
      <AppKeysPrompt />
      <DialogHost />
      <LinkOverlay />
      <Notices />
    </div>
  );
}
