// Settings sections for API keys (global, personal, app keys), users and access control, and system commands.
import { useEffect, useState } from 'preact/hooks';
import { del, get, post, put, encodePath } from '../../lib/api.ts';
import { confirmDialog, promptDialog } from '../../lib/dialogs.ts';
import { attempt, can, notify, settings, userName } from '../../lib/store.ts';
import type { SystemCommand, UserRecord } from '../../lib/types.ts';
import { saveSettings } from './SettingsTab.tsx';
import { Check, Section, Text } from './fields.tsx';

interface AppKey { app_id: string; api_key: string; user_id: string }

export function ApiKeySection() {
  const me = userName.value;
  const [personal, setPersonal] = useState<string | null>(null);
  const [appKeys, setAppKeys] = useState<AppKey[]>([]);
  const global = settings.value?.api?.key ?? null;
  const userPath = me ? `/api/access/users/${encodeURIComponent(me)}` : '';

  const reload = () => {
    if (me) get<UserRecord>(userPath).then((u) => setPersonal(u.apikey ?? null)).catch(() => undefined);
    if (can('PLUGIN_APPKEYS_GRANT') || can('PLUGIN_APPKEYS_ADMIN')) {
      get<{ keys: AppKey[] }>('/api/plugin/appkeys').then((r) => setAppKeys(r.keys ?? [])).catch(() => setAppKeys([]));
    }
  };
  useEffect(reload, [me]);

  const regenerateGlobal = async () => {
    if (!(await confirmDialog('Regenerate global API key', 'Clients using the current global key will stop working.', 'Regenerate', { cancel: 'Keep the key', danger: true }))) return;
    await attempt('Regenerate key', async () => {
      const r = await post<{ apikey: string }>('/api/settings/apikey');
      if (settings.value) settings.value = { ...settings.value, api: { ...settings.value.api, key: r.apikey } };
      notify('New global API key generated');
    });
  };
  const newPersonal = () => attempt('Generate key', async () => {
    const r = await post<{ apikey: string }>(`${userPath}/apikey`);
    setPersonal(r.apikey);
  });
  const deletePersonal = () => attempt('Delete key', async () => {
    await del(`${userPath}/apikey`);
    setPersonal(null);
  });
  const revoke = async (k: AppKey) => {
    if (!(await confirmDialog('Revoke app key', `Revoke the key of ${k.app_id}?`, 'Revoke', { cancel: 'Keep', danger: true }))) return;
    if (await attempt('Revoke', () => post('/api/plugin/appkeys', { command: 'revoke', key: k.api_key }))) reload();
  };

  return (
    <>
      {can('ADMIN') && (
        <Section title="Global API key">
          <p class="muted">Acts as an administrator. Prefer personal or app keys.</p>
          <code class="key" data-testid="global-key">{global ?? 'not set'}</code>
          <div class="buttons"><button type="button" onClick={() => void regenerateGlobal()}>Regenerate</button></div>
        </Section>
      )}
      {me && (
        <Section title="Your API key">
          <code class="key">{personal ?? 'none'}</code>
          <div class="buttons">
            <button type="button" onClick={() => void newPersonal()}>{personal ? 'Regenerate' : 'Generate'}</button>
            {personal && <button type="button" class="danger" onClick={() => void deletePersonal()}>Delete</button>}
          </div>
        </Section>
      )}
      <Section title="Application keys">
        {appKeys.length === 0 ? <p class="muted">No application has a key yet.</p> : (
          <table><tbody>
            {appKeys.map((k) => (
              <tr key={k.api_key}><td>{k.app_id}</td><td class="muted">{k.user_id}</td>
                <td><button type="button" class="small danger" onClick={() => void revoke(k)}>Revoke</button></td></tr>
            ))}
          </tbody></table>
        )}
      </Section>
    </>
  );
}

/** The server's rule for a chosen password (src/access/password.ts), checked here before sending. */
const MIN_PASSWORD = 8;

export function UsersSection() {
  const [users, setUsers] = useState<UserRecord[]>([]);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [admin, setAdmin] = useState(false);
  const reload = () => void get<{ users: UserRecord[] }>('/api/access/users').then((r) => setUsers(r.users)).catch(() => undefined);
  useEffect(reload, []);
  const path = (u: UserRecord) => `/api/access/users/${encodePath(u.name)}`;

  const add = async () => {
    if (!name || !password) return;
    const groups = admin ? ['admins', 'users'] : ['users'];
    await post('/api/access/users', { name, password, active: true, groups });
    setName('');
    setPassword('');
    setAdmin(false);
    reload();
  };
  const setActive = async (u: UserRecord, active: boolean) => {
    if (await attempt('Update user', () => put(path(u), { active }))) reload();
  };
  const setAdminFlag = async (u: UserRecord, on: boolean) => {
    const groups = on ? [...new Set([...u.groups, 'admins'])] : u.groups.filter((g) => g !== 'admins');
    if (await attempt('Update user', () => put(path(u), { groups }))) reload();
  };
  const remove = async (u: UserRecord) => {
    if (!(await confirmDialog('Delete user', `Delete ${u.name}?`, 'Delete', { cancel: 'Keep', danger: true }))) return;
    if (await attempt('Delete user', () => del(path(u)))) reload();
  };
  const changePassword = async (u: UserRecord) => {
    const pw = await promptDialog('Change password', `New password for ${u.name} (at least ${MIN_PASSWORD} characters):`, '', 'Change',
      { secret: true, check: (v) => (v.length < MIN_PASSWORD ? `The password must have at least ${MIN_PASSWORD} characters.` : undefined) });
    if (!pw) return;
    if (await attempt('Change password', () => put(`${path(u)}/password`, { password: pw }))) notify('Password changed');
  };

  return (
    <>
      <Section title="Users">
        <table class="users">
          <thead><tr><th>Name</th><th>Active</th><th>Admin</th><th /></tr></thead>
          <tbody>
            {users.map((u) => {
              const self = u.name === userName.value;
              return (
                <tr key={u.name}>
                  <td>{u.name}</td>
                  <td><input type="checkbox" checked={u.active} disabled={self} aria-label={`${u.name} active`} onChange={(e) => void setActive(u, e.currentTarget.checked)} /></td>
                  <td><input type="checkbox" checked={u.groups.includes('admins')} disabled={self} aria-label={`${u.name} admin`} onChange={(e) => void setAdminFlag(u, e.currentTarget.checked)} /></td>
                  <td class="actions">
                    <button type="button" class="small" onClick={() => void changePassword(u)}>Password</button>
                    {!self && <button type="button" class="small danger" onClick={() => void remove(u)}>Delete</button>}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </Section>
      <Section title="Add user" onSave={add} disabled={!name || !password}>
        <Text label="User name" name="name" value={name} onChange={setName} required />
        <Text label="Password" type="password" name="password" value={password} onChange={setPassword} required minLength={MIN_PASSWORD}
          placeholder={`at least ${MIN_PASSWORD} characters`} />
        <Check label="Administrator" value={admin} onChange={setAdmin} />
      </Section>
    </>
  );
}

export function SystemSection() {
  const [commands, setCommands] = useState<SystemCommand[]>([]);
  const cmds = settings.value?.server?.commands ?? {};
  const [shutdown, setShutdown] = useState(cmds.systemShutdownCommand ?? '');
  const [reboot, setReboot] = useState(cmds.systemRestartCommand ?? '');
  const [restart, setRestart] = useState(cmds.serverRestartCommand ?? '');
  const reload = () => void get<{ core: SystemCommand[]; custom: SystemCommand[] }>('/api/system/commands')
    .then((r) => setCommands([...r.core, ...r.custom])).catch(() => setCommands([]));
  useEffect(reload, []);

  const run = async (c: SystemCommand) => {
    if (!(await confirmDialog(c.name, c.confirm ?? `Run "${c.name}"?`, 'Run', { cancel: 'Do nothing', danger: true }))) return;
    if (await attempt(c.name, () => post(`/api/system/commands/${c.source}/${encodeURIComponent(c.action)}`))) notify(`${c.name}: started`);
  };
  const save = async () => {
    if (await saveSettings({ server: { commands: { systemShutdownCommand: shutdown || null, systemRestartCommand: reboot || null, serverRestartCommand: restart || null } } })) reload();
  };

  return (
    <>
      <Section title="System commands">
        {commands.filter((c) => c.action !== 'divider').length === 0 ? <p class="muted">No system commands are configured.</p> : (
          <div class="buttons">
            {commands.filter((c) => c.action !== 'divider').map((c) => <button key={`${c.source}/${c.action}`} type="button" onClick={() => void run(c)}>{c.name}</button>)}
          </div>
        )}
      </Section>
      {can('SETTINGS') && (
        <Section title="Command lines" onSave={() => void save()}>
          <Text label="Restart Gantry" value={restart} onChange={setRestart} placeholder="e.g. sudo systemctl restart gantry" />
          <Text label="Reboot system" value={reboot} onChange={setReboot} placeholder="e.g. sudo shutdown -r now" />
          <Text label="Shut down system" value={shutdown} onChange={setShutdown} placeholder="e.g. sudo shutdown -h now" />
        </Section>
      )}
    </>
  );
}
