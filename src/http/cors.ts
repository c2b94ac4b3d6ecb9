// Cross-origin requests (the `api.allowCrossOrigin` setting): every answer varies on Origin; while the setting is on,
// the caller's origin is reflected and preflights are answered before auth; never with credentials.
import type { FastifyReply } from 'fastify';
import type { GantryApp } from './types.ts';

const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
/** Seconds a browser may keep a preflight's answer. */
const PREFLIGHT_MAX_AGE = '10';

/** Adds `field` to the Vary header unless it (or `*`) is already there. */
function varyOn(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('vary');
  if (current === undefined || current === '') {
    reply.header('Vary', field);
    return;
  }
  const text = Array.isArray(current) ? current.join(', ') : String(current);
  const names = text.split(',').map((s) => s.trim().toLowerCase());
  if (!names.includes('*') && !names.includes(field.toLowerCase())) reply.header('Vary', `${text}, ${field}`);
}

/**
 * One plain onRequest hook, the setting read per request (a settings change applies at once). @fastify/cors did the
 * same, but with options rebuilt and copied and the route's options object built twice on every request: a
 * fifteenth of a cheap route's time, with CORS off as it mostly is.
 */
export function registerCors(app: GantryApp, allowCrossOrigin: () => boolean): void {
  app.addHook('onRequest', (request, reply, done) => {
    // Answers differ by Origin whenever the setting may be on, so caches must keep them apart.
    varyOn(reply, 'Origin');
    if (!allowCrossOrigin()) {
      done();
      return;
    }
    const origin = request.headers.origin;
    if (origin) reply.header('Access-Control-Allow-Origin', origin);
    if (request.raw.method !== 'OPTIONS') {
      done();
      return;
    }
    // A preflight names the origin and the method it asks for; anything else is not one.
    if (!origin || !request.headers['access-control-request-method']) {
      reply.code(400).type('text/plain').send('Invalid Preflight Request');
      return;
    }
    reply.header('Access-Control-Allow-Methods', ALLOWED_METHODS);
    varyOn(reply, 'Access-Control-Request-Headers');
    const asked = request.headers['access-control-request-headers'];
    if (asked !== undefined) reply.header('Access-Control-Allow-Headers', asked);
    reply.header('Access-Control-Max-Age', PREFLIGHT_MAX_AGE);
    // Safari waits for a body unless a 204 says it has none.
    reply.code(204).header('Content-Length', '0').send();
  });
  // OPTIONS reaches every path (preflights are answered in the hook above); otherwise it is handled like an unrouted
  // request: Flask-style automatic OPTIONS or 404 (app.ts).
  app.options('*', (_request, reply) => reply.callNotFound());
}
