// OctoPrint wire shapes of permissions, groups, users and `needs`, built from the access domain records.
import { PERMISSIONS, permissionByKey } from '../access/permissions.ts';
import type { UserStore } from '../access/user-store.ts';
import type { UserRecord, GroupRecord } from '../access/user-records.ts';
import type { Identity } from '../access/identity.ts';
import { GLOBAL_KEY_USER } from '../access/access-service.ts';
import { Type } from '../config/typebox.ts';
import type { Static } from 'typebox';
import { AnyJson, Nullable } from './schema-kit.ts';

// Response schemas of these records. Every field a record can lack is optional (anonymous and `_api` identities
// carry fewer); user settings are whatever the user stored.
const Strings = Type.Array(Type.String());
export const NeedsSchema = Type.Object({ role: Type.Optional(Strings), group: Type.Optional(Strings) });

export const PermissionSchema = Type.Object({
  key: Type.String(), name: Type.Optional(Type.String()), dangerous: Type.Optional(Type.Boolean()), default_groups: Type.Optional(Strings),
  description: Type.Optional(Type.String()), needs: Type.Optional(NeedsSchema), plugin: Type.Optional(Type.String()),
});

export const GroupSchema = Type.Object({
  key: Type.String(), name: Type.String(), description: Type.String(), permissions: Strings, subgroups: Strings, needs: NeedsSchema,
  default: Type.Boolean(), removable: Type.Boolean(), changeable: Type.Boolean(), toggleable: Type.Boolean(), dangerous: Type.Boolean(),
});

const identityFields = {
  name: Type.Optional(Type.String()), active: Type.Optional(Type.Boolean()), permissions: Type.Optional(Strings), groups: Type.Optional(Strings),
  needs: NeedsSchema, apikey: Type.Optional(Nullable('string')), settings: Type.Optional(AnyJson), admin: Type.Optional(Type.Boolean()),
  user: Type.Optional(Type.Boolean()), roles: Type.Optional(Strings),
};
export const UserSchema = Type.Object({
  name: Type.String(), active: Type.Boolean(), permissions: Strings, groups: Strings, needs: NeedsSchema, apikey: Nullable('string'),
  settings: AnyJson, admin: Type.Boolean(), user: Type.Boolean(), roles: Strings,
});
/** A stored user, the global key's `_api` or the anonymous guest (only `needs`), as /api/login answers about them. */
export const IdentitySchema = Type.Object(identityFields);
export const PermissionListSchema = Type.Object({ permissions: Type.Array(PermissionSchema) });
export const GroupListSchema = Type.Object({ groups: Type.Array(GroupSchema) });
export const UserListSchema = Type.Object({ users: Type.Array(UserSchema) });

export type Needs = Static<typeof NeedsSchema>;
export type GroupWire = Static<typeof GroupSchema>;
export type UserWire = Static<typeof UserSchema>;
export type IdentityWire = Static<typeof IdentitySchema>;

/** Role needs of a permission set, in catalogue order; ADMIN stands for every permission. */
function roleNeeds(perms: Iterable<string>): string[] {
  const set = new Set(perms);
  const all = set.has('ADMIN');
  return PERMISSIONS.filter((p) => all || set.has(p.key)).flatMap((p) => p.roles);
}

function needs(roles: string[], groups: string[]): Needs {
  const out: Needs = {};
  if (roles.length) out.role = [...new Set(roles)];
  if (groups.length) out.group = [...new Set(groups)];
  return out;
}

/** A group and every group reachable through its sub-groups. */
function groupClosure(users: UserStore, keys: readonly string[], seen = new Set<string>()): string[] {
  for (const k of keys) {
    if (seen.has(k)) continue;
    seen.add(k);
    groupClosure(users, users.getGroup(k)?.subgroups ?? [], seen);
  }
  return [...seen];
}

export function permissionRecord(key: string): Static<typeof PermissionSchema> {
  const p = permissionByKey(key);
  if (!p) return { key };
  return {
    key: p.key, name: p.name, dangerous: p.dangerous, default_groups: p.defaultGroups, description: p.description,
    needs: { role: p.roles }, ...(p.plugin ? { plugin: p.plugin } : {}),
  };
}

function groupDangerous(users: UserStore, g: GroupRecord): boolean {
  return [...users.groupPermissions(g.key)].some((k) => permissionByKey(k)?.dangerous);
}

export function groupRecord(users: UserStore, g: GroupRecord): GroupWire {
  return {
    key: g.key, name: g.name, description: g.description,
    permissions: [...g.permissions], subgroups: [...g.subgroups],
    needs: needs(roleNeeds(users.groupPermissions(g.key)), groupClosure(users, [g.key])),
    default: g.default, removable: g.removable, changeable: g.changeable, toggleable: g.toggleable,
    dangerous: groupDangerous(users, g),
  };
}

export function userRecord(users: UserStore, u: UserRecord): UserWire {
  const effective = users.userPermissions(u);
  const admin = effective.has('ADMIN');
  return {
    name: u.name, active: u.active, permissions: [...u.permissions], groups: [...u.groups],
    needs: needs(roleNeeds(effective), groupClosure(users, u.groups)),
    apikey: u.apikey, settings: u.settings,
    admin, user: true, roles: admin ? ['user', 'admin'] : ['user'],
  };
}

/** The record of whoever the identity is: a stored user, the global key's `_api`, or the anonymous guest. */
export function identityRecord(users: UserStore, id: Identity): IdentityWire {
  if (id.isAnonymous) return { needs: needs(roleNeeds(id.permissions), ['guests']) };
  const u = id.name === undefined ? undefined : users.getUser(id.name);
  if (u) return userRecord(users, u);
  const admin = id.has('ADMIN');
  return {
    name: id.name ?? GLOBAL_KEY_USER, active: true, permissions: [], groups: [...id.groups],
    needs: needs(roleNeeds(id.permissions), [...id.groups]),
    apikey: null, settings: {}, admin, user: true, roles: admin ? ['user', 'admin'] : ['user'],
  };
}

/** Effective permission keys of an identity in catalogue order (`/api/currentuser`). */
export function effectivePermissionKeys(id: Identity): string[] {
  return PERMISSIONS.filter((p) => id.has(p.key)).map((p) => p.key);
}
