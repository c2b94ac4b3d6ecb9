// The API over MQTT, HTTP side: runs a call through the app's own routes with app.inject (same validation, same
// permission checks, no second implementation), and lets MQTT commands act as a configured user.
import { randomBytes } from 'node:crypto';
import type { HTTPMethods } from 'fastify';
import type { AccessService } from '../access/access-service.ts';
import { safeEqual } from '../access/keys.ts';
import { normaliseApiPath } from '../core/api-path.ts';
import { jsonBoundsViolation } from '../core/bounded-json.ts';
import type { ApiDispatch, ApiResult } from '../mqtt/types.ts';
import type { GantryApp } from './types.ts';

/**
 * MQTT requests come from the broker, not from a browser on the local network: a documentation address keeps them
 * out of local-network privileges (autologin) and counts their failed logins apart.
 */
const MQTT_REMOTE_ADDRESS = '192.0.2.1';

/** Fastify's own default, for an app built without one. */
const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * Far deeper than any route takes (settings stop at 32), shallow enough for JSON.stringify's recursion: a body
 * nested 100,000 levels deep made it throw, and the request got a 500.
 */
export const MAX_BODY_DEPTH = 1000;

/**
 * The checks HTTP makes on a body before a route sees it, for a body that arrives already parsed: larger than the
 * app's body limit is HTTP's own 413 (measured without serialising it), and then a depth no route can want is a 400.
 * Both walks are iterative (src/core/bounded-json.ts), so hostile nesting costs no stack.
 */
function bodyRefusal(body: unknown, bodyLimit: number): ApiResult | undefined {
  if (jsonBoundsViolation(body, { maxDepth: Number.POSITIVE_INFINITY, maxBytes: bodyLimit })) {
    return { status: 413, body: { error: 'Request body too large' } };
  }
  const tooDeep = jsonBoundsViolation(body, { maxDepth: MAX_BODY_DEPTH, maxBytes: Number.POSITIVE_INFINITY });
  return tooDeep ? { status: 400, body: { error: `The JSON body is ${tooDeep}` } } : undefined;
}

export function createInjectDispatch(app: GantryApp, access: AccessService): ApiDispatch {
  // Acting as a user goes through a per-process secret key that never leaves memory, so the normal API-key path
  // resolves the user and their current permissions (a deactivated or deleted user is refused like any key).
  const prefix = `mqtt-as-user:${randomBytes(32).toString('base64url')}:`;
  access.registerKeyResolver((key) => (key.length > prefix.length && safeEqual(key.slice(0, prefix.length), prefix)
    ? { user: key.slice(prefix.length), mechanism: 'apikey' } : undefined));

  return async (call) => {
    // The bridge checks this too; the dispatch is what reaches the routes, so it never runs a path outside /api/.
    const url = normaliseApiPath(call.path);
    if (url === undefined) return { status: 400, body: { error: 'path must be an API path under /api/ (no dot segments)' } };
    const headers: Record<string, string> = {};
    const key = call.asUser !== undefined ? prefix + call.asUser : call.apikey;
    if (key) headers['x-api-key'] = key;
    let payload: string | undefined;
    if (call.body !== undefined && call.method !== 'GET' && call.method !== 'HEAD') {
      const refused = bodyRefusal(call.body, app.initialConfig.bodyLimit ?? DEFAULT_BODY_LIMIT);
      if (refused) return refused;
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(call.body);
    }
    const res = await app.inject({ method: call.method as HTTPMethods, url, headers, payload, remoteAddress: MQTT_REMOTE_ADDRESS });
    const type = String(res.headers['content-type'] ?? '');
    if (res.rawPayload.length === 0) return { status: res.statusCode, body: null };
    if (type.includes('json')) {
      try {
        return { status: res.statusCode, body: JSON.parse(res.payload) as unknown };
      } catch {
        return { status: res.statusCode, body: res.payload };
      }
    }
    if (type.startsWith('text/')) return { status: res.statusCode, body: res.payload };
    return { status: res.statusCode, body: res.rawPayload.toString('base64'), encoding: 'base64' };
  };
}
