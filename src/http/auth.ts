// Request authentication and authorisation: API key / session cookie → identity, CSRF double-submit, per-route access.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomBytes } from 'node:crypto';
import type { AccessService } from '../access/access-service.ts';
import type { ConfigStore } from '../config/config-store.ts';
import type { RouteAccess, GantryApp } from './types.ts';
import { sendError } from './error-mapper.ts';
import { safeEqual } from '../access/keys.ts';

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

/** Sets the CSRF cookie if the browser has none yet (UI page, login page). */
export function issueCsrfCookie(request: FastifyRequest, reply: FastifyReply): void {
  const name = cookieName(request, 'csrf_token');
  if (request.cookies[name]) return;
  reply.setCookie(name, newCsrfToken(), { path: '/', sameSite: 'lax', httpOnly: false });
}

export function registerAuth(app: GantryApp, deps: { access: AccessService; config: ConfigStore }): void {
  const { access, config } = deps;
  app.decorateRequest('identity', null as never);
  app.decorateRequest('authVia', 'none');
  app.decorateRequest('invalidApiKey', false);

  // Every route must say who may call it; a forgotten declaration is a start-up error, not an open door.
  app.addHook('onRoute', (route) => {
    const url = route.url ?? route.path;
    if (!route.config?.access && (url.startsWith('/api') || url.startsWith('/plugin') || url.startsWith('/apps') || url.startsWith('/downloads'))) {
      throw new Error(`route ${String(route.method)} ${url} declares no config.access`);
    }
  });

  app.addHook('onRequest', async (request) => {
    const key = apiKeyOf(request);
    if (key !== undefined) {
      const id = access.identityForApiKey(key);
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
          request.identity = access.enabled ? id : id;
          request.authVia = 'session';
          return;
        }
      }
    }
    request.identity = access.anonymous();
  });

  app.addHook('preHandler', async (request, reply) => {
    const rule: RouteAccess | undefined = request.routeOptions.config?.access;
    if (rule === undefined || rule === 'public') return;
    if (request.invalidApiKey) return sendError(reply, 403, 'Invalid API key');
    if (!csrfOk(request, config)) return sendError(reply, 400, 'CSRF validation failed');
    if (rule === 'anonymous') return;
    if (!access.enabled) return;
    if (rule === 'user') {
      if (request.identity.isAnonymous) return sendError(reply, 403);
      return;
    }
    const needed = Array.isArray(rule) ? rule : [rule];
    for (const p of needed) if (!request.identity.has(p)) return sendError(reply, 403);
  });
}

/** Double-submit check for cookie-authenticated state-changing requests; API-key callers and cookie-less callers skip it. */
function csrfOk(request: FastifyRequest, config: ConfigStore): boolean {
  if (SAFE_METHODS.has(request.method)) return true;
  if (!config.current.devel.enableCsrfProtection) return true;
  if (request.routeOptions.config?.csrfExempt) return true;
  if (request.authVia === 'apikey') return true;
  if (!request.cookies[cookieName(request, 'session')] && !request.cookies[cookieName(request, 'remember_token')]) return true;
  const cookie = request.cookies[cookieName(request, 'csrf_token')];
  const header = request.headers['x-csrf-token'];
  return typeof cookie === 'string' && cookie.length > 0 && typeof header === 'string' && safeEqual(cookie, header);
}
