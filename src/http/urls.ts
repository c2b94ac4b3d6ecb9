// Absolute URLs for responses (`Location`, `refs`, `resource`), honouring the reverse-proxy headers OctoPrint honours.
import type { FastifyRequest } from 'fastify';
import { withoutTrailing } from '../core/text.ts';

function first(h: string | string[] | undefined): string | undefined {
  const v = Array.isArray(h) ? h[0] : h;
  return v ? v.split(',')[0].trim() : undefined;
}

/** The external base URL of this request, without a trailing slash (e.g. `http://host:5000/prefix`). */
export function externalBase(request: FastifyRequest): string {
  const h = request.headers;
  const scheme = first(h['x-forwarded-proto']) ?? first(h['x-scheme']) ?? request.protocol;
  let host = first(h['x-forwarded-host']) ?? first(h.host) ?? 'localhost';
  const fwdServer = first(h['x-forwarded-server']);
  const fwdPort = first(h['x-forwarded-port']);
  if (!h['x-forwarded-host'] && fwdServer) host = fwdServer;
  if (fwdPort && !host.includes(':')) host = `${host}:${fwdPort}`;
  return `${scheme}://${host}${externalPrefix(request)}`;
}

/** The path prefix a reverse proxy mounts this server under (X-Script-Name, X-Forwarded-Prefix), '' or `/p`. */
export function externalPrefix(request: FastifyRequest): string {
  const h = request.headers;
  return withoutTrailing(first(h['x-script-name']) ?? first(h['x-forwarded-prefix']) ?? '', '/');
}

/** `externalBase` + a path that starts with `/`; path segments are percent-encoded by the caller. */
export function absoluteUrl(request: FastifyRequest, path: string): string {
  return externalBase(request) + path;
}
