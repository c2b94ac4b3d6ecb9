// Users and groups: the live tables, effective permissions, one change at a time, persistence in users.yaml / groups.yaml.
import { stringify } from 'yaml';
import { readRecordFile } from './yaml-records.ts';
import { writeFileAtomic } from '../core/atomic-file.ts';
import { conflict, invalid, notFound, forbidden } from '../core/errors.ts';
import { permissionByKey } from './permissions.ts';
import {
  USERNAME_PATTERN, USER_SETTINGS_BOUNDS, groupTextProblem, defaultGroups, groupFromFile, groupsDocument, userFromFile, usersDocument,
  type GroupRecord, type UserRecord,
} from './user-records.ts';
import { hashPassword, verifyPassword, needsRehash } from './password.ts';
import { SecretProbe, generateApiKey } from './keys.ts';
import { assertBoundedJson } from '../core/bounded-json.ts';
import { Listeners } from '../core/listeners.ts';
import { shown } from '../core/text.ts';

// The records live in user-records.ts; most of the host imports them from here.

/** The state one change works on: copies of both tables, and which files it dirtied. */
interface Draft {
  users: Map<string, UserRecord>;
  groups: Map<string, GroupRecord>;
  usersChanged: boolean;
  groupsChanged: boolean;
}

export class UserStore {
  private users = new Map<string, UserRecord>();
  private groups = new Map<string, GroupRecord>();
  private readonly changeListeners = new Listeners<[string]>();
  /** Changes run one at a time, so each works on the state the previous one left (no lost updates, one winner). */
  private queue: Promise<unknown> = Promise.resolve();
  private readonly groupListeners = new Listeners<[string]>();
  /** Names being created: hashing a password takes ~90 ms, and a second create of the same name meanwhile is a conflict. */
  private creating = new Set<string>();
  /** users.yaml existed at load (even empty): only its absence means a first run. */
  usersFileFound = false;

  constructor(readonly usersPath: string, private readonly groupsPath: string) {}

  async load(): Promise<void> {
    const users = await readRecordFile(this.usersPath);
    this.usersFileFound = users.found;
    this.users.clear();
    for (const [name, rec] of users.records as Map<string, Partial<UserRecord>>) this.users.set(name, userFromFile(name, rec));
    const groups = await readRecordFile(this.groupsPath);
    this.groups.clear();
    for (const g of defaultGroups()) this.groups.set(g.key, g);
    for (const [key, rec] of groups.records as Map<string, Partial<GroupRecord>>) this.groups.set(key, groupFromFile(key, rec, this.groups.get(key)));
  }

  /** Called with the user name whenever a user's record changes (push channel sends reauthRequired). */
  onUserChanged(fn: (name: string) => void): () => void {
    return this.changeListeners.add(fn);
  }

  /** Called with the group key whenever a group changes or is removed (guests: anonymous sockets must re-auth). */
  onGroupChanged(fn: (key: string) => void): () => void {
    return this.groupListeners.add(fn);
  }

  private notifyGroup(key: string): void {
    this.groupListeners.emit(key);
  }

  private notify(name: string): void {
    this.changeListeners.emit(name);
  }

  /**
   * Applies one change: `fn` edits copies of the tables (marking what it dirtied), the copies are written to disk, and
   * only then do they replace the tables in memory. A change that throws — while validating, serialising or writing —
   * leaves memory and disk exactly as they were, so what is in memory is always what a restart would load.
   */
  private change<T>(fn: (draft: Draft) => T): Promise<T> {
    const run = async (): Promise<T> => {
      const draft: Draft = {
        users: new Map([...this.users].map(([k, v]) => [k, structuredClone(v)])),
        groups: new Map([...this.groups].map(([k, v]) => [k, structuredClone(v)])),
        usersChanged: false,
        groupsChanged: false,
      };
      const result = fn(draft);
      // Serialise both before writing either, so a value YAML cannot take fails before anything is on disk.
      const usersText = draft.usersChanged ? stringify(usersDocument(draft.users)) : undefined;
      const groupsText = draft.groupsChanged ? stringify(groupsDocument(draft.groups)) : undefined;
      if (groupsText !== undefined) await writeFileAtomic(this.groupsPath, groupsText, 0o600);
      if (usersText !== undefined) {
        try {
          await writeFileAtomic(this.usersPath, usersText, 0o600);
        } catch (err) {
          if (groupsText !== undefined) await writeFileAtomic(this.groupsPath, stringify(groupsDocument(this.groups)), 0o600).catch(() => {});
          throw err;
        }
      }
      this.users = draft.users;
      this.groups = draft.groups;
      return result;
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => {});
    return next;
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
    const problem = groupTextProblem(g);
    if (problem) throw invalid(problem);
    await this.change((d) => {
      if (d.groups.has(g.key)) throw conflict('A group with this key already exists');
      this.checkGroupRefs(d.groups, g.key, g.permissions, g.subgroups);
      d.groups.set(g.key, { ...structuredClone(g), removable: true, changeable: true, toggleable: true });
      d.groupsChanged = true;
    });
  }

  async updateGroup(key: string, patch: Partial<Pick<GroupRecord, 'permissions' | 'subgroups' | 'default' | 'description'>>): Promise<void> {
    const problem = groupTextProblem({ description: patch.description });
    if (problem) throw invalid(problem);
    await this.change((d) => {
      const g = d.groups.get(key);
      if (!g) throw notFound('Unknown group');
      if (!g.changeable) throw forbidden('This group cannot be changed');
      const next = { ...g, ...structuredClone(Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined))) } as GroupRecord;
      this.checkGroupRefs(d.groups, key, next.permissions, next.subgroups);
      if (key === 'guests') next.permissions = next.permissions.filter((p) => !permissionByKey(p)?.dangerous);
      d.groups.set(key, next);
      d.groupsChanged = true;
    });
    this.notifyGroup(key);
    for (const u of this.users.values()) if (u.groups.includes(key)) this.notify(u.name);
  }

  async removeGroup(key: string): Promise<void> {
    const affected = await this.change((d) => {
      const g = d.groups.get(key);
      if (!g) throw notFound('Unknown group');
      if (!g.removable) throw forbidden('This group cannot be removed');
      d.groups.delete(key);
      for (const other of d.groups.values()) other.subgroups = other.subgroups.filter((s) => s !== key);
      d.groupsChanged = true;
      const names: string[] = [];
      for (const u of d.users.values()) {
        if (u.groups.includes(key)) { u.groups = u.groups.filter((x) => x !== key); names.push(u.name); }
      }
      d.usersChanged = names.length > 0;
      return names;
    });
    this.notifyGroup(key);
    for (const n of affected) this.notify(n);
  }

  private checkGroupRefs(groups: Map<string, GroupRecord>, key: string, permissions: string[], subgroups: string[]): void {
    for (const p of permissions) if (!permissionByKey(p)) throw invalid(`Unknown permission: ${shown(p)}`);
    for (const s of subgroups) {
      const sg = groups.get(s);
      if (!sg || s === key) throw invalid(`Unknown group: ${shown(s)}`);
      if (!sg.toggleable) throw invalid(`Group ${shown(s)} cannot be used as a subgroup`);
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

  /** `generatedPassword`: Gantry drew the password itself (password.ts hashes it at a lower work factor). */
  async addUser(opts: { name: string; password: string; active?: boolean; groups?: string[]; permissions?: string[]; generatedPassword?: boolean }): Promise<UserRecord> {
    if (!USERNAME_PATTERN.test(opts.name) || opts.name.startsWith('_')) throw invalid('Invalid user name');
    if (this.users.has(opts.name) || this.creating.has(opts.name)) throw conflict('User already exists');
    if (!opts.password) throw invalid('A password is required');
    // Hashed outside the queue: other changes need not wait for scrypt. A second create of the same name meanwhile is
    // a conflict at once, and the name is checked again inside the queue.
    this.creating.add(opts.name);
    try {
      const passwordHash = await hashPassword(opts.password, { generated: opts.generatedPassword });
      return await this.change((d) => {
        if (d.users.has(opts.name)) throw conflict('User already exists');
        const groups = opts.groups ? [...opts.groups] : [...d.groups.values()].filter((g) => g.default).map((g) => g.key);
        this.checkUserRefs(d.groups, groups, opts.permissions ?? []);
        const rec: UserRecord = {
          name: opts.name, passwordHash, active: opts.active ?? true, groups, permissions: [...opts.permissions ?? []], apikey: null, settings: {},
        };
        d.users.set(rec.name, rec);
        d.usersChanged = true;
        return rec;
      });
    } finally {
      this.creating.delete(opts.name);
    }
  }

  async updateUser(name: string, patch: Partial<Pick<UserRecord, 'active' | 'groups' | 'permissions'>>): Promise<UserRecord> {
    const u = await this.changeUser(name, (u, d) => {
      if (patch.groups || patch.permissions) this.checkUserRefs(d.groups, patch.groups ?? u.groups, patch.permissions ?? u.permissions);
      if (patch.active !== undefined) u.active = patch.active;
      if (patch.groups) u.groups = [...patch.groups];
      if (patch.permissions) u.permissions = [...patch.permissions];
      return u;
    });
    this.notify(name);
    return u;
  }

  /** One change to one existing user (404 when the name is unknown by the time the change runs). */
  private changeUser<T>(name: string, fn: (u: UserRecord, d: Draft) => T): Promise<T> {
    return this.change((d) => {
      const u = d.users.get(name);
      if (!u) throw notFound('Unknown user');
      const result = fn(u, d);
      d.usersChanged = true;
      return result;
    });
  }

  private checkUserRefs(known: Map<string, GroupRecord>, groups: string[], permissions: string[]): void {
    for (const g of groups) {
      const rec = known.get(g);
      if (!rec) throw invalid(`Unknown group: ${shown(g)}`);
      if (!rec.toggleable) throw invalid(`Group ${shown(g)} cannot be assigned to users`);
    }
    for (const p of permissions) if (!permissionByKey(p)) throw invalid(`Unknown permission: ${shown(p)}`);
  }

  async removeUser(name: string): Promise<void> {
    await this.change((d) => {
      if (!d.users.delete(name)) throw notFound('Unknown user');
      d.usersChanged = true;
    });
    this.notify(name);
  }

  async setPassword(name: string, password: string): Promise<void> {
    if (!this.users.has(name)) throw notFound('Unknown user');
    if (!password) throw invalid('A password is required');
    const passwordHash = await hashPassword(password);
    await this.changeUser(name, (u) => { u.passwordHash = passwordHash; });
    this.notify(name);
  }

  async checkPassword(name: string, password: string): Promise<UserRecord | undefined> {
    const u = this.users.get(name);
    if (!u) {
      // Spend comparable time on unknown users so timing does not reveal which names exist.
      await verifyPassword(password, 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=');
      return undefined;
    }
    if (!(await verifyPassword(password, u.passwordHash))) return undefined;
    // A hash imported from OctoPrint or made at other parameters (a drawn first-run password): the password is known
    // now, so store it in Gantry's own scheme at the full work factor.
    if (needsRehash(u.passwordHash)) {
      const upgraded = await hashPassword(password);
      return this.changeUser(name, (rec) => { rec.passwordHash = upgraded; return rec; });
    }
    return u;
  }

  /**
   * Adds users and groups taken over from another host (gantry import-octoprint) as they are, password hashes
   * included; existing records of the same name are replaced. References are checked like any change.
   */
  async importRecords(users: UserRecord[], groups: Array<Omit<GroupRecord, 'removable' | 'changeable' | 'toggleable'>>): Promise<void> {
    await this.change((d) => {
      for (const g of groups) {
        const base = d.groups.get(g.key);
        d.groups.set(g.key, { ...structuredClone(g), removable: base?.removable ?? true, changeable: base?.changeable ?? true, toggleable: base?.toggleable ?? true });
      }
      for (const g of groups) this.checkGroupRefs(d.groups, g.key, g.permissions, g.subgroups);
      for (const u of users) {
        this.checkUserRefs(d.groups, u.groups, u.permissions);
        d.users.set(u.name, structuredClone(u));
      }
      d.usersChanged = true;
      d.groupsChanged = true;
    });
  }

  async setSettings(name: string, settings: Record<string, unknown>): Promise<void> {
    assertBoundedJson(settings, USER_SETTINGS_BOUNDS, 'User settings');
    const copy = structuredClone(settings);
    await this.changeUser(name, (u) => { u.settings = copy; });
  }

  /** Merges `patch` over the user's settings (top-level keys replaced) against the latest state, bounded like setSettings. */
  async patchSettings(name: string, patch: Record<string, unknown>): Promise<void> {
    assertBoundedJson(patch, USER_SETTINGS_BOUNDS, 'User settings');
    const copy = structuredClone(patch);
    await this.changeUser(name, (u) => {
      const next = { ...u.settings, ...copy };
      assertBoundedJson(next, USER_SETTINGS_BOUNDS, 'User settings');
      u.settings = next;
    });
  }

  async generateUserKey(name: string): Promise<string> {
    const key = generateApiKey();
    await this.changeUser(name, (u) => { u.apikey = key; });
    return key;
  }

  async deleteUserKey(name: string): Promise<void> {
    await this.changeUser(name, (u) => { u.apikey = null; });
  }

  findByApiKey(key: string | SecretProbe): UserRecord | undefined {
    const probe = typeof key === 'string' ? new SecretProbe(key) : key;
    let found: UserRecord | undefined;
    // Compare against every key so the time taken does not depend on which user matched.
    for (const u of this.users.values()) if (u.apikey && probe.matches(u.apikey)) found = u;
    return found;
  }
}
