// Settings tab: a section list and the chosen section; sections save their part through POST /api/settings.
import { useState } from 'preact/hooks';
import { post } from '../../lib/api.ts';
import { attempt, can, notify, settings } from '../../lib/store.ts';
import type { Settings } from '../../lib/types.ts';
import { PrinterSection, SerialSection, TemperatureSection, ScriptsSection, WebcamSection } from './GeneralSections.tsx';
import { ApiKeySection, UsersSection, SystemSection } from './AccessSections.tsx';
import { ProfileSection } from './ProfileSection.tsx';
import { GroupsSection } from './GroupsSection.tsx';
import { NotificationsSection } from './NotificationsSection.tsx';
import { setupOpen } from '../../lib/setup.ts';

/**
 * Saves a partial settings tree and takes the server's answer (the complete settings now in effect); a refusal is
 * thrown, for the form to put on its field.
 */
export async function postSettings(part: Partial<Settings>): Promise<void> {
  settings.value = await post<Settings>('/api/settings', part);
  notify('Settings saved');
}

/** postSettings for callers without a form of fields: a refusal becomes a notice. */
export async function saveSettings(part: Partial<Settings>): Promise<boolean> {
  return attempt('Save settings', () => postSettings(part));
}

const SECTIONS = [
  { id: 'printer', label: 'Printer', perm: 'SETTINGS_READ', view: PrinterSection },
  { id: 'profile', label: 'Printer profile', perm: 'CONNECTION', view: ProfileSection },
  { id: 'serial', label: 'Serial connection', perm: 'SETTINGS_READ', view: SerialSection },
  { id: 'temperature', label: 'Temperatures', perm: 'SETTINGS_READ', view: TemperatureSection },
  { id: 'scripts', label: 'GCODE scripts', perm: 'SETTINGS_READ', view: ScriptsSection },
  { id: 'webcam', label: 'Webcam', perm: 'WEBCAM', view: WebcamSection },
  { id: 'notifications', label: 'Notifications', perm: 'SETTINGS', view: NotificationsSection },
  { id: 'apikey', label: 'API keys', perm: 'STATUS', view: ApiKeySection },
  { id: 'users', label: 'Access control', perm: 'ADMIN', view: UsersSection },
  { id: 'groups', label: 'Groups & permissions', perm: 'ADMIN', view: GroupsSection },
  { id: 'system', label: 'System', perm: 'SYSTEM', view: SystemSection },
];

export function SettingsTab() {
  const [section, setSection] = useState('printer');
  const visible = SECTIONS.filter((s) => can(s.perm));
  const current = visible.find((s) => s.id === section) ?? visible[0];
  if (!settings.value) return <p class="muted">Settings are not available.</p>;
  const View = current?.view;
  return (
    <div class="settings">
      <nav class="settings-nav">
        {visible.map((s) => (
          <button key={s.id} class={s.id === current?.id ? 'active' : ''} onClick={() => setSection(s.id)}>{s.label}</button>
        ))}
        {can('ADMIN') && <button type="button" class="setup-again" onClick={() => { setupOpen.value = true; }}>Setup wizard…</button>}
      </nav>
      <div class="settings-body">
        {!can('SETTINGS') && <p class="muted">You can view these settings; changing them needs the Settings permission.</p>}
        {View && <View />}
      </div>
    </div>
  );
}
