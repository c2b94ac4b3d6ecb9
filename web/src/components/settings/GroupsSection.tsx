// Settings → Groups: the groups with their permissions (add, change, remove), and which groups each user belongs to.
import { useEffect, useState } from 'preact/hooks';
import { del, get, post, put, encodePath } from '../../lib/api.ts';
import { confirmDialog } from '../../lib/dialogs.ts';
import { attempt, userName } from '../../lib/store.ts';
import type { UserRecord } from '../../lib/types.ts';
import { Section } from './fields.tsx';
import { withoutTrailing } from '../../lib/text.ts';

interface Permission { key: string; name: string; dangerous: boolean; description?: string }
interface Group { key: string; name: string; description?: string; permissions: string[]; removable: boolean; changeable: boolean; dangerous?: boolean }

/** A group's key from its name, as OctoPrint's UI makes it: lower case, anything but letters and digits as `_`. */
const keyOf = (name: string) => withoutTrailing(name.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_/, ''), '_') || 'group';

export function GroupsSection() {
  const [perms, setPerms] = useState<Permission[]>([]);
  const [groups, setGroups] = useState<Group[]>([]);
  const [users, setUsers] = useState<UserRecord[]>([]);
  const [editing, setEditing] = useState<string | null>(null);
  const [draft, setDraft] = useState<{ name: string; permissions: string[] }>({ name: '', permissions: [] });
  const reload = () => {
    void get<{ permissions: Permission[] }>('/api/access/permissions').then((r) => setPerms(r.permissions)).catch(() => undefined);
    void get<{ groups: Group[] }>('/api/access/groups').then((r) => setGroups(r.groups)).catch(() => undefined);
    void get<{ users: UserRecord[] }>('/api/access/users').then((r) => setUsers(r.users)).catch(() => undefined);
  };
  useEffect(reload, []);

  const edit = (g: Group | null) => {
    setEditing(g ? g.key : '');
    setDraft(g ? { name: g.name, permissions: g.permissions } : { name: '', permissions: [] });
  };
  const toggle = (key: string, on: boolean) =>
    setDraft({ ...draft, permissions: on ? [...draft.permissions, key] : draft.permissions.filter((p) => p !== key) });
  const save = async () => {
    const ok = editing
      ? await attempt('Save group', () => put(`/api/access/groups/${encodePath(editing)}`, { permissions: draft.permissions }))
      : await attempt('Add group', () => post('/api/access/groups', { key: keyOf(draft.name), name: draft.name, permissions: draft.permissions }));
    if (ok) { setEditing(null); reload(); }
  };
  const remove = async (g: Group) => {
    if (!(await confirmDialog('Delete group', `Delete the group ${g.name}? Its members lose its permissions.`, 'Delete', { cancel: 'Keep', danger: true }))) return;
    if (await attempt('Delete group', () => del(`/api/access/groups/${encodePath(g.key)}`))) reload();
  };
  const setMember = async (u: UserRecord, group: string, on: boolean) => {
    const next = on ? [...new Set([...u.groups, group])] : u.groups.filter((g) => g !== group);
    if (await attempt('Update user', () => put(`/api/access/users/${encodePath(u.name)}`, { groups: next }))) reload();
  };

  return (
    <>
      <Section title="Groups">
        <div class="scroll"><table>
          <thead><tr><th>Group</th><th>Permissions</th><th /></tr></thead>
          <tbody>{groups.map((g) => (
            <tr key={g.key}><td>{g.name}</td><td class="small">{g.permissions.join(', ') || '–'}</td>
              <td class="actions">
                {g.changeable && <button type="button" class="small" onClick={() => edit(g)}>Edit</button>}
                {g.removable && <button type="button" class="small danger" onClick={() => void remove(g)}>Delete</button>}
              </td></tr>
          ))}</tbody>
        </table></div>
        {editing === null && <div class="buttons"><button type="button" onClick={() => edit(null)}>Add group</button></div>}
      </Section>
      {editing !== null && (
        <Section title={editing ? `Permissions of ${draft.name}` : 'New group'} onSave={() => void save()} disabled={!editing && !draft.name.trim()}>
          {!editing && <label>Name<input value={draft.name} onInput={(e) => setDraft({ ...draft, name: e.currentTarget.value })} required /></label>}
          <fieldset class="grid"><legend>Permissions</legend>
            {perms.map((p) => (
              <label key={p.key} class="check" title={p.description}>
                <input type="checkbox" checked={draft.permissions.includes(p.key)} onChange={(e) => toggle(p.key, e.currentTarget.checked)} />
                {p.name}{p.dangerous ? ' ⚠' : ''}
              </label>
            ))}
          </fieldset>
          <div class="buttons"><button type="button" onClick={() => setEditing(null)}>Close</button></div>
        </Section>
      )}
      <Section title="Membership">
        <div class="scroll"><table>
          <thead><tr><th>User</th>{groups.map((g) => <th key={g.key}>{g.name}</th>)}</tr></thead>
          <tbody>{users.map((u) => (
            <tr key={u.name}><td>{u.name}</td>{groups.map((g) => (
              <td key={g.key}><input type="checkbox" aria-label={`${u.name} in ${g.name}`} checked={u.groups.includes(g.key)}
                disabled={u.name === userName.value && g.key === 'admins'} onChange={(e) => void setMember(u, g.key, e.currentTarget.checked)} /></td>
            ))}</tr>
          ))}</tbody>
        </table></div>
      </Section>
    </>
  );
}
