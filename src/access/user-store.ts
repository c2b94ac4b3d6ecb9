// Users and groups: records, effective permissions, persistence in users.yaml / groups.yaml (atomic writes).
import { stringify } from 'yaml';
import { readRecordFile } from './yaml-records.ts';
import { writeFileAtomic } from '../core/atomic-file.ts';
import { conflict, invalid, notFound, forbidden } from '../core/errors.ts';
import { PERMISSIONS, permissionByKey } from './permissions.ts';
import { hashPassword, verifyPassword } from './password.ts';
import { generateApiKey, safeEqual } from './keys.ts';

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

export class UserStore {
  private users = new Map<string, UserRecord>();
  private groups = new Map<string, GroupRecord>();
  private changeListeners: Array<(name: string) => void> = [];
  private groupListeners: Array<(key: string) => void> = [];
  /** Names being created: hashing a password takes ~90 ms, and a second create of the same name meanwhile is a conflict. */
  private creating = new Set<string>();
  /** users.yaml existed at load (even empty): only its absence means a first run. */
  usersFileFound = false;

  constructor(readonly usersPath: string, private readonly groupsPath: string) {}

  async load(): Promise<void> {
    const users = await readRecordFile(this.usersPath);
    this.usersFileFound = users.found;
    this.users.clear();
    for (const [name, rec] of users.records as Map<string, Partial<UserRecord>>) {
      this.users.set(name, {
        name,
        passwordHash: String(rec.passwordHash ?? ''),
        active: rec.active !== false,
        groups: Array.isArray(rec.groups) ? rec.groups.map(String) : ['users'],
        permissions: Array.isArray(rec.permissions) ? rec.permissions.map(String) : [],
        apikey: typeof rec.apikey === 'string' ? rec.apikey : null,
        settings: (rec.settings && typeof rec.settings === 'object' ? rec.settings : {}) as Record<string, unknown>,
      });
    }
    const groups = await readRecordFile(this.groupsPath);
    this.groups.clear();
    for (const g of defaultGroups()) this.groups.set(g.key, g);
    for (const [key, rec] of groups.records as Map<string, Partial<GroupRecord>>) {
      const base = this.groups.get(key);
      this.groups.set(key, {
        key,
        name: String(rec.name ?? base?.name ?? key),
        description: String(rec.description ?? base?.description ?? ''),
        permissions: Array.isArray(rec.permissions) ? rec.permissions.map(String) : base?.permissions ?? [],
        subgroups: Array.isArray(rec.subgroups) ? rec.subgroups.map(String) : base?.subgroups ?? [],
        default: typeof rec.default === 'boolean' ? rec.default : base?.default ?? false,
        removable: base ? base.removable : true,
        changeable: base ? base.changeable : true,
        toggleable: base ? base.toggleable : true,
      });
    }
  }

  /** Called with the user name whenever a user's record changes (push channel sends reauthRequired). */
  onUserChanged(fn: (name: string) => void): () => void {
    this.changeListeners.push(fn);
    return () => { this.changeListeners = this.changeListeners.filter((l) => l !== fn); };
  }

  /** Called with the group key whenever a group changes or is removed (guests: anonymous sockets must re-auth). */
  onGroupChanged(fn: (key: string) => void): () => void {
    this.groupListeners.push(fn);
    return () => { this.groupListeners = this.groupListeners.filter((l) => l !== fn); };
  }

  private notifyGroup(key: string): void {
    for (const l of this.groupListeners) l(key);
  }

  private notify(name: string): void {
    for (const l of this.changeListeners) l(name);
  }

  private async saveUsers(): Promise<void> {
    const out: Record<string, Omit<UserRecord, 'name'>> = {};
    for (const u of this.users.values()) {
      const { name: _name, ...rest } = u;
      out[u.name] = rest;
    }
    await writeFileAtomic(this.usersPath, stringify(out), 0o600);
  }

  private async saveGroups(): Promise<void> {
    const out: Record<string, Omit<GroupRecord, 'key'>> = {};
    for (const g of this.groups.values()) {
      const { key: _key, ...rest } = g;
      out[g.key] = rest;
    }
    await writeFileAtomic(this.groupsPath, stringify(out), 0o600);
  }

  // --- groups ---
  listGroups(): GroupRecord[] { return [...this.groups.values()]; }
  getGroup(key: string): GroupRecord | undefined { return this.groups.get(key); }

  /** Permission keys a group grants, sub-groups included (cycle-safe). */
  groupPermissions(key: string, seen = new Set<string>()): Set<string> {
    const out = new Set<string>();
    const g = this.groups.get(key);
    if (!g || seen.has(key)) return out;
    seen.add(key);
    for (const p of g.permissions) out.add(p);
    for (const s of g.subgroups) for (const p of this.groupPermissions(s, seen)) out.add(p);
    return out;
  }

  async addGroup(g: Omit<GroupRecord, 'removable' | 'changeable' | 'toggleable'>): Promise<void> {
    if (this.groups.has(g.key)) throw conflict('A group with this key already exists');
    this.checkGroupRefs(g.key, g.permissions, g.subgroups);
    this.groups.set(g.key, { ...g, removable: true, changeable: true, toggleable: true });
    await this.saveGroups();
  }

  async updateGroup(key: string, patch: Partial<Pick<GroupRecord, 'permissions' | 'subgroups' | 'default' | 'description'>>): Promise<void> {
    const g = this.groups.get(key);
    if (!g) throw notFound('Unknown group');
    if (!g.changeable) throw forbidden('This group cannot be changed');
    const next = { ...g, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) } as GroupRecord;
    this.checkGroupRefs(key, next.permissions, next.subgroups);
    if (key === 'guests') next.permissions = next.permissions.filter((p) => !permissionByKey(p)?.dangerous);
    this.groups.set(key, next);
    await this.saveGroups();
    this.notifyGroup(key);
    for (const u of this.users.values()) if (u.groups.includes(key)) this.notify(u.name);
  }

  async removeGroup(key: string): Promise<void> {
    const g = this.groups.get(key);
    if (!g) throw notFound('Unknown group');
    if (!g.removable) throw forbidden('This group cannot be removed');
    this.groups.delete(key);
    for (const other of this.groups.values()) other.subgroups = other.subgroups.filter((s) => s !== key);
    const affected: string[] = [];
    for (const u of this.users.values()) {
      if (u.groups.includes(key)) { u.groups = u.groups.filter((x) => x !== key); affected.push(u.name); }
    }
    await this.saveGroups();
    if (affected.length) await this.saveUsers();
    this.notifyGroup(key);
    for (const n of affected) this.notify(n);
  }

  private checkGroupRefs(key: string, permissions: string[], subgroups: string[]): void {
    for (const p of permissions) if (!permissionByKey(p)) throw invalid(`Unknown permission: ${p}`);
    for (const s of subgroups) {
      const sg = this.groups.get(s);
      if (!sg || s === key) throw invalid(`Unknown group: ${s}`);
      if (!sg.toggleable) throw invalid(`Group ${s} cannot be used as a subgroup`);
    }
  }

  // --- users ---
  listUsers(): UserRecord[] { return [...this.users.values()]; }
  getUser(name: string): UserRecord | undefined { return this.users.get(name); }
  hasUsers(): boolean { return this.users.size > 0; }

  /** Effective permission keys of a user (own + groups + sub-groups). */
  userPermissions(u: UserRecord): Set<string> {
    const out = new Set(u.permissions);
    for (const g of u.groups) for (const p of this.groupPermissions(g)) out.add(p);
    return out;
  }

  async addUser(opts: { name: string; password: string; active?: boolean; groups?: string[]; permissions?: string[] }): Promise<UserRecord> {
    if (!USERNAME_PATTERN.test(opts.name) || opts.name.startsWith('_')) throw invalid('Invalid user name');
    if (this.users.has(opts.name) || this.creating.has(opts.name)) throw conflict('User already exists');
    if (!opts.password) throw invalid('A password is required');
    const groups = opts.groups ?? [...this.groups.values()].filter((g) => g.default).map((g) => g.key);
    this.checkUserRefs(groups, opts.permissions ?? []);
    this.creating.add(opts.name);
    try {
      const rec: UserRecord = {
        name: opts.name,
        passwordHash: await hashPassword(opts.password),
        active: opts.active ?? true,
        groups,
        permissions: opts.permissions ?? [],
        apikey: null,
        settings: {},
      };
      this.users.set(rec.name, rec);
      await this.saveUsers();
      return rec;
    } finally {
      this.creating.delete(opts.name);
    }
  }

  async updateUser(name: string, patch: Partial<Pick<UserRecord, 'active' | 'groups' | 'permissions'>>): Promise<UserRecord> {
    const u = this.users.get(name);
    if (!u) throw notFound('Unknown user');
    if (patch.groups || patch.permissions) this.checkUserRefs(patch.groups ?? u.groups, patch.permissions ?? u.permissions);
    if (patch.active !== undefined) u.active = patch.active;
    if (patch.groups) u.groups = patch.groups;
    if (patch.permissions) u.permissions = patch.permissions;
    await this.saveUsers();
    this.notify(name);
    return u;
  }

  private checkUserRefs(groups: string[], permissions: string[]): void {
    for (const g of groups) {
      const rec = this.groups.get(g);
      if (!rec) throw invalid(`Unknown group: ${g}`);
      if (!rec.toggleable) throw invalid(`Group ${g} cannot be assigned to users`);
    }
    for (const p of permissions) if (!permissionByKey(p)) throw invalid(`Unknown permission: ${p}`);
  }

  async removeUser(name: string): Promise<void> {
    if (!this.users.delete(name)) throw notFound('Unknown user');
    await this.saveUsers();
    this.notify(name);
  }

  async setPassword(name: string, password: string): Promise<void> {
    const u = this.users.get(name);
    if (!u) throw notFound('Unknown user');
    if (!password) throw invalid('A password is required');
    u.passwordHash = await hashPassword(password);
    await this.saveUsers();
    this.notify(name);
  }

  async checkPassword(name: string, password: string): Promise<UserRecord | undefined> {
    const u = this.users.get(name);
    if (!u) {
      // Spend comparable time on unknown users so timing does not reveal which names exist.
      await verifyPassword(password, 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=');
      return undefined;
    }
    return (await verifyPassword(password, u.passwordHash)) ? u : undefined;
  }

  async setSettings(name: string, settings: Record<string, unknown>): Promise<void> {
    const u = this.users.get(name);
    if (!u) throw notFound('Unknown user');
    u.settings = settings;
    await this.saveUsers();
  }

  async generateUserKey(name: string): Promise<string> {
    const u = this.users.get(name);
    if (!u) throw notFound('Unknown user');
    u.apikey = generateApiKey();
    await this.saveUsers();
    return u.apikey;
  }

  async deleteUserKey(name: string): Promise<void> {
    const u = this.users.get(name);
    if (!u) throw notFound('Unknown user');
    u.apikey = null;
    await this.saveUsers();
  }

  findByApiKey(key: string): UserRecord | undefined {
    let found: UserRecord | undefined;
    // Compare against every key so the time taken does not depend on which user matched.
    for (const u of this.users.values()) if (u.apikey && safeEqual(u.apikey, key)) found = u;
    return found;
  }
}
