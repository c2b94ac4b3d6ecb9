// Users, groups and keys of an OctoPrint installation in Gantry's terms: users.yaml (file versions 1 and 2) with their
// password hashes as they are, groups.yaml (or the built-in defaults), personal and application keys.
import { join } from 'node:path';
import { USERNAME_PATTERN, USER_SETTINGS_BOUNDS, groupTextProblem, type UserRecord, type GroupRecord } from '../access/user-records.ts';
import { jsonBoundsViolation } from '../core/bounded-json.ts';
import type { AppKey } from '../access/appkeys.ts';
import { permissionByKey } from '../access/permissions.ts';
import { legacySha512Hash, isImportedHash, importedHashProblem } from '../access/imported-hash.ts';
import { readYaml, labelOf, type OctoPrintSource, type YamlFile } from './source.ts';
import { isPlain } from '../core/plain.ts';
import { shown } from '../core/text.ts';
import type { ImportReport } from './report.ts';

export type ImportedGroup = Omit<GroupRecord, 'removable' | 'changeable' | 'toggleable'>;

export interface AccessPlan {
  users: UserRecord[];
  /** Groups to create or update (custom groups, and the stored permissions of `users` and `guests`). */
  groups: ImportedGroup[];
  appKeys: AppKey[];
  globalKey: string | null;
}

const BUILTIN = new Set(['admins', 'users', 'readonly', 'guests']);
/** OctoPrint ignores stored entries of these and applies its built-in sets; so does Gantry. */
const FIXED = new Set(['admins', 'readonly']);
const API_KEY = /^[A-Za-z0-9_-]{8,128}$/;

function stringList(f: YamlFile, path: (string | number)[], v: unknown): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw f.error(path, 'must be a list of names');
  return v as string[];
}

function knownPermissions(list: string[], where: string, report: ImportReport): string[] {
  const out: string[] = [];
  for (const p of list) {
    if (permissionByKey(p)) out.push(p);
    else report.skip(`${where}: permission ${p}`, 'Gantry has no such permission (an OctoPrint plugin\'s)');
  }
  return out;
}

function readGroups(f: YamlFile | undefined, report: ImportReport): ImportedGroup[] {
  if (!f || f.value === null || f.value === undefined) return [];
  if (!isPlain(f.value)) throw f.error([], 'must be a mapping with a `groups` section');
  const root = f.value;
  // Version 2 nests the groups under `groups`; an older file is the map itself.
  const groups = 'groups' in root ? root.groups : root;
  const base = 'groups' in root ? ['groups'] : [];
  if (!isPlain(groups)) throw f.error(base, 'must be a mapping of groups');
  const out: ImportedGroup[] = [];
  for (const [key, rec] of Object.entries(groups)) {
    if (key === '_version' || key === 'tracked') continue;
    const path = [...base, key];
    if (!isPlain(rec)) throw f.error(path, 'must be a mapping (name, permissions, subgroups, default)');
    if (FIXED.has(key)) {
      report.skip(`group ${key} (stored permissions)`, 'a built-in group that cannot be changed: Gantry\'s built-in permissions apply, as they do in OctoPrint');
      continue;
    }
    const permissions = knownPermissions(stringList(f, [...path, 'permissions'], rec.permissions), `group ${key}`, report);
    const subgroups = stringList(f, [...path, 'subgroups'], rec.subgroups);
    if (rec.default !== undefined && typeof rec.default !== 'boolean') throw f.error([...path, 'default'], 'must be true or false');
    const name = typeof rec.name === 'string' ? rec.name : BUILTIN.has(key) ? builtinName(key) : key;
    const description = typeof rec.description === 'string' ? rec.description : BUILTIN.has(key) ? builtinDescription(key) : '';
    // Held to the bounds of a group made through the API: a key of a megabyte would be one in every URL and form.
    const problem = groupTextProblem({ key, name, description });
    if (problem) {
      report.skip(`group ${shown(key)}`, problem);
      continue;
    }
    out.push({
      key,
      name,
      description,
      permissions: key === 'guests' ? permissions.filter((p) => !permissionByKey(p)?.dangerous) : permissions,
      subgroups,
      default: rec.default === true,
    });
  }
  const keys = new Set([...out.map((g) => g.key), ...BUILTIN]);
  for (const g of out) {
    const kept = g.subgroups.filter((s) => keys.has(s) && s !== g.key && s !== 'guests');
    for (const s of g.subgroups) if (!kept.includes(s)) report.skip(`group ${g.key}: subgroup ${shown(s)}`, 'unknown or not usable as a subgroup');
    g.subgroups = kept;
  }
  return out;
}

// Maps, not object literals: a group key from the file may be "constructor", which an object would answer.
const BUILTIN_NAMES = new Map([['users', 'Operator'], ['guests', 'Guests']]);
const BUILTIN_DESCRIPTIONS = new Map([['users', 'Group to gain operator access'], ['guests', 'Anyone who is not currently logged in']]);
const builtinName = (key: string): string => BUILTIN_NAMES.get(key) ?? key;
const builtinDescription = (key: string): string => BUILTIN_DESCRIPTIONS.get(key) ?? '';

function passwordHash(f: YamlFile, path: string[], raw: unknown, salt: string | undefined, user: string, report: ImportReport): string {
  if (typeof raw !== 'string' || raw === '') throw f.error([...path, 'password'], 'missing password hash');
  if (/^[0-9a-fA-F]{128}$/.test(raw)) {
    if (salt === undefined) {
      report.note(`user ${user}: legacy SHA-512 password hash but config.yaml has no accessControl.salt; the password cannot be checked — set a new one (gantry user password ${user} --password …)`);
    }
    return legacySha512Hash(salt ?? '', raw);
  }
  if (!isImportedHash(raw)) {
    report.note(`user ${user}: password hash of an unknown kind; the user cannot log in with a password until one is set`);
    return raw;
  }
  // A hash states its own cost: one beyond the bound is never checked (a crafted one made a failed login cost 1 GB).
  const problem = importedHashProblem(raw);
  if (problem) {
    report.note(`user ${user}: password hash refused (${problem}); the user cannot log in with a password until one is set (gantry user password ${user} --password …)`);
  }
  return raw;
}

/** A user's settings as the users API bounds them; beyond that they are left out (reported), the user kept. */
function boundedSettings(f: YamlFile, user: string, settings: Record<string, unknown>, report: ImportReport): Record<string, unknown> {
  const problem = jsonBoundsViolation(settings, USER_SETTINGS_BOUNDS);
  if (!problem) return settings;
  report.skip(`${f.file}: ${user}.settings`, `${problem}; the user starts with default settings`);
  return {};
}

function readUsers(f: YamlFile | undefined, salt: string | undefined, groupKeys: Set<string>, report: ImportReport): UserRecord[] {
  if (!f || f.value === null || f.value === undefined) return [];
  if (!isPlain(f.value)) throw f.error([], 'does not contain a valid map of users');
  const out: UserRecord[] = [];
  for (const [name, rec] of Object.entries(f.value)) {
    if (name === '_version') continue;
    const path = [name];
    if (!isPlain(rec)) throw f.error(path, 'must be a mapping (password, active, apikey, groups, …)');
    if (name.startsWith('_')) {
      report.skip(`user ${shown(name)}`, 'names starting with "_" are reserved');
      continue;
    }
    // The users API's rule: a name is also a file and URL path segment elsewhere (`../../evil`, NUL, 1,000 characters).
    if (!USERNAME_PATTERN.test(name)) {
      report.skip(`${f.file}: user ${shown(name)}`, 'invalid user name (1 to 64 letters, digits, _ . @ or -, as the users API allows)');
      continue;
    }
    if (rec.active !== undefined && typeof rec.active !== 'boolean') throw f.error([...path, 'active'], 'must be true or false');
    if (rec.apikey !== undefined && rec.apikey !== null && (typeof rec.apikey !== 'string' || !API_KEY.test(rec.apikey))) {
      throw f.error([...path, 'apikey'], 'must be an API key (letters and digits) or null');
    }
    if (rec.settings !== undefined && rec.settings !== null && !isPlain(rec.settings)) throw f.error([...path, 'settings'], 'must be a mapping');
    let groups: string[];
    if (rec.groups !== undefined) groups = stringList(f, [...path, 'groups'], rec.groups);
    else {
      // Version 1: groups derived from the roles, as OctoPrint migrates them.
      const roles = stringList(f, [...path, 'roles'], rec.roles);
      groups = roles.includes('admin') ? ['admins', 'users'] : ['users'];
    }
    const keptGroups = groups.filter((g) => groupKeys.has(g) && g !== 'guests');
    for (const g of groups) if (!keptGroups.includes(g)) report.skip(`user ${name}: group ${shown(g)}`, 'no such group');
    out.push({
      name,
      passwordHash: passwordHash(f, path, rec.password, salt, name, report),
      active: rec.active !== false,
      groups: keptGroups,
      permissions: knownPermissions(stringList(f, [...path, 'permissions'], rec.permissions), `user ${name}`, report),
      apikey: typeof rec.apikey === 'string' ? rec.apikey : null,
      settings: isPlain(rec.settings) ? boundedSettings(f, name, rec.settings, report) : {},
    });
  }
  return out;
}

function readAppKeys(f: YamlFile | undefined, users: Set<string>, report: ImportReport): AppKey[] {
  if (!f || f.value === null || f.value === undefined) return [];
  if (!isPlain(f.value)) throw f.error([], 'must be a mapping of user names to key lists');
  const out: AppKey[] = [];
  for (const [user, list] of Object.entries(f.value)) {
    if (!Array.isArray(list)) throw f.error([user], 'must be a list of {api_key, app_id}');
    list.forEach((e: unknown, i) => {
      if (!isPlain(e) || typeof e.api_key !== 'string' || !API_KEY.test(e.api_key) || typeof e.app_id !== 'string') {
        throw f.error([user, i], 'must be {api_key, app_id}');
      }
      if (!users.has(user)) report.skip(`app key "${e.app_id}" of ${user}`, 'its user does not exist (OctoPrint ignores it too)');
      else out.push({ userId: user, appId: e.app_id, apiKey: e.api_key });
    });
  }
  return out;
}

export async function readAccess(src: OctoPrintSource, report: ImportReport): Promise<AccessPlan> {
  const root = (src.config?.value ?? {}) as Record<string, unknown>;
  const ac = isPlain(root.accessControl) ? root.accessControl : {};
  const salt = typeof ac.salt === 'string' ? ac.salt : undefined;
  const api = isPlain(root.api) ? root.api : {};
  if (api.key !== undefined && api.key !== null && (typeof api.key !== 'string' || !API_KEY.test(api.key))) {
    throw src.config!.error(['api', 'key'], 'must be an API key or null');
  }
  const groupsFile = await readYaml(src.folders.groups, labelOf(src, src.folders.groups));
  const groups = readGroups(groupsFile, report);
  const groupKeys = new Set([...BUILTIN, ...groups.map((g) => g.key)]);
  const users = readUsers(await readYaml(src.folders.users, labelOf(src, src.folders.users)), salt, groupKeys, report);
  const keysPath = join(src.folders.data, 'appkeys', 'keys.yaml');
  const appKeys = readAppKeys(await readYaml(keysPath, labelOf(src, keysPath)), new Set(users.map((u) => u.name)), report);
  return { users, groups, appKeys, globalKey: typeof api.key === 'string' ? api.key : null };
}
