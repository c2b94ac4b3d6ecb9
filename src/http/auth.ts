// Request authentication and authorisation: API key / session / remember-me cookie → identity, CSRF double-submit,
// per-route access (checked before the body is even parsed), and the cookies that carry a browser login.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import type { AccessService } from '../access/access-service.ts';
import type { ConfigStore } from '../config/config-store.ts';
import type { RouteAccess, GantryApp } from './types.ts';
import { sendError } from './error-mapper.ts';
import { SecretProbe, safeEqual } from '../access/keys.ts';
import { REMEMBER_DAYS } from '../access/remember.ts';

/** Cookie names carry the port so several instances on one host do not collide (`session_P5000`). */
export function cookieName(request: FastifyRequest, base: string): string {
  const port = request.socket.localPort ?? 5000;
  return `${base}_P${port}`;
}

export function apiKeyOf(request: FastifyRequest): string | undefined {
  const q = request.query as Record<string, unknown> | undefined;
  if (q && typeof q.apikey === 'string' && q.apikey) return q.apikey;
  const h = request.headers['x-api-key'];
  if (typeof h === 'string' && h) return h;
  const auth = request.headers.authorization;
  if (auth && /^Bearer\s+/i.test(auth)) return auth.replace(/^Bearer\s+/i, '').trim() || undefined;
  return undefined;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function newCsrfToken(): string {
  return randomBytes(24).toString('base64url');
}

/** Sets the CSRF cookie if the browser has none yet (UI page, login page, app key dialog). */
export function issueCsrfCookie(request: FastifyRequest, reply: FastifyReply): void {
  const name = cookieName(request, 'csrf_token');
  if (request.cookies[name]) return;
  reply.setCookie(name, newCsrfToken(), { path: '/', sameSite: 'lax', httpOnly: false });
}

type CookieOpts = { path: string; httpOnly: boolean; sameSite?: 'lax' | 'strict' | 'none'; secure: boolean };

function cookieOptions(config: ConfigStore, httpOnly: boolean): CookieOpts {
  const c = config.current.server.cookies;
  const opts: CookieOpts = { path: '/', httpOnly, secure: c.secure };
  if (c.samesite) opts.sameSite = c.samesite.toLowerCase() as 'lax' | 'strict' | 'none';
  return opts;
}

/** Cookies of a fresh browser login: the session, optionally remember-me, and the end of any logout marker. */
export function setLoginCookies(request: FastifyRequest, reply: FastifyReply, config: ConfigStore,
  sessionId: string, remember?: { token: string; expires: number }): void {
  reply.setCookie(cookieName(request, 'session'), sessionId, cookieOptions(config, true));
  if (remember) {
    reply.setCookie(cookieName(request, 'remember_token'), remember.token,
      { ...cookieOptions(config, true), maxAge: REMEMBER_DAYS * 86_400, expires: new Date(remember.expires * 1000) });
  }
  reply.setCookie(cookieName(request, 'active_logout'), '', { ...cookieOptions(config, false), maxAge: 0 });
  reply.setCookie('active_logout', '', { ...cookieOptions(config, false), maxAge: 0 });
  reply.header('Vary', 'Cookie');
}

/** Cookies after logout: session and remember-me gone, and a marker that stops local autologin. */
export function setLogoutCookies(request: FastifyRequest, reply: FastifyReply, config: ConfigStore): void {
  reply.setCookie(cookieName(request, 'session'), '', { ...cookieOptions(config, true), maxAge: 0 });
  reply.setCookie(cookieName(request, 'remember_token'), '', { ...cookieOptions(config, true), maxAge: 0 });
  reply.setCookie(cookieName(request, 'active_logout'), 'true', cookieOptions(config, false));
  reply.header('Vary', 'Cookie');
}

export interface RouteInfo { method: string; url: string; access: RouteAccess | undefined }

const routeTables = new WeakMap<object, RouteInfo[]>();

/** Every route registered on the app with its declared access (tests walk it to prove nothing is left open). */
export function registeredRoutes(app: GantryApp): readonly RouteInfo[] {
  return routeTables.get(app) ?? [];
}

export function registerAuth(app: GantryApp, deps: { access: AccessService; config: ConfigStore }): void {
  const { access, config } = deps;
  const table: RouteInfo[] = [];
  routeTables.set(app, table);
  app.decorateRequest('identity', null as never);
  app.decorateRequest('authVia', 'none');
  app.decorateRequest('invalidApiKey', false);

  // Every route must say who may call it; a forgotten declaration is a start-up error, not an open door.
  app.addHook('onRoute', (route) => {
    const url = route.url ?? route.path;
    if (!route.config?.access && (url.startsWith('/api') || url.startsWith('/plugin') || url.startsWith('/apps') || url.startsWith('/downloads'))) {
      throw new Error(`route ${String(route.method)} ${url} declares no config.access`);
    }
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) table.push({ method: String(m), url, access: route.config?.access });
  });

  /** Identity and access rule of a request; false when it was answered (refused). */
  const authorise = (request: FastifyRequest, reply: FastifyReply): boolean => {
    if (request.authVia !== 'basic') resolveIdentity(request, reply, access, config);
    // Checked here, before body parsing and validation, so a caller without rights learns nothing about the body rules.
    const rule: RouteAccess | undefined = request.routeOptions.config?.access;
    if (rule === undefined || rule === 'public') return true;
    if (request.invalidApiKey) return refuse(reply, 403, 'Invalid API key');
    if (!csrfOk(request, config)) return refuse(reply, 400, 'CSRF validation failed');
    if (rule === 'anonymous') return true;
    if (!access.enabled) return true;
    if (rule === 'user') return request.identity.isAnonymous ? refuse(reply, 403) : true;
    const needed = Array.isArray(rule) ? rule : [rule];
    for (const p of needed) if (!request.identity.has(p)) return refuse(reply, 403);
    return true;
  };

  // A plain hook: only trusted Basic credentials need the (async) password check; every other request passes without
  // a promise of its own.
  app.addHook('onRequest', (request, reply, done) => {
    if (!basicApplies(request, access, config)) {
      if (authorise(request, reply)) done();
      return;
    }
    resolveBasicAuth(request, access, config).then((ok) => {
      if (!ok) refuse(reply, 403, 'Invalid credentials in Basic Authorization header');
      else if (authorise(request, reply)) done();
    }, done);
  });
}

function refuse(reply: FastifyReply, status: number, message?: string): false {
  sendError(reply, status, message);
  return false;
}

function basicApplies(request: FastifyRequest, access: AccessService, config: ConfigStore): boolean {
  const auth = request.headers.authorization;
  return auth !== undefined && config.current.accessControl.trustBasicAuthentication && access.enabled && /^Basic\s+/i.test(auth);
}

/**
 * HTTP Basic credentials, honoured only when the admin trusts them (e.g. a reverse proxy that authenticates users).
 * Returns false for credentials that must be refused; sets the identity when they are accepted.
 */
async function resolveBasicAuth(request: FastifyRequest, access: AccessService, config: ConfigStore): Promise<boolean> {
  const ac = config.current.accessControl;
  const auth = request.headers.authorization;
  if (!auth || !basicApplies(request, access, config)) return true;
  const decoded = Buffer.from(auth.replace(/^Basic\s+/i, '').trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) return false;
  const name = decoded.slice(0, colon);
  const user = ac.checkBasicAuthenticationPassword
    ? await access.checkCredentials(name, decoded.slice(colon + 1))
    : access.users.getUser(name);
  if (!user?.active) return false;
  request.identity = access.identityForUser(user, 'basic_auth');
  request.authVia = 'basic';
  return true;
}

/**
 * The caller's key, hashed once per connection: a poller on a kept-alive connection sends the same key with every
 * request, and hashing it was a tenth of a cheap route's CPU. Only the hash is reused — the comparison against the
 * stored keys runs every time, so a revoked key stops at once — and the cache compares what this connection sent
 * with what the same connection sent before, which tells a caller nothing it did not know.
 */
const probes = new WeakMap<object, SecretProbe>();
function probeOf(request: FastifyRequest, key: string): SecretProbe {
  const socket = request.raw.socket as object | undefined;
  if (!socket) return new SecretProbe(key);
  const last = probes.get(socket);
  if (last?.value === key) return last;
  const probe = new SecretProbe(key);
  probes.set(socket, probe);
  return probe;
}

function resolveIdentity(request: FastifyRequest, reply: FastifyReply, access: AccessService, config: ConfigStore): void {
  const key = apiKeyOf(request);
  if (key !== undefined) {
    const id = access.identityForApiKey(probeOf(request, key));
    if (id) {
      request.identity = id;
      request.authVia = 'apikey';
      return;
    }
    if (access.enabled) request.invalidApiKey = true;
  }
  if (!request.invalidApiKey) {
    const sid = request.cookies[cookieName(request, 'session')];
    if (sid) {
      const id = access.identityForSession(sid);
      if (id) {
        request.identity = id;
        request.authVia = 'session';
        return;
      }
    }
    // A remembered browser whose session is gone (restart, expiry) is logged back in with a new session.
    const remembered = request.cookies[cookieName(request, 'remember_token')];
    if (remembered && access.enabled) {
      const user = access.userForRememberToken(remembered);
      if (user) {
        const session = access.sessions.create(user.name, 'remember_me');
        reply.setCookie(cookieName(request, 'session'), session.id, cookieOptions(config, true));
        reply.header('Vary', 'Cookie');
        request.identity = access.identityForUser(user, 'remember_me', session.id);
        request.authVia = 'session';
        return;
      }
    }
    const proxied = remoteUser(request, access, config);
    if (proxied) {
      request.identity = proxied;
      request.authVia = 'basic';
      return;
    }
  }
  request.identity = access.anonymous();
}

/** A user named by a trusted reverse proxy's header (`REMOTE_USER` also matches `Remote-User`). */
function remoteUser(request: FastifyRequest, access: AccessService, config: ConfigStore): ReturnType<AccessService['identityForUser']> | undefined {
  const ac = config.current.accessControl;
  if (!ac.trustRemoteUser || !access.enabled) return undefined;
  const header = ac.remoteUserHeader.toLowerCase();
  const raw = request.headers[header] ?? request.headers[header.replace(/_/g, '-')];
  const name = Array.isArray(raw) ? raw[0] : raw;
  const user = name ? access.users.getUser(name.trim()) : undefined;
  return user?.active ? access.identityForUser(user, 'remote_user') : undefined;
}

const sameHost = (url: string, request: FastifyRequest): boolean => {
  try {
    const host = new URL(url).host;
    const forwarded = request.headers['x-forwarded-host'];
    const proxied = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0].trim();
    return host === request.headers.host || (proxied !== undefined && host === proxied);
  } catch {
    return false; // `Origin: null` (sandboxed frames, privacy redirects) and garbage
  }
};

/**
 * Whether a browser sent this request on behalf of another site: `Sec-Fetch-Site`, else `Origin`, else `Referer`.
 * Programs (curl, farm managers, slicers) send none of these and are never taken for another site.
 */
export function fromOtherSite(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site === 'same-origin' || site === 'none') return false;
  if (site === 'cross-site' || site === 'same-site') return true;
  const origin = request.headers.origin;
  if (origin !== undefined) return !sameHost(origin, request);
  const referer = request.headers.referer;
  if (referer !== undefined) return !sameHost(referer, request);
  return false;
}

/** Double-submit check for cookie-authenticated state-changing requests; API-key callers and cookie-less callers skip it. */
function csrfOk(request: FastifyRequest, config: ConfigStore): boolean {
  if (SAFE_METHODS.has(request.method)) return true;
  if (!config.current.devel.enableCsrfProtection) return true;
  if (request.routeOptions.config?.csrfExempt) return true;
  if (request.authVia === 'apikey' || request.authVia === 'basic') return true;
  if (!request.cookies[cookieName(request, 'session')] && !request.cookies[cookieName(request, 'remember_token')]) return true;
  const cookie = request.cookies[cookieName(request, 'csrf_token')];
  const header = request.headers['x-csrf-token'];
  return typeof cookie === 'string' && cookie.length > 0 && typeof header === 'string' && safeEqual(cookie, header);
}
