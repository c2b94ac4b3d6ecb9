// /api/login, /api/logout, /api/currentuser: browser and API-key logins, the sessions they create, who is calling.
import { Type } from '../../config/typebox.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { GantryApp } from '../types.ts';
import type { AccessService } from '../../access/access-service.ts';
import type { ConfigStore } from '../../config/config-store.ts';
import type { EventBus } from '../../core/event-bus.ts';
import type { Identity, LoginMechanism } from '../../access/identity.ts';
import { DomainError, ErrorCodes } from '../../core/errors.ts';
import { sendError } from '../error-mapper.ts';
import { cookieName, fromOtherSite, setLoginCookies, setLogoutCookies } from '../auth.ts';
import { identityRecord, effectivePermissionKeys, IdentitySchema } from '../../octoprint/access-records.ts';
import { NoContent, Nullable } from '../../octoprint/schema-kit.ts';
import { truthy } from '../../core/values.ts';
import { USERNAME_PATTERN } from '../../access/user-records.ts';

const LoginBody = Type.Object({
  user: Type.Optional(Type.String()),
  pass: Type.Optional(Type.String()),
  // Form posts send strings ("true", "on"); JSON clients send booleans.
  remember: Type.Optional(Type.Union([Type.Boolean(), Type.String()])),
  passive: Type.Optional(Type.Union([Type.Boolean(), Type.String(), Type.Number()])),
}, { additionalProperties: true });

/** Who logged in (a passive login of nobody answers only `needs` and `_is_external_client`). */
const LoginReply = Type.Object({
  ...IdentitySchema.properties,
  session: Type.Optional(Type.String()),
  _is_external_client: Type.Boolean(),
  _login_mechanism: Type.Optional(Type.String()),
});
const CurrentUserReply = Type.Object({ name: Nullable('string'), permissions: Type.Array(Type.String()), groups: Type.Array(Type.String()) });

// Login forms may also send a checkbox's `on` or a JSON 1.
const loginFlag = (v: unknown): boolean => truthy(v) || v === 1 || (typeof v === 'string' && v.toLowerCase() === 'on');

/** Login mechanism names as clients know them. */
const WIRE_MECHANISM: Partial<Record<LoginMechanism, string>> = {
  http: 'http', apikey: 'apikey', appkey: 'apikey', app_session: 'apikey', remember_me: 'remember_me', autologin: 'autologin', session: 'http', basic_auth: 'basic_auth', remote_user: 'remote_user',
};

export function registerLoginRoutes(app: GantryApp, deps: { access: AccessService; config: ConfigStore; events: EventBus }): void {
  const { access, config, events } = deps;

  const loginResponse = (request: FastifyRequest, id: Identity, session: string, mechanism: LoginMechanism) => ({
    ...identityRecord(access.users, id),
    session,
    _is_external_client: access.isExternalClient(request.ip),
    ...(WIRE_MECHANISM[mechanism] ? { _login_mechanism: WIRE_MECHANISM[mechanism] } : {}),
  });

  const passive = (request: FastifyRequest, reply: FastifyReply) => {
    const id = request.identity;
    // A passive login is a login too (docs/reference/events.md): farm managers that log in with their key each time
    // are announced.
    if (!id.isAnonymous && request.authVia === 'session' && id.sessionId) {
      if (id.name !== undefined) events.emit('UserLoggedIn', { username: id.name });
      return loginResponse(request, id, id.sessionId, id.loginMechanism);
    }
    if (!id.isAnonymous && (request.authVia === 'apikey' || request.authVia === 'basic' || !access.enabled) && id.name !== undefined) {
      // API-key clients log in passively to get a session for the push channel's `auth` message; no cookie is set.
      const session = access.sessions.create(id.name, id.loginMechanism);
      events.emit('UserLoggedIn', { username: id.name });
      return loginResponse(request, access.identityForSession(session.id) ?? id, session.id, id.loginMechanism);
    }
    if (!request.cookies[cookieName(request, 'active_logout')]) {
      const auto = access.autologinUser(request.ip);
      if (auto) {
        const session = access.sessions.create(auto.name, 'autologin');
        setLoginCookies(request, reply, config, session.id);
        events.emit('UserLoggedIn', { username: auto.name });
        return loginResponse(request, access.identityForUser(auto, 'autologin', session.id), session.id, 'autologin');
      }
    }
    return { ...identityRecord(access.users, id), _is_external_client: access.isExternalClient(request.ip) };
  };

  app.register(async (plain) => {
    const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
    // Browsers' login forms post url-encoded values; the parser stays inside this scope.
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });

    scope.post('/api/login', { config: { access: 'anonymous' }, schema: { body: LoginBody, response: { 200: LoginReply } } }, async (request, reply) => {
      reply.header('Vary', 'Cookie');
      // Login CSRF: another site must not log the visitor's browser into an account of its choosing. A form post needs
      // no CORS preflight, so a cross-site one is refused here; a cross-origin JSON login has passed a preflight, which
      // only api.allowCrossOrigin lets through. API-key callers are not cookie sessions and are exempt.
      if (config.current.devel.enableCsrfProtection && request.authVia !== 'apikey' && request.authVia !== 'basic' && fromOtherSite(request)
        && !(config.current.api.allowCrossOrigin && /^application\/json\b/i.test(request.headers['content-type'] ?? ''))) {
        request.log.warn({ origin: request.headers.origin, referer: request.headers.referer }, 'cross-site login refused');
        return sendError(reply, 400, 'CSRF validation failed');
      }
      const body = request.body ?? {};
      if (body.user !== undefined && body.pass !== undefined) {
        const address = request.ip;
        const limited = config.current.devel.enableRateLimiter;
        // Counted before the slow password check, per address and per user name, so parallel attempts cannot all
        // pass a check that only later failures would have closed. Names no user can have are counted by address only.
        const keys = [`address:${address}`, ...(USERNAME_PATTERN.test(body.user) ? [`user:${body.user}`] : [])];
        const attempt = limited ? access.loginThrottle.begin(keys) : undefined;
        if (limited && !attempt) {
          // Tells people (and the web UI) how long to wait, not just "later".
          reply.header('Retry-After', String(Math.max(1, ...keys.map((k) => access.loginThrottle.retryAfter(k)))));
          throw new DomainError(ErrorCodes.TOO_MANY_REQUESTS, 'You have made too many failed login attempts. Please try again later.');
        }
        const user = await access.checkCredentials(body.user, body.pass);
        if (!user) return sendError(reply, 403);
        attempt?.succeeded();
        const old = request.cookies[cookieName(request, 'session')];
        if (old) access.sessions.delete(old, 'logout');
        const session = access.sessions.create(user.name, 'http');
        setLoginCookies(request, reply, config, session.id, loginFlag(body.remember) ? access.rememberToken(user) : undefined);
        events.emit('UserLoggedIn', { username: user.name });
        request.log.info({ user: user.name, address }, 'user logged in');
        return loginResponse(request, access.identityForUser(user, 'http', session.id), session.id, 'http');
      }
      if (body.passive !== undefined && body.passive !== false) return passive(request, reply);
      return sendError(reply, 400, 'Neither user and pass attributes nor passive flag present');
    });
  });

  app.post('/api/logout', { config: { access: 'anonymous' }, schema: { response: { 204: NoContent } } }, async (request, reply) => {
    const id = request.identity;
    const sid = request.cookies[cookieName(request, 'session')];
    if (sid) access.sessions.delete(sid, 'logout');
    setLogoutCookies(request, reply, config);
    if (request.authVia === 'session' && id.name !== undefined) events.emit('UserLoggedOut', { username: id.name });
    return reply.code(204).send();
  });

  app.get('/api/currentuser', { config: { access: 'anonymous' }, schema: { response: { 200: CurrentUserReply } } }, async (request) => {
    const id = request.identity;
    return { name: id.name ?? null, permissions: effectivePermissionKeys(id), groups: [...id.groups] };
  });
}
