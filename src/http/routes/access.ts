// /api/access/*: permissions, groups and users management (and the legacy /api/users redirects).
import { Type } from '../../config/typebox.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GantryApp } from '../types.ts';
import type { AccessService } from '../../access/access-service.ts';
import { forbidden, invalid, notFound } from '../../core/errors.ts';
import { PERMISSIONS } from '../../access/permissions.ts';
import { passwordProblem } from '../../access/password.ts';
import { GENERIC_MESSAGES } from '../error-mapper.ts';
import { permissionRecord, groupRecord, userRecord, GroupListSchema, GroupSchema, PermissionListSchema, UserListSchema, UserSchema,
} from '../../octoprint/access-records.ts';
import { HtmlText, OpenObject } from '../../octoprint/schema-kit.ts';

const Strings = Type.Array(Type.String());
const KeyParams = Type.Object({ key: Type.String() });
const NameParams = Type.Object({ name: Type.String() });

const GroupCreate = Type.Object({
  key: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  permissions: Type.Optional(Strings),
  subgroups: Type.Optional(Strings),
  default: Type.Optional(Type.Boolean()),
}, { additionalProperties: true });

const GroupUpdate = Type.Object({
  description: Type.Optional(Type.String()),
  permissions: Type.Optional(Strings),
  subgroups: Type.Optional(Strings),
  default: Type.Optional(Type.Boolean()),
}, { additionalProperties: true });

const UserCreate = Type.Object({
  name: Type.Optional(Type.String()),
  password: Type.Optional(Type.String()),
  active: Type.Optional(Type.Boolean()),
  groups: Type.Optional(Strings),
  permissions: Type.Optional(Strings),
}, { additionalProperties: true });

const UserUpdate = Type.Object({
  active: Type.Optional(Type.Boolean()),
  groups: Type.Optional(Strings),
  permissions: Type.Optional(Strings),
}, { additionalProperties: true });

const PasswordChange = Type.Object({
  password: Type.Optional(Type.String()),
  current: Type.Optional(Type.String()),
}, { additionalProperties: true });

const SettingsPatch = Type.Record(Type.String(), Type.Unknown());

const Empty = Type.Object({});
/** A user's settings are whatever the user (or the web UI) stored. */
const UserSettings = OpenObject({});
const ApiKeyReply = Type.Object({ apikey: Type.String() });

/** Routes a user may call about themselves; admins about anyone. */
function requireSelfOrAdmin(request: FastifyRequest, name: string): void {
  const id = request.identity;
  if (!id.has('ADMIN') && id.name !== name) throw forbidden(GENERIC_MESSAGES[403]);
}

export function registerAccessRoutes(app: GantryApp, deps: { access: AccessService }): void {
  const { access } = deps;
  const users = access.users;
  const groupList = () => ({ groups: users.listGroups().map((g) => groupRecord(users, g)) });
  const userList = () => ({ users: users.listUsers().map((u) => userRecord(users, u)) });
  const userOr404 = (name: string) => {
    const u = users.getUser(name);
    if (!u) throw notFound(GENERIC_MESSAGES[404]);
    return u;
  };

  app.get('/api/access/permissions', { config: { access: 'anonymous' }, schema: { response: { 200: PermissionListSchema } } }, async () => ({
    permissions: PERMISSIONS.map((p) => permissionRecord(p.key)),
  }));

  // --- groups ---
  app.get('/api/access/groups', { config: { access: 'ADMIN' }, schema: { response: { 200: GroupListSchema } } }, async () => groupList());

  app.post('/api/access/groups', { config: { access: 'ADMIN' }, schema: { response: { 200: GroupListSchema }, body: GroupCreate } }, async (request) => {
    const b = request.body;
    if (!b.key) throw invalid('key is missing');
    if (!b.name) throw invalid('name is missing');
    if (!b.permissions) throw invalid('permissions are missing');
    await users.addGroup({ key: b.key, name: b.name, description: b.description ?? '', permissions: b.permissions,
      subgroups: b.subgroups ?? [], default: b.default ?? false });
    return groupList();
  });

  app.get('/api/access/groups/:key', { config: { access: 'ADMIN' }, schema: { response: { 200: GroupSchema }, params: KeyParams } }, async (request) => {
    const g = users.getGroup(request.params.key);
    if (!g) throw notFound(GENERIC_MESSAGES[404]);
    return groupRecord(users, g);
  });

  app.put('/api/access/groups/:key', { config: { access: 'ADMIN' }, schema: { response: { 200: GroupListSchema }, params: KeyParams, body: GroupUpdate } }, async (request) => {
    const { description, permissions, subgroups } = request.body;
    await users.updateGroup(request.params.key, { description, permissions, subgroups, default: request.body.default });
    return groupList();
  });

  app.delete('/api/access/groups/:key', { config: { access: 'ADMIN' }, schema: { response: { 200: GroupListSchema }, params: KeyParams } }, async (request) => {
    await users.removeGroup(request.params.key);
    return groupList();
  });

  // --- users ---
  app.get('/api/access/users', { config: { access: 'ADMIN' }, schema: { response: { 200: UserListSchema } } }, async () => userList());

  app.post('/api/access/users', { config: { access: 'ADMIN' }, schema: { response: { 200: UserListSchema }, body: UserCreate } }, async (request) => {
    const b = request.body;
    if (b.name === undefined) throw invalid('name is missing');
    if (b.password === undefined || b.password === '') throw invalid('password is missing');
    if (b.name === '' || b.name.trim() !== b.name) throw invalid('Username invalid');
    const weak = passwordProblem(b.password);
    if (weak) throw invalid(weak);
    await users.addUser({ name: b.name, password: b.password, active: b.active ?? true, groups: b.groups, permissions: b.permissions });
    return userList();
  });

  app.get('/api/access/users/:name', { config: { access: 'user' }, schema: { response: { 200: UserSchema }, params: NameParams } }, async (request) => {
    requireSelfOrAdmin(request, request.params.name);
    return userRecord(users, userOr404(request.params.name));
  });

  app.put('/api/access/users/:name', { config: { access: 'ADMIN' }, schema: { response: { 200: UserListSchema }, params: NameParams, body: UserUpdate } }, async (request) => {
    const { active, groups, permissions } = request.body;
    await users.updateUser(request.params.name, { active, groups, permissions });
    return userList();
  });

  app.delete('/api/access/users/:name', { config: { access: 'ADMIN' }, schema: { response: { 200: UserListSchema }, params: NameParams } }, async (request) => {
    await users.removeUser(request.params.name);
    return userList();
  });

  app.put('/api/access/users/:name/password', { config: { access: 'user' }, schema: { response: { 200: Empty }, params: NameParams, body: PasswordChange } },
    async (request) => {
      const { name } = request.params;
      requireSelfOrAdmin(request, name);
      const u = userOr404(name);
      const { password, current } = request.body;
      if (!password) throw invalid('new password is missing');
      const admin = request.identity.has('ADMIN');
      // Non-admins prove who they are with the old password; admins may reset without it, but a given one is checked.
      if (!admin && current === undefined) throw invalid('current password is missing');
      if (current !== undefined && !(await users.checkPassword(u.name, current))) throw forbidden('Invalid current password');
      const weak = passwordProblem(password);
      if (weak) throw invalid(weak);
      await users.setPassword(name, password);
      return {};
    });

  app.get('/api/access/users/:name/settings', { config: { access: 'user' }, schema: { response: { 200: UserSettings }, params: NameParams } }, async (request) => {
    requireSelfOrAdmin(request, request.params.name);
    return userOr404(request.params.name).settings;
  });

  app.patch('/api/access/users/:name/settings', { config: { access: 'user' }, schema: { response: { 200: Empty }, params: NameParams, body: SettingsPatch } },
    async (request) => {
      requireSelfOrAdmin(request, request.params.name);
      const u = userOr404(request.params.name);
      await users.patchSettings(u.name, request.body);
      return {};
    });

  app.post('/api/access/users/:name/apikey', { config: { access: 'user' }, schema: { response: { 200: ApiKeyReply }, params: NameParams } }, async (request) => {
    requireSelfOrAdmin(request, request.params.name);
    userOr404(request.params.name);
    return { apikey: await users.generateUserKey(request.params.name) };
  });

  app.delete('/api/access/users/:name/apikey', { config: { access: 'user' }, schema: { response: { 200: Empty }, params: NameParams } }, async (request) => {
    requireSelfOrAdmin(request, request.params.name);
    userOr404(request.params.name);
    await users.deleteUserKey(request.params.name);
    return {};
  });

  // Legacy paths of older clients: 307 keeps method and body, the target route checks access again.
  const redirect = (request: FastifyRequest, reply: FastifyReply): void => {
    const target = request.url.replace(/^\/api\/users/, '/api/access/users');
    reply.code(307).header('Location', target).type('text/html; charset=utf-8')
      .send(`<!doctype html>\n<html lang=en>\n<title>Redirecting...</title>\n<h1>Redirecting...</h1>\n<p>You should be redirected automatically to the target URL: <a href="${encodeURI(target)}">${encodeURI(target)}</a>.</p>\n`);
  };
  const legacy: Array<[string, Array<'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'>]> = [
    ['/api/users', ['GET', 'POST']],
    ['/api/users/:name', ['GET', 'PUT', 'DELETE']],
    ['/api/users/:name/password', ['PUT']],
    ['/api/users/:name/settings', ['GET', 'PATCH']],
    ['/api/users/:name/apikey', ['POST', 'DELETE']],
  ];
  for (const [url, methods] of legacy) {
    app.route({ method: methods, url, config: { access: 'user' }, schema: { response: { 307: HtmlText } }, handler: redirect });
  }
}
