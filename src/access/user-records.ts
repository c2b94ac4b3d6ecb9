// Users and groups as stored: the records, the built-in groups, name and settings bounds, and their YAML documents.
import { PERMISSIONS } from './permissions.ts';
import { setOwn } from '../core/plain.ts';
import { STORED_JSON_BOUNDS } from '../core/bounded-json.ts';

export interface GroupRecord {
  key: string;
  name: string;
  description: string;
  permissions: string[];
  subgroups: string[];
  default: boolean;
  removable: boolean;
  changeable: boolean;
  toggleable: boolean;
}

export interface UserRecord {
  name: string;
  passwordHash: string;
  active: boolean;
  groups: string[];
  permissions: string[];
  apikey: string | null;
  settings: Record<string, unknown>;
}

const defaultPerms = (group: string) => PERMISSIONS.filter((p) => p.defaultGroups.includes(group)).map((p) => p.key);

export function defaultGroups(): GroupRecord[] {
  return [
    { key: 'admins', name: 'Admins', description: 'Administrators', permissions: defaultPerms('admins'), subgroups: [],
      default: false, removable: false, changeable: false, toggleable: true },
    { key: 'users', name: 'Operator', description: 'Group to gain operator access', permissions: defaultPerms('users'), subgroups: [],
      default: true, removable: false, changeable: true, toggleable: true },
    { key: 'guests', name: 'Guests', description: 'Anyone who is not currently logged in', permissions: [], subgroups: [],
      default: false, removable: false, changeable: true, toggleable: false },
    { key: 'readonly', name: 'Read-only Access', description: 'Group to gain read-only access', permissions: defaultPerms('readonly'), subgroups: [],
      default: false, removable: false, changeable: false, toggleable: true },
  ];
}

export const USERNAME_PATTERN = /^[A-Za-z0-9_.@-]{1,64}$/;

/** Group texts stay what a form shows and a URL carries: key and name one short line, the description a paragraph. */
export const GROUP_TEXT_BOUNDS = { key: 64, name: 128, description: 2048 } as const;

/** What is wrong with a group's key, name or description (those given), or undefined. */
export function groupTextProblem(g: { key?: string; name?: string; description?: string }): string | undefined {
  for (const field of ['key', 'name', 'description'] as const) {
    const v = g[field];
    if (v === undefined) continue;
    if (v.length > GROUP_TEXT_BOUNDS[field]) return `Group ${field} too long (at most ${GROUP_TEXT_BOUNDS[field]} characters)`;
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(field === 'description' ? v.replace(/[\r\n\t]/g, '') : v)) return `Group ${field} must not contain control characters`;
  }
  return undefined;
}

/** A user's stored settings stay small and shallow enough for YAML, JSON and the UI to handle (OctoPrint's are tiny). */
export const USER_SETTINGS_BOUNDS = STORED_JSON_BOUNDS;

/** A users.yaml entry as a record; missing or mistyped keys get the values a new user would have. */
export function userFromFile(name: string, rec: Partial<UserRecord>): UserRecord {
  return {
    name,
    passwordHash: String(rec.passwordHash ?? ''),
    active: rec.active !== false,
    groups: Array.isArray(rec.groups) ? rec.groups.map(String) : ['users'],
    permissions: Array.isArray(rec.permissions) ? rec.permissions.map(String) : [],
    apikey: typeof rec.apikey === 'string' ? rec.apikey : null,
    settings: (rec.settings && typeof rec.settings === 'object' ? rec.settings : {}) as Record<string, unknown>,
  };
}

/** A groups.yaml entry as a record; a built-in group (`base`) keeps its flags and fills what the file leaves out. */
export function groupFromFile(key: string, rec: Partial<GroupRecord>, base: GroupRecord | undefined): GroupRecord {
  return {
    key,
    name: String(rec.name ?? base?.name ?? key),
    description: String(rec.description ?? base?.description ?? ''),
    permissions: Array.isArray(rec.permissions) ? rec.permissions.map(String) : base?.permissions ?? [],
    subgroups: Array.isArray(rec.subgroups) ? rec.subgroups.map(String) : base?.subgroups ?? [],
    default: typeof rec.default === 'boolean' ? rec.default : base?.default ?? false,
    removable: base ? base.removable : true,
    changeable: base ? base.changeable : true,
    toggleable: base ? base.toggleable : true,
  };
}

export function usersDocument(users: Map<string, UserRecord>): Record<string, Omit<UserRecord, 'name'>> {
  const out: Record<string, Omit<UserRecord, 'name'>> = {};
  for (const u of users.values()) {
    const { name: _name, ...rest } = u;
    setOwn(out, u.name, rest);
  }
  return out;
}

export function groupsDocument(groups: Map<string, GroupRecord>): Record<string, Omit<GroupRecord, 'key'>> {
  const out: Record<string, Omit<GroupRecord, 'key'>> = {};
  for (const g of groups.values()) {
    const { key: _key, ...rest } = g;
    setOwn(out, g.key, rest);
  }
  return out;
}
